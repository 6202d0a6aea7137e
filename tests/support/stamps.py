"""Where a stamp landed on a page as a reader sees it (after the page's /Rotate), for stamping tests."""

import pymupdf


def visual_hit(page: pymupdf.Page, text: str) -> tuple[pymupdf.Rect, pymupdf.Point]:
    """Where ``text`` is on the page as displayed, and its reading direction there."""
    hits = page.search_for(text)
    assert len(hits) == 1, (text, hits)
    rect = hits[0] * page.rotation_matrix
    line = next(line for block in page.get_text("dict")["blocks"] for line in block.get("lines", [])
                if any(text in span["text"] for span in line["spans"]))
    direction = pymupdf.Point(line["dir"]) * page.rotation_matrix - pymupdf.Point(0, 0) * page.rotation_matrix
    return rect, direction
