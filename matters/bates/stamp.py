"""Put Bates numbers and confidentiality designations on pages, upright where a viewer shows them.

Positions are chosen on the page as displayed: PyMuPDF's ``page.rect`` is the visible area (the CropBox, turned
by /Rotate). A visual point maps to PDF user space through ``page.derotation_matrix`` and the inverse of
``page.transformation_matrix`` (PDF space to PyMuPDF's), and so do the reading and "up" directions, which give
the text matrix: the stamp reads upright whatever /Rotate and the CropBox are.

:class:`DocumentStamper` writes at the PDF-object level, the fast way for thousands of pages: one Helvetica
font object and one pair of ``q``/``Q`` content streams shared by every page of a document, and per page one
small content stream appended after the page's own content, which is bracketed by the ``q``/``Q`` pair so that
a transformation the original content leaves active (a ``cm`` with no q/Q around it) cannot move or scale the
stamp. The font is base-14 Helvetica (nothing embedded); the stamp is real text, so the stamped PDF is
searchable for its numbers. (ISO 32000-1: 7.7.3.3 inherited page resources, 8.4.2 q/Q, 9.4.2 the text matrix.)
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


FONT_RESOURCE = "LDBates"


def _pdf_string(text: str) -> str:
    encoded = text.encode("cp1252", "replace").decode("latin-1")
    return "(" + encoded.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def _ref(value: str) -> int | None:
    parts = value.split()
    return int(parts[0]) if len(parts) == 3 and parts[2] == "R" else None


class DocumentStamper:
    """Stamps the pages of one document (see the module docstring). Create one per document."""

    def __init__(self, doc: pymupdf.Document) -> None:
        self.doc = doc
        self.font_xref = self._new_object("<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>")
        self.open_xref = self._new_stream(b"q\n")
        self.close_xref = self._new_stream(b"\nQ\n")
        self._fonts_done: set[tuple[int, str]] = set()

    def _new_object(self, source: str) -> int:
        xref = self.doc.get_new_xref()
        self.doc.update_object(xref, source)
        return xref

    def _new_stream(self, data: bytes) -> int:
        xref = self._new_object("<<>>")
        self.doc.update_stream(xref, data)
        return xref

    def _inherited_resources(self, page_xref: int) -> str | None:
        node = page_xref
        for _ in range(32):  # the page tree is shallow; a cycle must not loop forever
            kind, parent = self.doc.xref_get_key(node, "Parent")
            node = _ref(parent) if kind == "xref" else None
            if node is None:
                return None
            kind, value = self.doc.xref_get_key(node, "Resources")
            if kind in ("xref", "dict"):
                return value
        return None

    def _add_font(self, page: pymupdf.Page) -> bool:
        """Make FONT_RESOURCE name our font in the page's resources; False if the structure is one we leave to
        PyMuPDF's own insert methods."""
        doc, page_xref = self.doc, page.xref
        kind, value = doc.xref_get_key(page_xref, "Resources")
        if kind == "null":
            inherited = self._inherited_resources(page_xref)
            if inherited is None:
                inherited = "<<>>"
            doc.xref_set_key(page_xref, "Resources", inherited)  # the page's own copy (or the same object)
            kind, value = doc.xref_get_key(page_xref, "Resources")
        if kind == "xref":
            holder, prefix = _ref(value), ""
        elif kind == "dict":
            holder, prefix = page_xref, "Resources/"
        else:
            return False
        font_kind, font_value = doc.xref_get_key(holder, f"{prefix}Font")
        if font_kind == "xref":
            holder, key = _ref(font_value), FONT_RESOURCE
        elif font_kind in ("dict", "null"):
            key = f"{prefix}Font/{FONT_RESOURCE}"
        else:
            return False
        if (holder, key) not in self._fonts_done:
            doc.xref_set_key(holder, key, f"{self.font_xref} 0 R")
            if holder != page_xref:  # a shared resources or font dictionary: once per document
                self._fonts_done.add((holder, key))
        return True

    def stamp(self, page: pymupdf.Page, items: list[tuple[str, str, str]], fontsize: float = FONT_SIZE) -> None:
        """Write each (text, vertical, horizontal) of ``items`` upright at its visual position on ``page``."""
        if not self._add_font(page):
            for text, vertical, horizontal in items:
                put_text(page, text, vertical, horizontal, fontsize)
            return
        to_pdf = page.derotation_matrix * ~page.transformation_matrix
        zero = pymupdf.Point(0, 0) * to_pdf
        along = pymupdf.Point(1, 0) * to_pdf - zero
        up = pymupdf.Point(0, -1) * to_pdf - zero
        operations = []
        placed: list[pymupdf.Rect] = []
        for text, vertical, horizontal in items:
            size = fontsize
            # Narrow pages: shrink a text wider than the space between the margins.
            available = page.rect.width - 2 * MARGIN_PT
            width = pymupdf.get_text_length(text, fontname=FONT, fontsize=size)
            if width > available:
                size = max(4.0, size * available / width)
            visual = visual_origin(page, text, vertical, horizontal, size)
            width = pymupdf.get_text_length(text, FONT, size)
            box = pymupdf.Rect(visual.x, visual.y - size, visual.x + width, visual.y + 0.3 * size)  # descenders too
            while any(box.intersects(other) for other in placed):
                # Two texts on one edge would overprint: move this one a line further from the edge.
                step = -1.4 * size if vertical == "bottom" else 1.4 * size
                visual = pymupdf.Point(visual.x, visual.y + step)
                box = pymupdf.Rect(box.x0, box.y0 + step, box.x1, box.y1 + step)
            placed.append(box)
            origin = visual * to_pdf
            operations.append(
                f"BT /{FONT_RESOURCE} {size:g} Tf 0 g {along.x:.6g} {along.y:.6g} {up.x:.6g} {up.y:.6g} "
                f"{origin.x:.3f} {origin.y:.3f} Tm {_pdf_string(text)} Tj ET"
            )
        stamp_xref = self._new_stream(("q " + " ".join(operations) + " Q\n").encode("latin-1"))
        contents = [self.open_xref, *page.get_contents(), self.close_xref, stamp_xref]
        self.doc.xref_set_key(page.xref, "Contents", "[" + " ".join(f"{xref} 0 R" for xref in contents) + "]")


def stamp_page(page: pymupdf.Page, bates: str, spec: StampSpec, confidentiality: str = "",
               stamper: DocumentStamper | None = None) -> None:
    """Stamp one page with its Bates number and, if any, its confidentiality designation."""
    stamper = stamper or DocumentStamper(page.parent)
    items = [(bates, spec.vertical, spec.horizontal)]
    if confidentiality:
        items.append((confidentiality, spec.vertical, spec.opposite))
    stamper.stamp(page, items)


def cover_sheet(doc: pymupdf.Document, title: str, width: float = 612, height: float = 792) -> pymupdf.Page:
    """Append a Letter-size slip sheet with ``title`` (e.g. ``EXHIBIT 7``) centred; return its page."""
    page = doc.new_page(width=width, height=height)
    text_width = pymupdf.get_text_length(title, fontname=FONT, fontsize=COVER_FONT_SIZE)
    page.insert_text(((width - text_width) / 2, height / 2), title, fontname=FONT, fontsize=COVER_FONT_SIZE)
    return page


def stamp_and_append(
    combined: pymupdf.Document, source: pymupdf.Document, bates: list[str], spec: StampSpec, confidentiality: str = ""
) -> None:
    """Stamp every page of ``source`` (one Bates number each, in order) and append it to ``combined``.

    Stamping each source document before combining keeps every insert on a small document; the combined one only
    receives finished pages. Raises ValueError if the numbers and pages do not pair up.
    """
    if len(bates) != source.page_count:
        raise ValueError(f"{len(bates)} Bates numbers for {source.page_count} pages")
    stamper = DocumentStamper(source)
    for page, number in zip(source, bates):
        stamp_page(page, number, spec, confidentiality, stamper)
    combined.insert_pdf(source)
