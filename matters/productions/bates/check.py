"""Check that every stamp can be seen: render each stamp's box as a viewer shows the page (annotations and form
fields drawn) and require dark pixels there. A stamp hidden by anything drawn after it, by hidden optional
content left open by the page's own content, or by a white-on-white rendering fails the check.

Rendering costs more than stamping, combining and saving a page together, so a page whose structure proves the
stamp is drawn as written is not rendered (:func:`unproven`). The stamp is the last content of its page, in its
own ``q ... Q`` after the page's content, itself between ``q`` and ``Q`` (:class:`.stamp.DocumentStamper`), and
it sets its own font, size, fill colour and text matrix: what is drawn before it lies under it. Only these can
hide it, and the page is rendered when any of them may:
- the page's content leaves the graphics state unbalanced: a surplus ``Q`` pops the ``q`` before it, so a clip,
  transformation, text render mode, soft mask or alpha set after that reaches the stamp; a surplus ``q`` keeps
  the page's state past the ``Q`` meant to restore it (ISO 32000-1, 8.4.2);
- marked content of a hidden optional content group left open (8.11.3.2): everything after it is hidden (a
  document with optional content is rendered page by page);
- a string, array or dictionary left open, or an inline image without its end, which swallows the stamp as data;
- syntax errors: MuPDF stops reading a page's content after 100 of them;
- annotations or form fields, drawn after all page content (12.5.5), links without an appearance excepted;
- a stamp box outside the visible area (the CropBox within the MediaBox, 14.11.2).
The content is read by MuPDF's own content-stream interpreter counting ``q``/``Q`` (no drawing device: no glyph,
image or page raster), the same lexer a render uses, so a construct it reads differently from us cannot slip
through.
"""

import numpy
import pymupdf

from . import pageobjects

CHECK_DPI = 48  # a 9 pt stamp is 6 px high: its strokes still render dark, at a quarter of 96 dpi's pixels
DARK_LEVEL = 140  # grey level (0 black, 255 white) below which a pixel counts as ink
MIN_DARK_SHARE = 0.02  # text covers a fifth of its box or more; a hidden stamp leaves next to none
mupdf = pageobjects.mupdf


class StampNotVisible(ValueError):
    """A produced page's stamp does not show; the message names the page for the attorney."""


def dark_share(page: pymupdf.Page, box: pymupdf.Rect, dpi: int = CHECK_DPI,
               display: pymupdf.DisplayList | None = None) -> float:
    """The share (0-1) of ink pixels in ``box`` (displayed-page points) rendered with annotations shown.
    ``display``, the page's display list, saves interpreting the page again for a second box."""
    clip = box & page.rect
    if clip.is_empty:
        return 0.0
    display = display or page.get_displaylist(annots=True)
    # A page's display list is in displayed-page coordinates, like ``box``.
    pixmap = display.get_pixmap(matrix=pymupdf.Matrix(dpi / 72, dpi / 72), colorspace=pymupdf.csGRAY, alpha=False,
                                clip=clip)
    samples = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8)
    return float((samples < DARK_LEVEL).mean()) if samples.size else 0.0


def has_optional_content(doc: pymupdf.Document) -> bool:
    """True when the document declares optional content (layers: the catalog's /OCProperties, ISO 32000-1,
    8.11.4.2). Without it no layer exists to be hidden, in MuPDF or in the standard."""
    return doc.xref_get_key(doc.pdf_catalog(), "OCProperties")[0] != "null"


def unproven(doc: pymupdf.Document, number: int, boxes: list[pymupdf.Rect], layers: bool | None = None) -> str:
    """Why the structure of page ``number`` (0-based) of ``doc`` does not prove its stamp shows ('' when it
    does). Only for a page stamped by :class:`.stamp.DocumentStamper` with its own content stream: ``q``, the
    page's content, then ``Q q <stamp> Q``. ``boxes`` are the stamp boxes (displayed-page points); ``layers``,
    :func:`has_optional_content` when the caller knows it.

    MuPDF's own count of the graphics state (``pdf_count_q_balance``, what PyMuPDF's ``is_wrapped`` reads) must
    find nothing to add: no ``Q`` without its ``q``, none missing at the end, no operator outside a ``q ... Q``.
    Our four operators make that true of a page whose content is balanced; content that swallows any of them
    (a string, array, dictionary or inline image left open, 100 syntax errors after which MuPDF reads no more)
    leaves the count unbalanced, since every other way through leaves a ``q`` open or an operator unguarded."""
    pdf = pageobjects.pdf_of(doc)
    page_obj = pageobjects.page_object(pdf, number)
    if pageobjects.draws_annots(page_obj):
        return "annotations are drawn over the page content"
    visible, _ = pageobjects.geometry(page_obj)
    if not all(visible.contains(box) for box in boxes):
        return "a stamp box is not inside the visible area"
    if has_optional_content(doc) if layers is None else layers:
        return "the document has optional content: a layer left open may hide the stamp"
    return ""


def check_stamps(doc: pymupdf.Document, boxes: list[list[pymupdf.Rect]], names: list[str], what: str,
                 readable: set[int] = frozenset()) -> int:
    """Raise StampNotVisible for the first page of ``doc`` whose stamp boxes (one list per page, displayed-page
    points) lack ink. ``names`` are the pages' Bates numbers; ``what`` names the document in the message.
    ``readable`` are the pages (0-based) whose stamps are each in one content stream of their own (see
    :func:`unproven`); the others, and those whose structure proves nothing, are rendered. Return how many
    pages were rendered."""
    layers = has_optional_content(doc) if readable else True
    rendered = 0
    for number, (page_boxes, name) in enumerate(zip(boxes, names)):
        if number in readable and not unproven(doc, number, page_boxes, layers):
            continue
        rendered += 1
        page = doc[number]
        display = page.get_displaylist(annots=True)  # the page is interpreted once for all its boxes
        for box in page_boxes:
            if dark_share(page, box, display=display) < MIN_DARK_SHARE:
                raise StampNotVisible(
                    f"the stamp of {name} (page {number + 1} of {what}) does not show when the page is rendered: "
                    "something on the page covers or hides it. Nothing of this production was kept; check that "
                    "page and produce again.")
    return rendered
