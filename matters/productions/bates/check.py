"""Check that every stamp can be seen: render each stamp's box as a viewer shows the page (annotations and form
fields drawn) and require dark pixels there. A stamp hidden by anything drawn after it, by hidden optional
content left open by the page's own content, or by a white-on-white rendering fails the check.
"""

import numpy
import pymupdf

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


def check_stamps(doc: pymupdf.Document, boxes: list[list[pymupdf.Rect]], names: list[str], what: str) -> None:
    """Raise StampNotVisible for the first page of ``doc`` whose stamp boxes (one list per page, displayed-page
    points) lack ink. ``names`` are the pages' Bates numbers; ``what`` names the document in the message."""
    for number, (page, page_boxes, name) in enumerate(zip(doc, boxes, names), start=1):
        display = page.get_displaylist(annots=True)  # the page is interpreted once for all its boxes
        for box in page_boxes:
            if dark_share(page, box, display=display) < MIN_DARK_SHARE:
                raise StampNotVisible(
                    f"the stamp of {name} (page {number} of {what}) does not show when the page is rendered: "
                    "something on the page covers or hides it. Nothing of this production was kept; check that "
                    "page and produce again.")
