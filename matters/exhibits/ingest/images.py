"""An image file as the PDF its pages are read from: every frame as it shows on screen, composited on white.

One reader for every image that becomes pages (an uploaded exhibit, a received volume's page images): Pillow
opens the file and each frame is flattened to what a viewer shows before MuPDF or Tesseract sees it, whatever
its mode (Pillow's "Modes" in its concepts page):

- alpha (``RGBA``, ``LA``, ``PA``, premultiplied ``RGBa``/``La``) and a palette's or a colour's ``transparency``
  entry: composited over white, as a viewer shows a transparent page on paper;
- 16- and 32-bit grey (``I;16`` and its byte orders, ``I``, ``F``): scaled to 8 bits over the range its bit depth
  allows (``I;16``: 0-65535; ``I`` and ``F``: the frame's own range when it passes 255), never clipped at 255,
  which turned a 16-bit scan white;
- ``CMYK``, ``YCbCr``, ``LAB``, ``HSV``: to RGB; bilevel (``1``), ``L`` and ``RGB``: as they are;
- every frame of a multi-page TIFF (or any multi-frame file), each a page.

A single-frame JPEG or PNG already in ``L``, ``RGB`` or ``1`` without transparency goes in as its own bytes (no
second encoding of a photo); every other frame is stored losslessly as PNG. The page size follows the frame's
resolution, 96 dpi where it names none (as MuPDF sizes an image page). Django-free: runs in the ingest child.
"""

import io
from pathlib import Path

import numpy
import pymupdf
from PIL import Image, ImageSequence

DEFAULT_DPI = 96
# A resolution under this is a placeholder (Pillow writes 1 dpi with no unit), not a page 11 yards wide.
MIN_DPI = 16
_PLAIN_MODES = ("1", "L", "RGB")
_PASS_THROUGH_FORMATS = ("JPEG", "PNG")
_WHITE = 255


def _dpi(image: Image.Image) -> tuple[float, float]:
    found = image.info.get("dpi") or ()
    try:
        x, y = (float(found[0]), float(found[1])) if len(found) >= 2 else (0.0, 0.0)
    except (TypeError, ValueError):
        x = y = 0.0
    valid = MIN_DPI <= x <= 10_000 and MIN_DPI <= y <= 10_000
    return (x, y) if valid else (DEFAULT_DPI, DEFAULT_DPI)


def _composited(frame: Image.Image) -> Image.Image:
    """``frame`` (any mode with alpha) over white, in ``L`` when it is grey, else ``RGB``."""
    grey = frame.mode in ("LA", "La") or (frame.mode == "L")
    rgba = frame.convert("RGBA")
    white = Image.new("RGBA", rgba.size, (_WHITE, _WHITE, _WHITE, 255))
    flat = Image.alpha_composite(white, rgba).convert("RGB")
    return flat.convert("L") if grey else flat


def _deep_grey(frame: Image.Image) -> Image.Image:
    """A 16- or 32-bit grey frame in 8 bits, scaled over the range its depth allows."""
    values = numpy.asarray(frame, dtype=numpy.float64)
    if frame.mode.startswith("I;16"):
        top, bottom = 65535.0, 0.0
    else:
        finite = values[numpy.isfinite(values)]
        bottom = float(finite.min()) if finite.size else 0.0
        top = float(finite.max()) if finite.size else 255.0
        if bottom >= 0 and top <= 255:
            bottom, top = 0.0, 255.0
    span = (top - bottom) or 1.0
    scaled = numpy.clip((numpy.nan_to_num(values, nan=bottom) - bottom) * (255.0 / span), 0, 255)
    return Image.fromarray(scaled.round().astype(numpy.uint8), mode="L")


def flattened(frame: Image.Image) -> Image.Image:
    """``frame`` as it shows on screen over white, in mode ``1``, ``L`` or ``RGB``."""
    mode = frame.mode
    if "transparency" in frame.info and mode in ("P", "L", "RGB", "1"):
        return _composited(frame.convert("RGBA") if mode != "L" else frame.convert("LA"))
    if mode in _PLAIN_MODES:
        return frame.copy()
    if mode in ("RGBA", "LA", "La", "RGBa", "PA", "RGBX") or mode.endswith("A"):
        return _composited(frame.convert("RGBA") if mode in ("PA", "RGBa", "La") else frame)
    if mode.startswith("I") or mode == "F":
        return _deep_grey(frame)
    if mode == "P":
        return frame.convert("RGB")
    return frame.convert("RGB")  # CMYK, YCbCr, LAB, HSV


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)  # level 1: a scan's page in tens of ms, not hundreds
    return buffer.getvalue()


def _uniform(image: Image.Image) -> bool:
    extrema = image.getextrema()
    bands = extrema if isinstance(extrema[0], tuple) else (extrema,)
    return all(low == high for low, high in bands)


def _hidden_by_transparency(frame: Image.Image, shown: Image.Image) -> bool:
    """Whether ``frame`` shows as one flat colour only because its transparency hides pixels that differ."""
    if shown.mode == "1" or frame.mode in _PLAIN_MODES and "transparency" not in frame.info:
        return False
    if not _uniform(shown):
        return False
    colour = frame.convert("RGBA").convert("RGB") if frame.mode in ("P", "PA") else frame.convert("RGB")
    return not _uniform(colour)


def image_pdf_bytes(path: Path, notes: list[str] | None = None) -> bytes:
    """The PDF of the image file at ``path``, one page per frame, each frame as it shows over white. A frame that
    shows as one flat colour only because transparency hides what its pixels hold adds a sentence to ``notes``:
    its page is blank as shown, and the attorney must know there is more in the file.

    Raises whatever Pillow or PyMuPDF raise for a damaged file (OSError, ValueError, SyntaxError ...): callers
    turn it into a reason. The pixel limit (decompression bombs) is checked before, by
    :func:`matters.exhibits.ingest.spec._check_image_pixels`."""
    pdf = pymupdf.open()
    with Image.open(path) as image:
        frames = getattr(image, "n_frames", 1)
        pass_through = (frames == 1 and image.format in _PASS_THROUGH_FORMATS and image.mode in _PLAIN_MODES
                        and "transparency" not in image.info)
        for frame in ImageSequence.Iterator(image):
            frame.load()
            dpi_x, dpi_y = _dpi(frame)
            width_pt, height_pt = frame.width * 72 / dpi_x, frame.height * 72 / dpi_y
            page = pdf.new_page(width=width_pt, height=height_pt)
            if pass_through:
                stream = Path(path).read_bytes()
            else:
                shown = flattened(frame)
                if notes is not None and _hidden_by_transparency(frame, shown):
                    notes.append(f"Page {page.number + 1} of the image is fully transparent: it shows as a blank "
                                 "page, though its pixels hold an image. Open the original to see it.")
                stream = _png(shown)
            page.insert_image(page.rect, stream=stream, keep_proportion=False)
    try:
        return pdf.tobytes(garbage=1)  # the images are compressed already
    finally:
        pdf.close()
