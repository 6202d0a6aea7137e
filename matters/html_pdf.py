"""HTML laid out as PDF pages by MuPDF's Story (no browser, nothing fetched): the drafts' PDF export, the
privilege log's PDF and an email's display pages share this one loop."""

import io

import pymupdf


def html_pdf(html: str, css: str, *, page: pymupdf.Rect, margin_pt: float,
             archive: pymupdf.Archive | None = None) -> bytes:
    """Lay ``html`` (styled by ``css``) out on pages of size ``page`` (points, e.g. ``pymupdf.paper_rect("letter")``)
    with ``margin_pt`` points on every side, as many pages as it takes; return the PDF's bytes. ``archive``: where
    the CSS's ``@font-face`` files are (a local folder; MuPDF reads nothing else)."""
    story = pymupdf.Story(html=html, user_css=css, archive=archive)
    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    where = page + (margin_pt, margin_pt, -margin_pt, -margin_pt)
    more = True
    while more:
        device = writer.begin_page(page)
        more, _filled = story.place(where)
        story.draw(device)
        writer.end_page()
    writer.close()
    return buffer.getvalue()
