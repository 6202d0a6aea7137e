"""The words of a displayed page with their boxes, from its text layer or, for a page read by OCR, from Tesseract
on the page image: what the redaction search matches and what lies under a redaction box (the privilege log's
prefill, the production's leak scan)."""

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytesseract
from django.conf import settings

from matters.models import Page


@dataclass(frozen=True)
class Word:
    """A word on a displayed page: its box in points and the line it belongs to (for phrases)."""

    rect: tuple[float, float, float, float]
    text: str
    line: tuple


def _ocr_words(page: pymupdf.Page, dpi: int, lang: str) -> list[Word]:
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    with tempfile.TemporaryDirectory(prefix="lawdesk-redact-") as work:
        path = Path(work) / "page.png"
        pixmap.save(path)
        data = pytesseract.image_to_data(str(path), lang=lang, config=f"--psm 1 --dpi {dpi}",
                                         output_type=pytesseract.Output.DICT)
    scale = 72 / dpi
    words = []
    for i, text in enumerate(data["text"]):
        if not text.strip():
            continue
        x, y, w, h = data["left"][i], data["top"][i], data["width"][i], data["height"][i]
        words.append(Word((x * scale, y * scale, (x + w) * scale, (y + h) * scale), text,
                          (data["block_num"][i], data["par_num"][i], data["line_num"][i])))
    return words


def page_words(page: Page, pdf_page: pymupdf.Page) -> list[Word]:
    """The words of ``page`` with their boxes on the displayed page: from the PDF text layer, or for a page whose
    text came from OCR, from Tesseract on the page image."""
    if page.source == Page.Source.OCR:
        return _ocr_words(pdf_page, settings.LAWDESK_OCR_DPI, settings.LAWDESK_OCR_LANG)
    words = []
    for x0, y0, x1, y1, text, block, line, _ in pdf_page.get_text("words", sort=True):
        shown = (pymupdf.Rect(x0, y0, x1, y1) * pdf_page.rotation_matrix).normalize()
        words.append(Word(tuple(shown), text, (block, line)))
    return words


def centre_of(word: Word) -> pymupdf.Point:
    """The centre of ``word``'s box on the displayed page: a word is under a box when its centre is."""
    x0, y0, x1, y1 = word.rect
    return pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)

