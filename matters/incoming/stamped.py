"""Read the Bates number a producing party stamped on a page: text near the top or bottom edge that looks like a
prefix and digits (``DEF000123``, ``DEF 000123``, ``DEF-000123``, ``ACME-DEF000123``, ``SUF000001.A``)."""

import re

import pymupdf

# A prefix starts with a letter and does not end in a digit; at least five digits; an optional ".suffix".
BATES_PATTERN = re.compile(
    r"(?<![\w-])([A-Za-z](?:[A-Za-z0-9_-]{0,28}[A-Za-z_])?)[ -]?(\d{5,15})(\.[A-Za-z0-9]{1,10})?(?![\w])"
)
EDGE_SHARE = 0.12  # the top and bottom eighth of the page, as displayed


def _edge_lines(page: pymupdf.Page) -> list[tuple[float, str]]:
    """Lines of text near the top or bottom edge, each with its distance from that edge, nearest first."""
    visible = page.rect
    top, bottom = visible.y0 + visible.height * EDGE_SHARE, visible.y1 - visible.height * EDGE_SHARE
    lines: dict[tuple[int, int], list[tuple[float, str]]] = {}
    distances: dict[tuple[int, int], float] = {}
    for x0, y0, x1, y1, word, block, line, _ in page.get_text("words"):
        rect = pymupdf.Rect(x0, y0, x1, y1) * page.rotation_matrix
        if rect.y1 <= top or rect.y0 >= bottom:
            key = (block, line)
            lines.setdefault(key, []).append((rect.x0, word))
            distance = min(rect.y0 - visible.y0, visible.y1 - rect.y1)
            distances[key] = min(distances.get(key, distance), distance)
    return sorted((distances[k], " ".join(w for _, w in sorted(v))) for k, v in lines.items())


def _first_match(texts: list[str]) -> str | None:
    for text in texts:
        for prefix, digits, suffix in BATES_PATTERN.findall(text):
            return f"{prefix}{digits}{suffix}"
    return None


def bates_on_page(page: pymupdf.Page, ocr_text: str = "") -> str | None:
    """The Bates number nearest the page's top or bottom edge; for a page without a text layer, looked for in the
    last three and first three lines of its OCR text. None if there is none."""
    found = _first_match([text for _, text in _edge_lines(page)])
    if found is None and ocr_text:
        lines = [line for line in ocr_text.splitlines() if line.strip()]
        found = _first_match(list(reversed(lines[-3:])) + lines[:3])
    return found
