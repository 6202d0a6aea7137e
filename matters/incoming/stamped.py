"""Read the Bates number a producing party stamped on a page: text near the top or bottom edge that looks like a
prefix and digits (``DEF000123``, ``DEF 000123``, ``DEF-000123``)."""

import re

import pymupdf

BATES_PATTERN = re.compile(r"\b([A-Z][A-Z0-9_]{1,14})[ -]?(\d{4,12})\b")
EDGE_SHARE = 0.12  # the top and bottom eighth of the page, as displayed


def _edge_text(page: pymupdf.Page) -> str:
    visible = page.rect
    top, bottom = visible.y0 + visible.height * EDGE_SHARE, visible.y1 - visible.height * EDGE_SHARE
    words = []
    for x0, y0, x1, y1, word, *_ in page.get_text("words"):
        rect = pymupdf.Rect(x0, y0, x1, y1) * page.rotation_matrix
        if rect.y1 <= top or rect.y0 >= bottom:
            words.append((rect.y0, rect.x0, word))
    return " ".join(word for _, _, word in sorted(words))


def bates_on_page(page: pymupdf.Page, ocr_text: str = "") -> str | None:
    """The Bates number at the page's top or bottom edge; for a page without a text layer, looked for in the
    first and last three lines of its OCR text. None if there is none."""
    candidates = BATES_PATTERN.findall(_edge_text(page))
    if not candidates and ocr_text:
        lines = [line for line in ocr_text.splitlines() if line.strip()]
        candidates = BATES_PATTERN.findall(" ".join(lines[:3] + lines[-3:]))
    if not candidates:
        return None
    prefix, digits = candidates[-1]
    return f"{prefix}{digits}"
