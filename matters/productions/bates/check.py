"""Check that every stamp can be seen: render each stamp's box as a viewer shows the page (annotations and form
fields drawn) and require dark pixels there. A stamp hidden by anything drawn after it, by hidden optional
content left open by the page's own content, or by a white-on-white rendering fails the check.

Rendering costs more than stamping, combining and saving a page together, so a page whose structure proves the
stamp is drawn as written is not rendered (:func:`unproven`). On a page stamped by
:class:`.stamp.DocumentStamper` the page's own content is a form XObject painted by ``q /LDPage Do Q``
(:mod:`.isolate`), and the stamp follows in its own ``q ... Q`` setting its own font, size, fill colour and text
matrix. Painting a form saves and restores the graphics state, and the form's content is parsed as a stream of
its own (ISO 32000-1, 8.10.1, 7.8.2), so what the page's content leaves open ends with the form and is
defeated by construction, with no need to read the content:
- a surplus ``Q`` or ``q`` (8.4.2), and with it a clip, transformation, text render mode, soft mask or alpha;
- a string, array or dictionary left open, or an inline image without its end;
- syntax errors (MuPDF stops reading a content stream after 100 of them: the form's, not the page's).
What is drawn before the stamp lies under it. Only these can still hide it, and the page is rendered when any of
them may:
- marked content of a hidden optional content group left open (8.11.3.2): MuPDF keeps it open past the end of
  the form, hiding everything after it, so a document with optional content is rendered page by page;
- annotations or form fields, drawn after all page content (12.5.5), links without an appearance excepted;
- a stamp box outside the visible area (the CropBox within the MediaBox, 14.11.2);
- a stamp written through PyMuPDF (a script base-14 Helvetica cannot write): not on an isolated page.
"""

import numpy
import pymupdf

from . import pageobjects

CHECK_DPI = 48  # a 9 pt stamp is 6 px high: its strokes still render dark, at a quarter of 96 dpi's pixels
DARK_LEVEL = 140  # grey level (0 black, 255 white) below which a pixel counts as ink
MIN_DARK_SHARE = 0.02  # text covers a fifth of its box or more; a hidden stamp leaves next to none


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


def unproven(doc: pymupdf.Document, number: int, boxes: list[pymupdf.Rect], layers: bool | None = None,
             visible: pymupdf.Rect | None = None, annotated: bool = True) -> str:
    """Why the structure of page ``number`` (0-based) of ``doc`` does not prove its stamp shows ('' when it
    does). Only for a page stamped by :class:`.stamp.DocumentStamper` with its own content stream: the
    page's content as a form XObject, ``q /LDPage Do Q``, then ``q <stamp> Q``. ``boxes`` are the stamp boxes
    (displayed-page points); ``layers``, :func:`has_optional_content` when the caller knows it; ``visible``, the
    page's visible area when the caller has it (the stamper reads it to place the stamp); ``annotated``, False
    when the caller knows the page has no annotations (the stamper reads that too).

    The page's content needs no reading: it is a form XObject of its own (see the module docstring); only its
    annotations, its stamp boxes against the visible area and the document's optional content are looked at."""
    page_obj = None
    if annotated or visible is None:
        page_obj = pageobjects.page_object(pageobjects.pdf_of(doc), number)
    if annotated and pageobjects.draws_annots(page_obj):
        return "annotations are drawn over the page content"
    if visible is None:
        visible, _ = pageobjects.geometry(page_obj)
    if not all(visible.contains(box) for box in boxes):
        return "a stamp box is not inside the visible area"
    if has_optional_content(doc) if layers is None else layers:
        return "the document has optional content: a layer left open may hide the stamp"
    return ""


def check_stamps(doc: pymupdf.Document, boxes: list[list[pymupdf.Rect]], names: list[str], what: str,
                 readable: set[int] = frozenset(), visible: dict[int, pymupdf.Rect] | None = None,
                 annotated: set[int] | None = None) -> int:
    """Raise StampNotVisible for the first page of ``doc`` whose stamp boxes (one list per page, displayed-page
    points) lack ink. ``names`` are the pages' Bates numbers; ``what`` names the document in the message.
    ``readable`` are the pages (0-based) whose content is isolated and whose stamps are all in one content
    stream of ours (see :func:`unproven`); the others, and those whose structure proves nothing, are rendered.
    ``visible`` maps pages (0-based) to their visible area as the stamper read it, so it is not read again;
    ``annotated``, the pages with annotations when the stamper knows them (every page may have some otherwise).
    Return how many pages were rendered."""
    layers = has_optional_content(doc) if readable else True
    rendered = 0
    for number, (page_boxes, name) in enumerate(zip(boxes, names)):
        if number in readable and not unproven(doc, number, page_boxes, layers, (visible or {}).get(number),
                                               annotated is None or number in annotated):
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
