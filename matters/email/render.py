"""Lay out a message as the pages of its exhibit: the header block, then the body, as a PDF (US Letter, 1-inch
margins less a quarter), with PyMuPDF's Story layout (MuPDF's HTML engine, its built-in fonts with their fallbacks
for other scripts; right-to-left scripts read back from the text layer in their presentation forms).

The header block and a plain-text body are markup written here, every character of the message escaped. An HTML
body is laid out as HTML, from the sanitised fragment :func:`matters.email.html_body.sanitised_html` leaves (no
attribute that names a resource survives it, and MuPDF's Story reads nothing but the fonts named below, from a
local folder: nothing is fetched). The pages have a text layer, which the ingest child reads as it reads any PDF.
Django-free.
"""

import html
import logging
import re
from datetime import UTC
from pathlib import Path

import pymupdf

from matters.html_pdf import html_pdf

from .calendar import Calendar
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
# An HTML body is set in a proportional face, as mail programs show it, and one that has no ligature substitutions:
# Liberation Sans (Arial's metrics; installed by scripts/setup.sh as fonts-liberation2) writes "file" into the text
# layer where MuPDF's own sans and serif faces write "ﬁle". Where it is not installed, the HTML body is set in the
# monospaced face instead (its layout kept, its text the same).
_HTML_CSS = """
div.html { font-size: 10pt; }
div.html p { margin: 0 0 6pt 0; white-space: normal; }
div.html pre { white-space: pre-wrap; font-family: monospace; }
div.html table { border-collapse: collapse; margin: 2pt 0 6pt 0; }
div.html td, div.html th { border: 0.5pt solid #999; padding: 1pt 4pt; vertical-align: top; }
div.html blockquote { margin: 0 0 6pt 12pt; padding-left: 6pt; border-left: 1pt solid #999; }
div.html span.image { color: #555; }
"""
_FONT_FOLDERS = ("/usr/share/fonts/truetype/liberation2", "/usr/share/fonts/truetype/liberation")
_FONT_FILES = {("normal", "normal"): "LiberationSans-Regular.ttf", ("bold", "normal"): "LiberationSans-Bold.ttf",
               ("normal", "italic"): "LiberationSans-Italic.ttf", ("bold", "italic"): "LiberationSans-BoldItalic.ttf"}
# MuPDF's Story never breaks a line inside a word: a run of characters without a space wider than the line runs off
# the page, and the text layer keeps only what fits on it (87 characters of a 20,000-character run), while laying
# the run out takes time that grows with the square of its length (20,000 characters 0.8 s; 2 MB past 300 s). A
# run is therefore broken every RUN_CHARACTERS characters, fewer than a line holds (88 in the monospaced 9.5 pt
# face; an HTML body's 10 pt Liberation Sans fits 53 of its widest capital, W): every character of it is on the
# page and in the text layer, on lines of its own, and the layout time grows with the length. (A table cell is
# narrower than a line: a long run in one can still be cut at the cell's edge.)
RUN_CHARACTERS = 48
_LONG_RUN = re.compile(rf"\S{{{RUN_CHARACTERS}}}(?=\S)")
# In markup, an entity or one character that is neither a space nor part of a tag is one character of a run.
_LONG_MARKUP_RUN = re.compile(rf"(?:&#?\w+;|[^\s<>]){{{RUN_CHARACTERS}}}(?=[^\s<>])")
_TAG = re.compile(r"(<[^>]*>)")
_PAGE = pymupdf.paper_rect("letter")
_MARGIN_PT = 54
logger = logging.getLogger(__name__)


def _html_font() -> tuple[str, pymupdf.Archive | None]:
    """The CSS that sets an HTML body's face, and the archive its files are read from (None: the monospaced face,
    when Liberation Sans is not installed)."""
    for folder in _FONT_FOLDERS:
        if all((Path(folder) / name).is_file() for name in _FONT_FILES.values()):
            faces = "".join(f"@font-face {{ font-family: BodyFace; font-weight: {weight}; font-style: {style}; "
                            f"src: url({name}); }}\n" for (weight, style), name in _FONT_FILES.items())
            return faces + "div.html { font-family: BodyFace; }\n", pymupdf.Archive(folder)
    return "div.html { font-family: monospace; }\n", None


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
    parts = [f'<p class="head"><b>{html.escape(name)}:</b> {_escaped(value)}</p>'
             for name, value in header_lines(message)]
    parts.append('<p class="rule"></p>')
    tail = []
    if notes:
        tail.append('<p class="rule"></p>')
        tail += [f'<p class="note">{html.escape(note)}</p>' for note in notes]
    if message.body_html.strip():
        after = [_paragraph(line) for line in message.body_after_html.splitlines()]
        font_css, archive = _html_font()
        try:
            return _pdf("".join(parts + [f'<div class="html">{broken_markup_runs(message.body_html)}</div>']
                                + after + tail),
                        css=_CSS + _HTML_CSS + font_css, archive=archive)
        except Exception as exc:  # MuPDF's layout of markup it cannot place; the text rendering still reads
            logger.warning("HTML body could not be laid out: %s", exc)
            tail.append(f'<p class="note">{html.escape(_HTML_FAILED.format(kind=type(exc).__name__))}</p>')
    body = message.body if message.body.strip() else "(This message has no body text.)"
    parts += [_paragraph(line) for line in body.splitlines()]
    return _pdf("".join(parts + tail))


_HTML_FAILED = ("The message's HTML body could not be laid out as HTML ({kind}); its text is shown instead, and the "
                "original is kept unchanged.")


_METHODS = {"REQUEST": "an invitation (REQUEST)", "REPLY": "a reply (REPLY)", "CANCEL": "a cancellation (CANCEL)",
            "PUBLISH": "a published calendar (PUBLISH)", "COUNTER": "a counter-proposal (COUNTER)"}


def calendar_pdf(calendar: Calendar, notes: list[str] = ()) -> bytes:
    """A calendar item's pages: what it is (RFC 5546 method), then each event or task with its summary,
    organizer, attendees (one a line, with their replies), start and end (see :class:`CalendarItem`), location,
    recurrence, status and description, and ``notes`` at the end."""
    method = _METHODS.get(calendar.method, calendar.method or "no method given")
    parts = [f'<p class="head"><b>Calendar item:</b> {html.escape(method)}, '
             f'{len(calendar.items)} event(s) or task(s)</p>']
    for number, item in enumerate(calendar.items, start=1):
        parts.append('<p class="rule"></p>')
        lines = [(f"{item.kind.capitalize()} {number}", item.summary or "(no summary)"),
                 ("Organizer", item.organizer), ("Start", item.start),
                 ("End" if item.kind == "event" else "Due", item.end), ("Location", item.location),
                 ("Recurs", item.recurrence), ("Status", item.status), ("UID", item.uid)]
        parts += [f'<p class="head"><b>{html.escape(name)}:</b> {_escaped(value)}</p>'
                  for name, value in lines if value]
        if item.attendees:
            parts.append('<p class="head"><b>Attendees:</b></p>')
            parts += [_paragraph(f"  {attendee}") for attendee in item.attendees]
        if item.description:
            parts.append('<p class="head"><b>Description:</b></p>')
            parts += [_paragraph(line) for line in item.description.splitlines()]
    if notes:
        parts.append('<p class="rule"></p>')
        parts += [f'<p class="note">{html.escape(note)}</p>' for note in notes]
    return _pdf("".join(parts))


def listing_pdf(title: str, rows: list[str]) -> bytes:
    """A page (or pages) titled ``title`` listing ``rows``, one line each: a mailbox's messages."""
    parts = [f'<p class="head"><b>{html.escape(title)}</b></p>', '<p class="rule"></p>']
    parts += [_paragraph(row) for row in rows] or [_paragraph("(no messages)")]
    return _pdf("".join(parts))


def broken_runs(text: str) -> str:
    """``text`` with a line break after every :data:`RUN_CHARACTERS` characters of a run without white space
    (nothing else changed), so that each piece fits on a line."""
    return _LONG_RUN.sub(lambda match: match.group(0) + "\n", text)


def broken_markup_runs(markup: str) -> str:
    """``markup`` (sanitised HTML) with ``<br>`` after every :data:`RUN_CHARACTERS` characters (an entity counts
    as one) of a run of text without white space; tags and their attributes are left as they are."""
    return "".join(part if part.startswith("<") else _LONG_MARKUP_RUN.sub(lambda m: m.group(0) + "<br>", part)
                   for part in _TAG.split(markup))


def _escaped(value: str) -> str:
    return html.escape(broken_runs(value)).replace("\n", "<br>")


def _paragraph(line: str) -> str:
    # A blank line keeps its height.
    if not line.strip():
        return "<p>&#160;</p>"
    return "".join(f"<p>{html.escape(piece)}</p>" for piece in broken_runs(line).split("\n"))


def _pdf(markup: str, css: str = _CSS, archive: pymupdf.Archive | None = None) -> bytes:
    return html_pdf(f"<body>{markup}</body>", css, page=_PAGE, margin_pt=_MARGIN_PT, archive=archive)
