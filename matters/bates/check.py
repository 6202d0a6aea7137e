"""Check that every stamp can be seen: render each stamp's box as a viewer shows the page (annotations and form
fields drawn) and require dark pixels there. A stamp hidden by anything drawn after it, by hidden optional
content left open by the page's own content, or by a white-on-white rendering fails the check.
"""

import numpy
import pymupdf

CHECK_DPI = 96  # a 9 pt stamp is about 12 px high: enough for its strokes to render dark
DARK_LEVEL = 140  # grey level (0 black, 255 white) below which a pixel counts as ink
MIN_DARK_SHARE = 0.02  # text covers a fifth of its box or more; a hidden stamp leaves next to none


class StampNotVisible(ValueError):
    """A produced page's stamp does not show; the message names the page for the attorney."""


def dark_share(page: pymupdf.Page, box: pymupdf.Rect, dpi: int = CHECK_DPI) -> float:
    """The share (0-1) of ink pixels in ``box`` (displayed-page points) rendered with annotations shown."""
    clip = box & page.rect
    if clip.is_empty:
        return 0.0
    pixmap = page.get_pixmap(clip=clip, dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False, annots=True)
    samples = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8)
    return float((samples < DARK_LEVEL).mean()) if samples.size else 0.0


def check_stamps(doc: pymupdf.Document, boxes: list[list[pymupdf.Rect]], names: list[str], what: str) -> None:
    """Raise StampNotVisible for the first page of ``doc`` whose stamp boxes (one list per page, displayed-page
    points) lack ink. ``names`` are the pages' Bates numbers; ``what`` names the document in the message."""
    for number, (page, page_boxes, name) in enumerate(zip(doc, boxes, names), start=1):
        for box in page_boxes:
            if dark_share(page, box) < MIN_DARK_SHARE:
                raise StampNotVisible(
                    f"the stamp of {name} (page {number} of {what}) does not show when the page is rendered: "
                    "something on the page covers or hides it. Nothing of this production was kept; check that "
                    "page and produce again.")
