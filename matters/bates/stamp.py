"""Put Bates numbers and confidentiality designations on pages, upright where a viewer shows them.

Positions are chosen on the page as displayed: PyMuPDF's ``page.rect`` is the visible area (the CropBox, turned
by /Rotate), and its insert methods take points on the unrotated page, so a visual point goes through
``page.derotation_matrix`` and the text is turned by the page's rotation to read upright. PyMuPDF wraps the
page's existing content in q/Q before adding ours, so a scaling matrix the original content leaves active (a
``cm`` with no q/Q around it) cannot move or shrink the stamp. The font is base-14 Helvetica: nothing is
embedded, and the stamp is real text, so the stamped PDF is searchable for its numbers.
"""

from dataclasses import dataclass

import pymupdf

FONT = "helv"
FONT_SIZE = 9
MARGIN_PT = 18  # a quarter inch from the visible edge
COVER_FONT_SIZE = 40


@dataclass(frozen=True)
class StampSpec:
    """Where the Bates number goes (``top``/``bottom`` and ``left``/``center``/``right``); the
    confidentiality designation goes on the other side of the same edge."""

    vertical: str = "bottom"
    horizontal: str = "right"

    @classmethod
    def from_position(cls, position: str) -> "StampSpec":
        """``position`` like ``bottom-right``. Raises ValueError for anything else."""
        vertical, _, horizontal = position.partition("-")
        if vertical not in ("top", "bottom") or horizontal not in ("left", "center", "right"):
            raise ValueError(f"not a stamp position: {position!r}")
        return cls(vertical, horizontal)

    @property
    def opposite(self) -> str:
        return {"right": "left", "left": "right", "center": "left"}[self.horizontal]


def visual_origin(page: pymupdf.Page, text: str, vertical: str, horizontal: str, fontsize: float = FONT_SIZE):
    """Return the baseline start of ``text`` on the displayed page (top-left origin, y down), inside the margin."""
    visible = page.rect
    width = pymupdf.get_text_length(text, fontname=FONT, fontsize=fontsize)
    x = {
        "left": visible.x0 + MARGIN_PT,
        "center": visible.x0 + (visible.width - width) / 2,
        "right": visible.x1 - MARGIN_PT - width,
    }[horizontal]
    y = visible.y0 + MARGIN_PT + fontsize if vertical == "top" else visible.y1 - MARGIN_PT
    return pymupdf.Point(x, y)


def put_text(page: pymupdf.Page, text: str, vertical: str, horizontal: str, fontsize: float = FONT_SIZE) -> None:
    """Write ``text`` upright at a visual position of ``page``."""
    point = visual_origin(page, text, vertical, horizontal, fontsize) * page.derotation_matrix
    page.insert_text(point, text, fontname=FONT, fontsize=fontsize, rotate=page.rotation, color=(0, 0, 0))


def stamp_page(page: pymupdf.Page, bates: str, spec: StampSpec, confidentiality: str = "") -> None:
    """Stamp one page with its Bates number and, if any, its confidentiality designation."""
    put_text(page, bates, spec.vertical, spec.horizontal)
    if confidentiality:
        put_text(page, confidentiality, spec.vertical, spec.opposite)


def cover_sheet(doc: pymupdf.Document, title: str, width: float = 612, height: float = 792) -> pymupdf.Page:
    """Append a Letter-size slip sheet with ``title`` (e.g. ``EXHIBIT 7``) centred; return its page."""
    page = doc.new_page(width=width, height=height)
    text_width = pymupdf.get_text_length(title, fontname=FONT, fontsize=COVER_FONT_SIZE)
    page.insert_text(((width - text_width) / 2, height / 2), title, fontname=FONT, fontsize=COVER_FONT_SIZE)
    return page
