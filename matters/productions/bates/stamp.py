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

Text Windows-1252 cannot write (an endorsement or suffix in Chinese, Japanese, Korean, Cyrillic or Greek) goes
through PyMuPDF's ``insert_text`` with its built-in Droid Sans Fallback, turned by the page's /Rotate so it reads
upright; the font is subset to the glyphs used once the document is stamped (:func:`stamp_document`).
:func:`stamp_document` and :func:`stamp_and_append` are the steps a production calls: bake annotations and
fields into the page (:mod:`.flatten`), stamp, check every stamp shows (:mod:`.check`), keep links
(:mod:`.links`), append. A step that changes pages before stamping (redaction, placeholders) belongs before
:func:`stamp_document`.
"""

import functools
from dataclasses import dataclass, field

import pymupdf

from .check import check_stamps
from .flatten import flatten
from .forms import nest_fields, restore_names
from .links import resolve_named_links, take_file_links

FONT = "helv"
UNICODE_FONT = "china-s"  # PyMuPDF's name for its built-in Droid Sans Fallback
UNICODE_RESOURCE = "LDUni"
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


def needs_unicode_font(text: str) -> bool:
    """True when ``text`` has characters outside Windows-1252, which base-14 Helvetica cannot show."""
    try:
        text.encode("cp1252")
    except UnicodeEncodeError:
        return True
    return False


@functools.cache
def unicode_font() -> pymupdf.Font:
    """PyMuPDF's built-in Droid Sans Fallback: Latin, Greek, Cyrillic, Chinese, Japanese and Korean glyphs."""
    return pymupdf.Font(UNICODE_FONT)


def missing_glyphs(text: str) -> str:
    """The characters of ``text`` that no stamp font can show ('' when all can)."""
    if not needs_unicode_font(text):
        return ""
    font = unicode_font()
    return "".join(dict.fromkeys(ch for ch in text if not ch.isspace() and not font.has_glyph(ord(ch))))


def text_width(text: str, fontsize: float) -> float:
    """Width in points of ``text`` in the font it will be stamped with."""
    if needs_unicode_font(text):
        return unicode_font().text_length(text, fontsize=fontsize)
    return pymupdf.get_text_length(text, fontname=FONT, fontsize=fontsize)


def visual_origin(page: pymupdf.Page, text: str, vertical: str, horizontal: str, fontsize: float = FONT_SIZE,
                  width: float | None = None):
    """Return the baseline start of ``text`` on the displayed page (top-left origin, y down), inside the margin."""
    visible = page.rect
    width = text_width(text, fontsize) if width is None else width
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
    fontname = FONT
    if needs_unicode_font(text):
        page.insert_font(fontname=UNICODE_RESOURCE, fontbuffer=unicode_font().buffer)
        fontname = UNICODE_RESOURCE
    page.insert_text(point, text, fontname=fontname, fontsize=fontsize, rotate=page.rotation, color=(0, 0, 0))


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
        self.unicode_used = False  # a Unicode font was embedded whole: subset it before saving

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

    def stamp(self, page: pymupdf.Page, items: list[tuple[str, str, str]],
              fontsize: float = FONT_SIZE) -> list[pymupdf.Rect]:
        """Write each (text, vertical, horizontal) of ``items`` upright at its visual position on ``page``; return
        each text's box on the displayed page (points, top-left origin), for :mod:`.check`."""
        placed = layout(page, items, fontsize)
        latin = [item for item in placed if not item.unicode]
        if latin and self._add_font(page):
            to_pdf = page.derotation_matrix * ~page.transformation_matrix
            zero = pymupdf.Point(0, 0) * to_pdf
            along = pymupdf.Point(1, 0) * to_pdf - zero
            up = pymupdf.Point(0, -1) * to_pdf - zero
            operations = []
            for item in latin:
                origin = item.origin * to_pdf
                operations.append(
                    f"BT /{FONT_RESOURCE} {item.size:g} Tf 0 g {along.x:.6g} {along.y:.6g} {up.x:.6g} {up.y:.6g} "
                    f"{origin.x:.3f} {origin.y:.3f} Tm {_pdf_string(item.text)} Tj ET"
                )
            stamp_xref = self._new_stream(("q " + " ".join(operations) + " Q\n").encode("latin-1"))
            contents = [self.open_xref, *page.get_contents(), self.close_xref, stamp_xref]
            self.doc.xref_set_key(page.xref, "Contents", "[" + " ".join(f"{xref} 0 R" for xref in contents) + "]")
            latin = []
        for item in [*latin, *(item for item in placed if item.unicode)]:
            fontname = FONT
            if item.unicode:
                page.insert_font(fontname=UNICODE_RESOURCE, fontbuffer=unicode_font().buffer)
                fontname, self.unicode_used = UNICODE_RESOURCE, True
            page.insert_text(item.origin * page.derotation_matrix, item.text, fontname=fontname, fontsize=item.size,
                             rotate=page.rotation, color=(0, 0, 0))
        return [item.box for item in placed]


@dataclass(frozen=True)
class Placed:
    """One stamp text laid out on the displayed page: baseline ``origin``, ``box`` (descenders included)."""

    text: str
    size: float
    origin: pymupdf.Point
    box: pymupdf.Rect
    unicode: bool


def layout(page: pymupdf.Page, items: list[tuple[str, str, str]], fontsize: float = FONT_SIZE) -> list[Placed]:
    """Place each (text, vertical, horizontal) on the displayed page: shrunk to fit between the margins, moved a
    line further from the edge where it would overprint an earlier one."""
    placed: list[Placed] = []
    for text, vertical, horizontal in items:
        unicode = needs_unicode_font(text)
        size = fontsize
        available = page.rect.width - 2 * MARGIN_PT
        width = text_width(text, size)
        if width > available:
            size = max(4.0, size * available / width)
            width = text_width(text, size)
        visual = visual_origin(page, text, vertical, horizontal, size, width)
        box = pymupdf.Rect(visual.x, visual.y - size, visual.x + width, visual.y + 0.3 * size)
        while any(box.intersects(other.box) for other in placed):
            step = -1.4 * size if vertical == "bottom" else 1.4 * size
            visual = pymupdf.Point(visual.x, visual.y + step)
            box = pymupdf.Rect(box.x0, box.y0 + step, box.x1, box.y1 + step)
        placed.append(Placed(text, size, visual, box, unicode))
    return placed


def stamp_page(page: pymupdf.Page, bates: str, spec: StampSpec, confidentiality: str = "",
               stamper: DocumentStamper | None = None) -> list[pymupdf.Rect]:
    """Stamp one page with its Bates number and, if any, its confidentiality designation; return the boxes of
    the stamp texts on the displayed page."""
    stamper = stamper or DocumentStamper(page.parent)
    items = [(bates, spec.vertical, spec.horizontal)]
    if confidentiality:
        items.append((confidentiality, spec.vertical, spec.opposite))
    return stamper.stamp(page, items)


def cover_sheet(doc: pymupdf.Document, title: str, width: float = 612, height: float = 792) -> pymupdf.Page:
    """Append a Letter-size slip sheet with ``title`` (e.g. ``EXHIBIT 7``) centred; return its page."""
    page = doc.new_page(width=width, height=height)
    title_width = pymupdf.get_text_length(title, fontname=FONT, fontsize=COVER_FONT_SIZE)
    page.insert_text(((width - title_width) / 2, height / 2), title, fontname=FONT, fontsize=COVER_FONT_SIZE)
    return page


@dataclass
class Stamped:
    """What stamping one document left for the production: ``start``, its first page in the combined PDF;
    ``file_links``, its links to other files, to put back once every document is in (:mod:`.links`);
    ``unresolved_names``, named destinations its links use that name no page."""

    start: int
    file_links: list = field(default_factory=list)
    unresolved_names: list[str] = field(default_factory=list)


def stamp_document(source: pymupdf.Document, bates: list[str], spec: StampSpec, confidentiality: str = "",
                   keep_forms: bool = False) -> list[list[pymupdf.Rect]]:
    """Stamp every page of ``source`` in place (one Bates number each, in order); return each page's stamp boxes.

    Annotations, and form fields unless ``keep_forms``, are baked into the pages first (:mod:`.flatten`), so
    that nothing is drawn over the stamp (a kept field that covers it fails the check); a Unicode font used for an endorsement is cut down to the glyphs used. Raises ValueError if the
    numbers and pages do not pair up.
    """
    if len(bates) != source.page_count:
        raise ValueError(f"{len(bates)} Bates numbers for {source.page_count} pages")
    flatten(source, widgets=not keep_forms)
    stamper = DocumentStamper(source)
    boxes = [stamp_page(page, number, spec, confidentiality, stamper) for page, number in zip(source, bates)]
    if stamper.unicode_used:
        source.subset_fonts()  # the file grows by the glyphs used, not the 3.5 MB font
    return boxes


def stamp_and_append(combined: pymupdf.Document, source: pymupdf.Document, bates: list[str], spec: StampSpec,
                     confidentiality: str = "", what: str = "the document", check: bool = True,
                     keep_forms: bool = False) -> Stamped:
    """Stamp ``source`` (:func:`stamp_document`), check that every stamp shows (:func:`.check.check_stamps`,
    raising StampNotVisible naming the page), and append it to ``combined`` with its links kept
    (:mod:`.links`).

    Stamping each source document before combining keeps every insert on a small document; the combined one only
    receives finished pages. ``what`` names the document in messages. ``check=False`` is for the benchmark's
    side-by-side measure of the check's cost only: a production always checks.
    """
    boxes = stamp_document(source, bates, spec, confidentiality, keep_forms)
    if check:
        check_stamps(source, boxes, bates, what)
    stamped = Stamped(start=combined.page_count, unresolved_names=resolve_named_links(source),
                      file_links=take_file_links(source))
    field_names = nest_fields(source, bates[0]) if keep_forms else {}
    combined.insert_pdf(source)
    restore_names(combined, stamped.start, field_names)
    return stamped
