"""Images in every mode Pillow opens reach OCR as they show on screen, composited on white; a page that shows marks
and reads as no text is reported, never left a silent blank."""

import numpy
import pymupdf
import pytest
from django.urls import reverse
from PIL import Image, ImageDraw, ImageFont

from matters.exhibits.ingest.images import image_pdf_bytes

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
SIZE = (640, 200)


def drawn(mode: str, background, ink, word: str = "INVOICE 4471") -> Image.Image:
    image = Image.new(mode, SIZE, background)
    ImageDraw.Draw(image).text((30, 70), word, fill=ink, font=ImageFont.truetype(FONT, 56))
    return image


def deep_grey() -> Image.Image:
    """A 16-bit grey scan: white is 65535, which an 8-bit conversion that clips at 255 turns into all white."""
    values = numpy.asarray(drawn("L", 255, 0)).astype(numpy.uint16) * 257
    return Image.fromarray(values)


def transparent_palette() -> Image.Image:
    image = drawn("P", 0, 1)
    image.putpalette([0, 0, 0, 0, 0, 0])  # both entries black: only the transparency makes the background white
    image.info["transparency"] = 0
    return image


MODES = {
    "RGBA over transparent black": lambda: drawn("RGBA", (0, 0, 0, 0), (0, 0, 0, 255)),
    "LA": lambda: drawn("LA", (0, 0), (0, 255)),
    "P with transparency": transparent_palette,
    "I;16": deep_grey,
    "CMYK": lambda: drawn("CMYK", (0, 0, 0, 0), (0, 0, 0, 255)),
    "1": lambda: drawn("1", 1, 0),
}


def shown(pdf: bytes) -> list[numpy.ndarray]:
    with pymupdf.open("pdf", pdf) as doc:
        return [numpy.frombuffer(page.get_pixmap(dpi=72, colorspace=pymupdf.csGRAY, alpha=False).samples,
                                 dtype=numpy.uint8) for page in doc]


# (mode, suffix, how Pillow compresses it): every mode in the containers that can hold it. An RGBA TIFF with JPEG
# compression is how the page that came in blank was stored: MuPDF's own reading of it gave a black page.
CASES = [(mode, suffix, None) for mode in MODES for suffix in (".tif", ".png")
         if not (suffix == ".png" and mode == "CMYK")  # PNG has no CMYK
         and not (suffix == ".tif" and mode == "P with transparency")]  # TIFF keeps no palette transparency
CASES.append(("RGBA over transparent white", ".tif", "jpeg"))
MODES["RGBA over transparent white"] = lambda: drawn("RGBA", (255, 255, 255, 0), (0, 0, 0, 255))


@pytest.mark.parametrize(("mode", "suffix", "compression"), CASES)
def test_every_mode_shows_dark_text_on_white(tmp_path, mode, suffix, compression):
    path = tmp_path / f"page{suffix}"
    MODES[mode]().save(path, **({"compression": compression} if compression else {}))
    [pixels] = shown(image_pdf_bytes(path))
    # Mostly white paper with black letters: the text covers a few per cent of the page.
    assert numpy.median(pixels) == 255, mode
    assert 0.01 < (pixels < 128).mean() < 0.2, mode


def test_a_multi_page_tiff_gives_a_page_per_frame_in_each_mode(tmp_path):
    frames = [MODES[mode]() for mode in ("RGBA over transparent black", "CMYK", "1")]
    path = tmp_path / "bundle.tif"
    frames[0].save(path, save_all=True, append_images=frames[1:], compression="tiff_deflate")
    pages = shown(image_pdf_bytes(path))
    assert len(pages) == 3
    assert all(0.01 < (pixels < 128).mean() < 0.2 for pixels in pages)


def test_content_hidden_by_transparency_is_noted(tmp_path):
    image = drawn("RGBA", (255, 255, 255, 0), (0, 0, 0, 0))  # black letters, every pixel fully transparent
    path = tmp_path / "ghost.png"
    image.save(path)
    notes: list[str] = []
    [pixels] = shown(image_pdf_bytes(path, notes))
    assert pixels.min() == 255
    assert notes == ["Page 1 of the image is fully transparent: it shows as a blank page, though its pixels hold an "
                     "image. Open the original to see it."]


@pytest.mark.ocr
@pytest.mark.django_db
def test_an_rgba_tiff_and_its_other_modes_are_read_by_ocr(matter, tmp_path, ingest):
    frames = [drawn("RGBA", (0, 0, 0, 0), (0, 0, 0, 255), "INVOICE 4471"), deep_grey(),
              drawn("CMYK", (0, 0, 0, 0), (0, 0, 0, 255), "RECEIPT 9052")]
    path = tmp_path / "scan.tif"
    frames[0].save(path, save_all=True, append_images=frames[1:])
    exhibit = ingest(matter, path)
    assert exhibit.status == "ready", exhibit.reason
    pages = list(exhibit.pages.order_by("number"))
    assert [page.source for page in pages] == ["ocr", "ocr", "ocr"]
    assert "4471" in pages[0].text and "4471" in pages[1].text and "9052" in pages[2].text

    screenshot = tmp_path / "screenshot.tif"
    drawn("RGBA", (255, 255, 255, 0), (0, 0, 0, 255), "LEDGER 3318").save(screenshot, compression="jpeg")
    page = ingest(matter, screenshot).pages.get()
    assert page.source == "ocr" and "3318" in page.text


@pytest.mark.ocr
@pytest.mark.django_db
def test_an_image_of_marks_that_read_as_no_text_is_reported(matter, tmp_path, ingest, client, attorney):
    image = Image.new("RGBA", SIZE, (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    for x in range(40, 600, 40):  # a hand-drawn sketch: strokes, no letters
        draw.line((x, 30, x + 20, 170), fill=(0, 0, 0, 255), width=6)
    path = tmp_path / "sketch.tif"
    image.save(path)
    exhibit = ingest(matter, path)
    page = exhibit.pages.get()
    assert page.text == "" and page.unread_ink
    client.force_login(attorney)
    html = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert "marks on this page were read as no text" in html
