"""Documents produced in their native format: a spreadsheet goes into ``NATIVES/`` as the file it is (its own
extension), behind one Bates-stamped slip sheet in the volume's page stream, with its cell text in ``TEXT/``.

This is the usual way to produce spreadsheets: Fed. R. Civ. P. 34(b)(2)(E)(ii) asks for a form in which the
information is ordinarily maintained or a reasonably usable one, and a spreadsheet's formulas, hidden cells and
structure are lost in an image; ESI protocols commonly list spreadsheets among the files produced natively behind
a slip sheet. A redacted spreadsheet cannot be produced natively
(the native would hold what was redacted): it is produced as its printed pages with the boxes applied, as any
other document; a withheld one is its placeholder page.
"""

import pymupdf

from matters.exhibits.sniff import SPREADSHEETS
from matters.models import Exhibit, Redaction

from .bates.stamp import FONT

SLIP_HEADING = "DOCUMENT PRODUCED IN NATIVE FORMAT"


def native_suffix(exhibit: Exhibit) -> str:
    """The suffix of the native file ``exhibit`` is produced as (``.xlsx``, ``.xls``, ``.ods``, ``.csv``), or ''
    when it is produced as stamped pages: it is not a spreadsheet, or a page of it is redacted."""
    content = exhibit.content
    if content.kind != Exhibit.Kind.WORKBOOK or content.mime_type not in SPREADSHEETS:
        return ""
    if Redaction.objects.filter(page__exhibit=content).exists():
        return ""
    return SPREADSHEETS[content.mime_type][0]


def slip_sheet(native_name: str) -> pymupdf.Document:
    """One Letter page saying the document is produced natively and where (``native_name``, its path in the
    volume); it takes the document's Bates number when stamped."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for y, text, size in ((360, SLIP_HEADING, 20), (400, native_name, 12)):
        width = pymupdf.get_text_length(text, fontname=FONT, fontsize=size)
        page.insert_text(((612 - width) / 2, y), text, fontname=FONT, fontsize=size)
    return doc
