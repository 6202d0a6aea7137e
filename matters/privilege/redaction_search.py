"""Redaction boxes picked by search: every match of words or a pattern on an exhibit's pages, for example every
social security number. Words and their boxes come from the PDF text layer, or for a page read by OCR from
Tesseract's word boxes (``image_to_data``) on the page image rendered as the viewer shows it.
"""

import time

import pymupdf
import regex as _regex
from django.core.exceptions import ValidationError
from django.db import transaction

from matters import storage
from matters.models import Exhibit, Page, Redaction
from matters.permissions import require
from matters.privilege.page_words import Word, page_words
from matters.privilege.services import check_reason_code, redaction_save

SEARCH_MARGIN_PT = 1.0
MAX_PATTERN_CHARS = 200
# A pattern typed by a user runs in the web server: one with catastrophic backtracking ("(.*?)*Q{5}") would hold
# the process, and every other user's requests, for as long as it runs. All its matching in one request gets
# this many seconds, through the ``regex`` package's own timeout (the standard library's ``re`` has none).
PATTERN_BUDGET_S = 5.0


class TimedPattern:
    """A compiled search pattern whose matching, all calls together, stops once it has used its budget.

    Only the time spent inside the pattern's own matching counts: reading a page (OCR of a scan takes seconds
    on a slow machine) does not use up the budget of the pattern that searches it.
    Raises ValidationError (with a message for the user) once PATTERN_BUDGET_S seconds of matching are spent."""

    def __init__(self, compiled: "_regex.Pattern", budget_s: float = PATTERN_BUDGET_S):
        self.compiled = compiled
        self.budget_s = budget_s
        self.spent_s = 0.0

    def _timed_out(self):
        raise ValidationError(
            f"The pattern took more than {self.budget_s:g} seconds to search this exhibit and was stopped: it "
            "backtracks too much (nested repeats such as (.*)*). Write a simpler pattern; no box was added.")

    def _run(self, match):
        left = self.budget_s - self.spent_s
        if left <= 0:
            self._timed_out()
        started = time.monotonic()
        try:
            return match(left)
        except TimeoutError:
            self._timed_out()
        finally:
            self.spent_s += time.monotonic() - started

    def search(self, text: str):
        return self._run(lambda left: self.compiled.search(text, timeout=left))

    def finditer(self, text: str):
        return self._run(lambda left: list(self.compiled.finditer(text, timeout=left)))


def match_boxes(words: list[Word], pattern: TimedPattern) -> list[tuple[tuple[float, float, float, float], str]]:
    """Boxes (with the matched text) over every match of ``pattern`` in the lines of ``words``; a match that
    spans several words of a line gets one box over them."""
    lines: dict[tuple, list[Word]] = {}
    for word in words:
        lines.setdefault(word.line, []).append(word)
    found = []
    for line_words in lines.values():
        text, spans = "", []
        for word in line_words:
            if text:
                text += " "
            spans.append((len(text), len(text) + len(word.text), word))
            text += word.text
        for match in pattern.finditer(text):
            if match.end() == match.start():
                continue
            hit = [w for start, end, w in spans if start < match.end() and end > match.start()]
            rect = pymupdf.Rect()
            for word in hit:
                rect |= pymupdf.Rect(word.rect)
            rect = (rect + (-SEARCH_MARGIN_PT, -SEARCH_MARGIN_PT, SEARCH_MARGIN_PT, SEARCH_MARGIN_PT))
            found.append((tuple(rect), match.group(0)))
    return found


def compile_pattern(query: str, *, regex: bool) -> TimedPattern:
    """The search a user typed as a pattern: literal words (case-insensitive) or a regular expression (the
    standard library's syntax: ``regex`` in its VERSION0 mode), with its matching limited in time
    (:class:`TimedPattern`). Raises ValidationError for an empty, too long or invalid pattern."""
    query = query.strip()
    if not query or len(query) > MAX_PATTERN_CHARS:
        raise ValidationError(
            {"query": f"Type the words or pattern to redact (up to {MAX_PATTERN_CHARS} characters)."})
    try:
        return TimedPattern(_regex.compile(query if regex else _regex.escape(query), _regex.IGNORECASE | _regex.V0))
    except _regex.error as error:
        raise ValidationError({"query": f"The pattern is not a valid regular expression: {error}."}) from error


def redactions_from_search(*, exhibit: Exhibit, query: str, reason: str, user, regex: bool = False) -> list[Redaction]:
    """Add a redaction over every match of ``query`` on every page of ``exhibit`` (for example every social
    security number: ``\\b\\d{3}-\\d{2}-\\d{4}\\b`` with ``regex=True``); return the boxes added, all or none.
    Raises PermissionDenied unless ``user`` may change the matter's exhibits (``change_exhibits``); ValidationError
    on ``query`` for a pattern that cannot be used, on ``reason`` for an unknown reason code."""
    require(user, "change_exhibits", exhibit.matter)
    pattern = compile_pattern(query, regex=regex)
    check_reason_code(reason)
    added = []
    # All or nothing: a pattern stopped on a later page leaves no boxes from the earlier ones.
    with transaction.atomic(), pymupdf.open(storage.display_pdf(exhibit)) as doc:
        for page in exhibit.pages.order_by("number"):
            if page.source == Page.Source.NONE or (page.source != Page.Source.OCR and not pattern.search(page.text)):
                continue
            for rect, _text in match_boxes(page_words(page, doc[page.number - 1]), pattern):
                added.append(redaction_save(page=page, rect=rect, reason=reason, user=user, found_by=query))
    return added
