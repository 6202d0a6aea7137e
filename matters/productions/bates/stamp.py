"""Put Bates numbers and confidentiality designations on pages, upright where a viewer shows them.

Positions are chosen on the page as displayed: PyMuPDF's ``page.rect`` is the visible area (the CropBox, turned
by /Rotate). A visual point maps to PDF user space through ``page.derotation_matrix`` and the inverse of
``page.transformation_matrix`` (PDF space to PyMuPDF's), and so do the reading and "up" directions, which give
the text matrix: the stamp reads upright whatever /Rotate and the CropBox are.

:class:`DocumentStamper` writes at the PDF-object level (:mod:`.pageobjects`), the fast way for thousands of
pages: one Helvetica font object shared by every page of a document; per page, the page's own content made a
form XObject (:mod:`.isolate`) and one small content stream, ``q /LDPage Do Q q <stamp> Q``, so that nothing the
original content leaves open (a ``cm`` or clip with no q/Q around it, an open string) can move, hide or swallow
the stamp. The font is base-14 Helvetica (nothing embedded); the stamp is real text, so the stamped PDF is
searchable for its numbers. (ISO 32000-1: 8.10.1 form XObjects, 8.4.2 q/Q, 9.4.2 the text matrix.)

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

from . import pageobjects
from .check import check_stamps
from .dedup import ResourceMerger
from .flatten import flatten
from .forms import nest_fields, restore_names
from .isolate import PageIsolator
from .links import append_links, resolve_named_links, take_file_links
from .tags import retarget_structure

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
    return sum(_helvetica_width(char) for char in text) * fontsize


def visual_origin(visible: pymupdf.Rect, text: str, vertical: str, horizontal: str, fontsize: float = FONT_SIZE,
                  width: float | None = None):
    """Return the baseline start of ``text`` on the displayed page whose visible area is ``visible`` (as
    ``page.rect``: top-left origin, y down), inside the margin."""
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
    point = visual_origin(page.rect, text, vertical, horizontal, fontsize) * page.derotation_matrix
    fontname = FONT
    if needs_unicode_font(text):
        page.insert_font(fontname=UNICODE_RESOURCE, fontbuffer=unicode_font().buffer)
        fontname = UNICODE_RESOURCE
    page.insert_text(point, text, fontname=fontname, fontsize=fontsize, rotate=page.rotation, color=(0, 0, 0))


FONT_RESOURCE = "LDBates"


@functools.cache
def _helvetica_width(char: str) -> float:
    """Advance width of ``char`` in base-14 Helvetica at size 1 (points); base-14 text has no kerning, so a
    text's width is the sum of its characters'."""
    return pymupdf.get_text_length(char, fontname=FONT, fontsize=1)


def _pdf_string(text: str) -> str:
    encoded = text.encode("cp1252", "replace").decode("latin-1")
    return "(" + encoded.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


class DocumentStamper:
    """Stamps the pages of one document (see the module docstring). Create one per document.

    ``own_content`` holds the numbers (0-based) of the pages whose content is isolated in a form and whose every
    stamp text is in the one content stream this class writes: :mod:`.check` can read those pages' structure
    instead of rendering them."""

    def __init__(self, doc: pymupdf.Document) -> None:
        self.doc = doc
        self.pdf = pageobjects.pdf_of(doc)
        self.font = self._new_font()
        self.isolator = PageIsolator(self.pdf)
        self.unicode_used = False  # a Unicode font was embedded whole: subset it before saving
        self.own_content: set[int] = set()
        self.visible: dict[int, pymupdf.Rect] = {}  # each stamped page's visible area, for :mod:`.check`
        # The pages (0-based) with annotations, read from each page object as it is stamped, so that the check
        # and the links look at those pages only instead of reading every page object again.
        self.annotated: set[int] = set()

    def _new_font(self):
        mupdf = pageobjects.mupdf
        font = mupdf.pdf_new_dict(self.pdf, 4)
        mupdf.pdf_dict_put(font, mupdf.PDF_ENUM_NAME_Type, mupdf.PDF_ENUM_NAME_Font)
        mupdf.pdf_dict_put(font, mupdf.PDF_ENUM_NAME_Subtype, mupdf.PDF_ENUM_NAME_Type1)
        mupdf.pdf_dict_put_name(font, mupdf.PDF_ENUM_NAME_BaseFont, "Helvetica")
        mupdf.pdf_dict_put(font, mupdf.PDF_ENUM_NAME_Encoding, mupdf.PDF_ENUM_NAME_WinAnsiEncoding)
        return mupdf.pdf_add_object(self.pdf, font)

    def stamp(self, page: pymupdf.Page, items: list[tuple[str, str, str]],
              fontsize: float = FONT_SIZE) -> list[pymupdf.Rect]:
        """Write each (text, vertical, horizontal) of ``items`` upright at its visual position on ``page``; return
        each text's box on the displayed page (points, top-left origin), for :mod:`.check`."""
        return self.stamp_number(page.number, items, fontsize)

    def stamp_number(self, number: int, items: list[tuple[str, str, str]],
                     fontsize: float = FONT_SIZE) -> list[pymupdf.Rect]:
        """:meth:`stamp` for page ``number`` (0-based), read and written at the object level."""
        page_obj = pageobjects.page_object(self.pdf, number)
        visible, to_pdf = pageobjects.geometry(page_obj)
        self.visible[number] = visible
        if pageobjects.has_annots(page_obj):
            self.annotated.add(number)
        placed = layout(visible, items, fontsize)
        latin = [item for item in placed if not item.unicode]
        if latin:
            zero = pageobjects.transform((0, 0), to_pdf)
            along_x, along_y = (v - z for v, z in zip(pageobjects.transform((1, 0), to_pdf), zero))
            up_x, up_y = (v - z for v, z in zip(pageobjects.transform((0, -1), to_pdf), zero))
            operations = []
            for item in latin:
                origin_x, origin_y = pageobjects.transform((item.origin.x, item.origin.y), to_pdf)
                operations.append(
                    f"BT /{FONT_RESOURCE} {item.size:g} Tf 0 g {along_x:.6g} {along_y:.6g} {up_x:.6g} {up_y:.6g} "
                    f"{origin_x:.3f} {origin_y:.3f} Tm {_pdf_string(item.text)} Tj ET"
                )
            # The page's own content is a form of its own: nothing it leaves open reaches the stamp (.isolate).
            stamp = ("q " + " ".join(operations) + " Q\n").encode("latin-1")
            self.isolator.isolate(page_obj, stamp, {FONT_RESOURCE: self.font})
            latin = []
        rest = [*latin, *(item for item in placed if item.unicode)]
        if not rest:
            self.own_content.add(number)
            return [item.box for item in placed]
        page = self.doc[number]
        for item in rest:
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


def layout(visible: pymupdf.Rect, items: list[tuple[str, str, str]], fontsize: float = FONT_SIZE) -> list[Placed]:
    """Place each (text, vertical, horizontal) on the displayed page whose visible area is ``visible`` (as
    ``page.rect``): shrunk to fit between the margins, moved a line further from the edge where it would
    overprint an earlier one."""
    placed: list[Placed] = []
    for text, vertical, horizontal in items:
        unicode = needs_unicode_font(text)
        size = fontsize
        available = visible.width - 2 * MARGIN_PT
        width = text_width(text, size)
        if width > available:
            size = max(4.0, size * available / width)
            width = text_width(text, size)
        visual = visual_origin(visible, text, vertical, horizontal, size, width)
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
    return stamper.stamp(page, stamp_items(bates, spec, confidentiality))


def stamp_items(bates: str, spec: StampSpec, confidentiality: str = "") -> list[tuple[str, str, str]]:
    """The (text, vertical, horizontal) a page's stamp is made of: its Bates number and, if any, its
    confidentiality designation on the other side of the same edge."""
    items = [(bates, spec.vertical, spec.horizontal)]
    if confidentiality:
        items.append((confidentiality, spec.vertical, spec.opposite))
    return items


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
    ``unresolved_names``, named destinations its links use that name no page; ``tagged``, the forms of its tagged
    pages, for :func:`.tags.retarget_structure` before the document is written on its own (its native)."""

    start: int
    file_links: list = field(default_factory=list)
    unresolved_names: list[str] = field(default_factory=list)
    tagged: dict = field(default_factory=dict)


def stamp_document(source: pymupdf.Document, bates: list[str], spec: StampSpec, confidentiality: str = "",
                   keep_forms: bool = False) -> list[list[pymupdf.Rect]]:
    """Stamp every page of ``source`` in place (one Bates number each, in order); return each page's stamp boxes.

    Annotations, and form fields unless ``keep_forms``, are baked into the pages first (:mod:`.flatten`), so
    that nothing is drawn over the stamp (a kept field that covers it fails the check); a Unicode font used for
    an endorsement is cut down to the glyphs used. Raises ValueError if the numbers and pages do not pair up.
    """
    return stamp_pages(source, bates, spec, confidentiality, keep_forms).boxes


@dataclass
class Stamping:
    """What :func:`stamp_pages` did: ``boxes``, each page's stamp boxes (displayed-page points);
    ``own_content``, the pages (0-based) whose stamps are all in one content stream of ours (:mod:`.check`);
    ``visible``, each page's visible area as stamped (displayed-page points, by 0-based page number);
    ``tagged``, page object number to form for the tagged pages made forms (:mod:`.tags`); ``annotated``, the
    pages (0-based) that had annotations (links, or fields kept) when stamped."""

    boxes: list[list[pymupdf.Rect]]
    own_content: set[int]
    visible: dict[int, pymupdf.Rect] = field(default_factory=dict)
    tagged: dict = field(default_factory=dict)
    annotated: set[int] = field(default_factory=set)


def stamp_pages(source: pymupdf.Document, bates: list[str], spec: StampSpec, confidentiality: str = "",
                keep_forms: bool = False, structure: bool = True) -> Stamping:
    """:func:`stamp_document`, also saying which pages :mod:`.check` may read instead of rendering.
    ``structure=False`` leaves a tagged document's structure tree to the caller (:func:`.tags.retarget_structure`
    with ``Stamping.tagged``), for a document whose tree is not kept (one only combined into another)."""
    if len(bates) != source.page_count:
        raise ValueError(f"{len(bates)} Bates numbers for {source.page_count} pages")
    flatten(source, widgets=not keep_forms)
    stamper = DocumentStamper(source)
    boxes = [stamper.stamp_number(number, stamp_items(bates_number, spec, confidentiality))
             for number, bates_number in enumerate(bates)]
    if structure:  # a tagged document's structure names the content it tags: now in each page's form (.tags)
        retarget_structure(stamper.pdf, stamper.isolator.tagged)
    if stamper.unicode_used:
        source.subset_fonts()  # the file grows by the glyphs used, not the 3.5 MB font
    return Stamping(boxes, stamper.own_content, stamper.visible, stamper.isolator.tagged, stamper.annotated)


def stamp_and_append(combined: pymupdf.Document, source: pymupdf.Document, bates: list[str], spec: StampSpec,
                     confidentiality: str = "", what: str = "the document", check: bool = True,
                     keep_forms: bool = False, merger: ResourceMerger | None = None) -> Stamped:
    """Stamp ``source`` (:func:`stamp_document`), check that every stamp shows (:func:`.check.check_stamps`,
    raising StampNotVisible naming the page), and append it to ``combined`` with its links kept
    (:mod:`.links`).

    Stamping each source document before combining keeps every insert on a small document; the combined one only
    receives finished pages. ``what`` names the document in messages. ``check=False`` is for the benchmark's
    side-by-side measure of the check's cost only: a production always checks.
    """
    # The combined PDF keeps no structure tree (combining copies pages, not the catalog): the tree of ``source``
    # is pointed at its forms only if ``source`` is written on its own, by :func:`.tags.retarget_structure`.
    stamping = stamp_pages(source, bates, spec, confidentiality, keep_forms, structure=False)
    annotated = sorted(stamping.annotated)
    if check:
        check_stamps(source, stamping.boxes, bates, what, readable=stamping.own_content, visible=stamping.visible,
                     annotated=stamping.annotated)
    stamped = Stamped(start=combined.page_count, unresolved_names=resolve_named_links(source, annotated),
                      file_links=take_file_links(source, annotated), tagged=stamping.tagged)
    field_names = nest_fields(source, bates[0]) if keep_forms else {}
    # PyMuPDF's insert_pdf loads every source page to repair radio buttons (widgets) and again to copy links, in
    # Python: a third of combining a page. Without kept fields there are no widgets (flatten baked them); links
    # are copied here (.links.append_links), and only from the pages that still have annotations.
    pdf = pageobjects.pdf_of(source)
    linked = [number for number in annotated if pageobjects.has_annots(pageobjects.page_object(pdf, number))]
    first_new_object = combined.xref_length()
    combined.insert_pdf(source, links=False, widgets=keep_forms)
    appended = pageobjects.appended_pages(combined, source.page_count)
    if linked:
        append_links(combined, source, linked, appended)
    if merger is not None:
        # Kept fields bring the source's AcroForm resources, which the pages do not reach: their duplicates are
        # left to the save's garbage collection instead of deleted.
        merger.merge(appended, first_new_object, delete=not keep_forms)
    pageobjects.nest_page_tree(combined)
    restore_names(combined, stamped.start, field_names)
    return stamped
