"""HTML laid out as PDF pages by MuPDF's Story (no browser, nothing fetched): the drafts' PDF export, the
privilege log's PDF and an email's display pages share this one loop.

MuPDF's Story (MuPDF 1.28.5, PyMuPDF 2.0) sometimes loses text where a paragraph or a table crosses the foot of a
page: with some line heights it places the paragraph's next lines past the page's area, where they are never
drawn (a 50-paragraph draft in 12 pt serif at line-height 1.5 came out with 3,227 of its 5,000 words), or ends the
story pages early. Which line heights do it is not predictable; the same story laid out in an area shorter by a
fraction of a point comes out whole. So every layout is checked against its input: each letter and digit of the
HTML's text must be in the PDF's text layer as often (:func:`missing_characters`); the layout is tried again in an
area a little shorter (:data:`SHAVES_PT`) when one is missing, and :class:`LayoutLostText` is raised when none
comes out whole, so that nothing is ever exported or read as evidence with part of its text gone.
"""

import html as html_module
import io
import re
import unicodedata
from collections import Counter

import pymupdf

# How much shorter than the page's area each try lays the story out, in points. The first is not 0: an area whose
# height is an exact multiple of the line height is where the loss was seen most.
SHAVES_PT = (0.37, 0.91, 1.73, 2.9, 4.1)
_HIDDEN = re.compile(r"(?is)<(head|style|script|title)\b.*?</\1\s*>|<!--.*?-->")
_TAG = re.compile(r"<[^>]*>")


class LayoutLostText(RuntimeError):
    """MuPDF's layout left out text of the HTML at every try; ``missing`` is how many letters and digits."""

    def __init__(self, missing: int):
        self.missing = missing
        super().__init__(f"The page layout left out {missing} letter(s) and digit(s) of the text at every try; "
                         "nothing was written.")


def html_pdf(html: str, css: str, *, page: pymupdf.Rect, margin_pt: float,
             archive: pymupdf.Archive | None = None) -> bytes:
    """Lay ``html`` (styled by ``css``) out on pages of size ``page`` (points, e.g. ``pymupdf.paper_rect("letter")``)
    with ``margin_pt`` points on every side, as many pages as it takes; return the PDF's bytes. ``archive``: where
    the CSS's ``@font-face`` files are (a local folder; MuPDF reads nothing else). Raises :class:`LayoutLostText`
    when no try keeps every letter and digit of the HTML's text (see the module docstring)."""
    wanted = _characters(html_text(html))
    missing = 0
    for shave in SHAVES_PT:
        pdf = _layout(html, css, page=page, margin_pt=margin_pt, shave_pt=shave, archive=archive)
        with pymupdf.open("pdf", pdf) as document:
            laid_out = "".join(p.get_text() for p in document)
        missing = missing_characters(wanted, _characters(laid_out))
        if not missing:
            return pdf
    raise LayoutLostText(missing)


def html_text(html: str) -> str:
    """The text ``html`` shows: its markup less the head, styles, scripts and comments, tags taken out (each a
    space), entities read."""
    return html_module.unescape(_TAG.sub(" ", _HIDDEN.sub(" ", html)))


def missing_characters(wanted: Counter, found: Counter) -> int:
    """How many of the letters and digits counted in ``wanted`` are not in ``found`` (:func:`_characters`)."""
    return sum((wanted - found).values())


def _characters(text: str) -> Counter:
    # Letters and digits only, compatibility forms folded (a ligature "ﬁ" is "fi", an Arabic presentation form its
    # letter) and case folded (CSS may print a heading in capitals): punctuation, symbols and list bullets are
    # what a layout may add or a font may lack, and are not counted.
    folded = unicodedata.normalize("NFKC", text).casefold()
    return Counter(c for c in folded if unicodedata.category(c)[0] in "LN")


def _layout(html: str, css: str, *, page: pymupdf.Rect, margin_pt: float, shave_pt: float,
            archive: pymupdf.Archive | None) -> bytes:
    story = pymupdf.Story(html=html, user_css=css, archive=archive)
    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    where = page + (margin_pt, margin_pt, -margin_pt, -margin_pt - shave_pt)
    more = True
    while more:
        device = writer.begin_page(page)
        more, _filled = story.place(where)
        story.draw(device)
        writer.end_page()
    writer.close()
    return buffer.getvalue()
