"""On which printed page of the exported brief each citation stands, and the DOCX with its table of authorities.

The pages are LibreOffice's, as it lays the DOCX export out with the fonts installed for Word's metrics (Liberation
and Carlito stand in for Times New Roman, Arial and Calibri at the same widths), through the conversion exhibits
use (:func:`matters.exhibits.ingest.convert.office_to_pdf`: inside the bubblewrap sandbox, never outside it). Each
citation's start is a bookmark of the DOCX (:mod:`matters.drafts.export_docx`); LibreOffice's PDF export writes
bookmarks as named destinations ("ExportBookmarksToPDFDestination"), and each destination names its page: no
text of the PDF is searched, so a citation written twice, or an ``Id.`` on every page, is placed exactly.

The table stands before the brief in a section of its own, numbered i, ii, ...; the brief starts a new section on
a new page, numbered from 1 (how briefs are numbered, and how Word's own table-of-authorities field is used).
So the table's length cannot move the brief's pages: the brief is laid out without the table, the pages are
read, the table is put in, and the result is laid out again and each citation checked to be on the page the table
gives it, counting from the brief's first page. Were one moved (a font missing between the two runs), the table
is rebuilt with the new pages and checked again, at most :data:`MAX_LAYOUTS` times, and the export refused if it
still moves.
"""

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pymupdf
from django.conf import settings
from django.core.exceptions import ValidationError

from matters.exhibits.ingest.convert import ConversionRefused, office_to_pdf

from .export_docx import BODY_BOOKMARK, CITE_BOOKMARK, docx_bytes
from .toa import TableOfAuthorities

MAX_LAYOUTS = 3
_BOOKMARKS_AS_DESTINATIONS = '{"ExportBookmarksToPDFDestination":{"type":"boolean","value":"true"}}'


@dataclass(frozen=True)
class Layout:
    """Where LibreOffice printed each bookmark of a DOCX: ``pages`` maps its name to the page's index in the PDF
    (0 for the first), ``page_count`` the PDF's pages, ``pdf`` the PDF itself."""

    pages: dict[str, int]
    page_count: int
    pdf: bytes


def layout(content: bytes) -> Layout:
    """Convert the DOCX ``content`` to PDF with LibreOffice (sandboxed) and read where each bookmark landed.

    Raises ValidationError, written for an attorney, when the conversion is refused (LibreOffice missing, the
    sandbox unable to start, a timeout)."""
    with tempfile.TemporaryDirectory(prefix="lawdesk-toa-") as work:
        source, target = Path(work) / "brief.docx", Path(work) / "brief.pdf"
        source.write_bytes(content)
        try:
            office_to_pdf(source, target, suffix=".docx", description="brief's Word export",
                          hidden=(str(settings.DATA_DIR),), pdf_options=_BOOKMARKS_AS_DESTINATIONS)
        except ConversionRefused as refused:
            raise ValidationError(f"The table of authorities needs the brief's printed pages, and {refused}") \
                from refused
        pdf = target.read_bytes()
    with pymupdf.open("pdf", pdf) as document:
        names = document.resolve_names()
        return Layout({name: where["page"] for name, where in names.items() if where.get("page", -1) >= 0},
                      document.page_count, pdf)


def _printed(found: Layout, count: int) -> dict[int, int]:
    """Mark number -> the brief's page number as printed (its first page is 1); marks not printed are left out."""
    first = found.pages.get(BODY_BOOKMARK, 0)
    return {n: found.pages[f"{CITE_BOOKMARK}{n}"] - first + 1 for n in range(count)
            if f"{CITE_BOOKMARK}{n}" in found.pages}


def _set_pages(table: TableOfAuthorities, positions: list[int], printed: dict[int, int]) -> None:
    mark_of = {position: n for n, position in enumerate(positions)}
    missing = [position for position in positions if mark_of[position] not in printed]
    if missing:
        names = sorted({e.name for e in table.entries for p in e.positions if p in missing})
        raise ValidationError(
            "The table of authorities cannot give pages for " + "; ".join(names) + ": the Word export prints "
            "no text where the draft cites them (inside a table or a link's address). Write those citations in "
            "the text, then export again.")
    for entry in table.entries:
        entry.pages = sorted({printed[mark_of[p]] for p in entry.positions})


def toa_paginate(table: TableOfAuthorities, *, text: str, title: str, footer: str) -> None:
    """Set each entry's ``pages`` to the pages of the brief, as the DOCX export prints it, where it is cited.
    One LibreOffice conversion; the table must be buildable (``table.ok``)."""
    positions = table.positions
    marks = [(position, n) for n, position in enumerate(positions)]
    found = layout(docx_bytes(text=text, title=title, footer=footer, marks=marks))
    _set_pages(table, positions, _printed(found, len(positions)))


def docx_with_table(table: TableOfAuthorities, *, text: str, title: str, footer: str) -> bytes:
    """The DOCX export of ``text`` with its table of authorities, each page as printed: the brief laid out alone,
    the table put in, and the whole laid out again until every citation is on the page the table says (see the
    module docstring). Raises ValidationError when the pages cannot be had or do not settle."""
    toa_paginate(table, text=text, title=title, footer=footer)
    positions = table.positions
    marks = [(position, n) for n, position in enumerate(positions)]
    for _ in range(MAX_LAYOUTS):
        content = docx_bytes(text=text, title=title, footer=footer, marks=marks,
                             authorities=[(heading, [(e.runs, e.pages_text()) for e in entries])
                                          for heading, entries in table.sections()])
        before = [list(e.pages) for e in table.entries]
        _set_pages(table, positions, _printed(layout(content), len(positions)))
        if [list(e.pages) for e in table.entries] == before:
            return content
    raise ValidationError("The table of authorities moved the brief's pages in each of "
                          f"{MAX_LAYOUTS} layouts; the export was not made. Tell the operator (a font may be "
                          "missing for LibreOffice).")
