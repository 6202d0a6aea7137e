"""Lay out a message as the pages of its exhibit: the header block, then the body, as a PDF (US Letter, 1-inch
margins less a quarter), with PyMuPDF's Story layout (MuPDF's HTML engine, its built-in fonts with their fallbacks
for other scripts; right-to-left scripts read back from the text layer in their presentation forms).

The only markup laid out is the one written here: every header and body character is escaped first, so nothing a
message holds is interpreted, run or fetched (an HTML body reaches this module as text, from
:func:`matters.email.parse.html_to_text`). The pages have a text layer, which the ingest child reads as it reads
any PDF. Django-free.
"""

import html
from datetime import UTC

import pymupdf

from matters.html_pdf import html_pdf

from .parse import ParsedMessage

# Monospaced, as mail programs show plain text, and for the text layer's sake: MuPDF shapes proportional fonts with
# ligatures, and the page would then read "ﬁle" (U+FB01) where the message says "file"; its monospaced font has
# none. Spaces are kept as written (pre-wrap), so a plain-text table stays aligned.
_CSS = """
body { font-family: monospace; font-size: 9.5pt; }
p { margin: 0 0 2pt 0; white-space: pre-wrap; }
p.head { margin: 0 0 3pt 0; }
p.rule { margin: 6pt 0 8pt 0; border-bottom: 1px solid #888; }
p.note { font-size: 8.5pt; color: #555; }
"""
_PAGE = pymupdf.paper_rect("letter")
_MARGIN_PT = 54


def header_lines(message: ParsedMessage) -> list[tuple[str, str]]:
    """The header block, in the order review platforms print it: From, To, Cc, Bcc (only those present), Date as
    written with the instant in UTC after it, Subject, and the attachments by name."""
    lines = [("From", message.sender or "(none)")]
    lines += [(name, value) for name, value in (("To", message.to), ("Cc", message.cc), ("Bcc", message.bcc))
              if value]
    date = message.date_header or "(none)"
    if message.sent_at is not None:
        date += f" (UTC: {message.sent_at.astimezone(UTC):%Y-%m-%d %H:%M:%S})"
    lines += [("Date", date), ("Subject", message.subject or "(no subject)")]
    if message.attachments:
        lines.append(("Attachments", "; ".join(message.attachment_names)))
    return lines


def message_pdf(message: ParsedMessage, notes: list[str] = ()) -> bytes:
    """The message's pages as PDF bytes: its header block, a rule, its body (or a line saying it has none), and
    ``notes`` (what could not be read, S/MIME) in small type at the end."""
    parts = [f'<p class="head"><b>{html.escape(name)}:</b> {html.escape(value)}</p>'
             for name, value in header_lines(message)]
    parts.append('<p class="rule"></p>')
    body = message.body if message.body.strip() else "(This message has no body text.)"
    parts += [_paragraph(line) for line in body.splitlines()]
    if notes:
        parts.append('<p class="rule"></p>')
        parts += [f'<p class="note">{html.escape(note)}</p>' for note in notes]
    return _pdf("".join(parts))


def listing_pdf(title: str, rows: list[str]) -> bytes:
    """A page (or pages) titled ``title`` listing ``rows``, one line each: a mailbox's messages."""
    parts = [f'<p class="head"><b>{html.escape(title)}</b></p>', '<p class="rule"></p>']
    parts += [_paragraph(row) for row in rows] or [_paragraph("(no messages)")]
    return _pdf("".join(parts))


def _paragraph(line: str) -> str:
    # A blank line keeps its height.
    return f"<p>{html.escape(line)}</p>" if line.strip() else "<p>&#160;</p>"


def _pdf(markup: str) -> bytes:
    return html_pdf(f"<body>{markup}</body>", _CSS, page=_PAGE, margin_pt=_MARGIN_PT)
