"""PDF exports with PyMuPDF: a draft version as a document, and the verification report for the attorney's file.

Both are laid out from HTML by ``pymupdf.Story`` (MuPDF's own HTML layout: no browser, no network, no files
read). The draft's HTML is the sanitized Markdown rendering (formatting tags only); the report's comes from a
Django template, which escapes every value. A footer with the version's SHA-256, the audit log's head hash and
the page number is then written on every page as real text, so it can be read back from the file.
"""


import pymupdf
from django.template.loader import render_to_string

from matters.drafts.markdown import render_html
from matters.html_pdf import html_pdf
from matters.invisible import without_invisible

PAGE = pymupdf.paper_rect("letter")
MARGIN_PT = 72  # one inch; the footer line sits in the bottom margin
_DRAFT_CSS = """
body { font-family: serif; font-size: 12pt; line-height: 1.5; }
h1 { font-size: 16pt; text-align: center; } h2 { font-size: 14pt; } h3, h4, h5, h6 { font-size: 12pt; }
blockquote { margin-left: 36pt; margin-right: 36pt; }
code, pre { font-family: monospace; font-size: 10pt; }
sup { font-size: 8pt; }
"""
_REPORT_CSS = """
body { font-family: sans-serif; font-size: 9pt; line-height: 1.3; }
h1 { font-size: 14pt; } h2 { font-size: 11pt; margin-top: 12pt; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 0.5pt solid #888; padding: 2pt 3pt; vertical-align: top; text-align: left; }
th { background-color: #eee; }
.blocking { color: #a00; font-weight: bold; } .muted { color: #555; }
code { font-family: monospace; font-size: 8pt; }
"""


def _layout(html: str, css: str) -> pymupdf.Document:
    """Lay ``html`` out on Letter pages with one-inch margins; return the document."""
    return pymupdf.open("pdf", html_pdf(html, css, page=PAGE, margin_pt=MARGIN_PT))


def _finish(document: pymupdf.Document, *, title: str, footer: str) -> bytes:
    """Write ``footer`` (one or more lines) and the page number on every page, set the title; return the bytes."""
    document.set_metadata({"title": title, "subject": footer, "creator": "LawDesk", "producer": "LawDesk"})
    total = document.page_count
    for index, page in enumerate(document, start=1):
        y = PAGE.height - MARGIN_PT / 2
        page.insert_text((MARGIN_PT, y), footer.splitlines(), fontsize=6.5, lineheight=1.3, fontname="helv",
                         color=(0.35, 0.35, 0.35))
        page.insert_text((PAGE.width - MARGIN_PT - 40, y - 10), f"page {index} of {total}", fontsize=7,
                         fontname="helv", color=(0.35, 0.35, 0.35))
    data = document.tobytes(garbage=3, deflate=True)
    document.close()
    return data


def draft_pdf_bytes(*, text: str, title: str, footer: str) -> bytes:
    """Return a PDF of ``text`` read as Markdown (footnotes as numbered notes at the end). ``footer`` must be
    ASCII (it is written with a base-14 font): the version's SHA-256 and the audit log's head hash. Characters
    that show nothing yet change what a reader sees are left out, as from the Word export
    (:func:`matters.invisible.without_invisible`)."""
    text, title, footer = without_invisible(text), without_invisible(title), without_invisible(footer)
    html = f"<body>{render_html(text, reveal=False)}</body>"
    return _finish(_layout(html, _DRAFT_CSS), title=title, footer=footer)


def report_pdf_bytes(*, context: dict, title: str, footer: str) -> bytes:
    """Return the verification report as PDF, from ``templates/matters/drafts/export_report.html`` rendered with
    ``context`` (see ``matters.drafts.exports.report_context``)."""
    html = render_to_string("matters/drafts/export_report.html", context)
    return _finish(_layout(html, _REPORT_CSS), title=title, footer=footer)
