"""Quotations in text, and how to find each one in a source with its proper alterations.

A quotation is text between double quotation marks, straight or curly. Alterations that Bluebook rule 5 allows
match their source: bracketed changes (``[t]he`` for ``The``; ``[the defendant]`` for ``he``; ``[sic]``),
omissions marked by an ellipsis (``...``, ``. . .``, ``…``) and the parentheticals ``(emphasis added)``,
``(internal quotation marks omitted)``, ``(citation omitted)``, ``(alteration in original)`` after it. Every
other difference of words is a misquotation; punctuation and capitalisation are not compared (see
:func:`matters.drafts.verifier.text.match_words`).
"""

import functools
import re
from dataclasses import dataclass

from matters.exhibits.reading import HYPHENATED, reading_form

from .text import Spans, match_words

# Curly quotation marks may pair across lines (a quotation of several paragraphs); straight ones only on one line.
CURLY_QUOTATION = re.compile(r"“([^“”]{2,2000}?)”")
STRAIGHT_QUOTATION = re.compile(r'(?<![\w"])"([^"\n]{2,2000}?)"(?![\w"])')
_PAIRS = [CURLY_QUOTATION, STRAIGHT_QUOTATION]
_ELLIPSIS = re.compile(r"\s*(?:\.\s?\.\s?\.(?:\s?\.)?|…)\s*")
_BRACKET = re.compile(r"\[([^\[\]]{0,60})\]")
_GAP = "qqgapqq"
# A bracketed insertion stands for at most this many words of the source ("[the defendant]" for "he").
_GAP_WORDS = 8


@dataclass(frozen=True)
class QuoteMention:
    """``start``/``end`` include the quotation marks; ``inner`` is the quoted text."""

    start: int
    end: int
    text: str
    inner: str

    @property
    def word_count(self) -> int:
        return _word_count(self.inner)


@functools.lru_cache(maxsize=50_000)
def _word_count(inner: str) -> int:
    # Asked of every quotation three times in a verification, and of the same quotation in every version of a draft.
    return len(match_words(_BRACKET.sub(" ", inner)).split())


def find_quotations(text: str) -> list[QuoteMention]:
    """Every double-quoted passage in ``text``, in order of position."""
    found: list[QuoteMention] = []
    taken = Spans()
    for pattern in _PAIRS:
        for match in pattern.finditer(text):
            if taken.overlaps(match.start(), match.end()):
                continue
            taken.add(match.start(), match.end())
            found.append(QuoteMention(match.start(), match.end(), match.group(0), match.group(1)))
    found.sort(key=lambda q: q.start)
    return found


def _variants(segment: str) -> list[str]:
    """The segment with bracketed alterations resolved: a bracket standing alone is a gap of up to a few words;
    a bracket inside a word is read with its letters ([t]he -> the) and without them (word[s] -> word); and the
    segment as written, for a source that prints the same brackets."""

    def standalone(match: re.Match) -> bool:
        before = segment[match.start() - 1:match.start()]
        after = segment[match.end():match.end() + 1]
        return not (before.isalnum() or after.isalnum())

    kept, dropped = [], []
    position = 0
    for match in _BRACKET.finditer(segment):
        kept.append(segment[position:match.start()])
        dropped.append(segment[position:match.start()])
        inner = match.group(1).strip().lower()
        if inner in ("sic", "sic!", "emphasis added", "emphasis in original", "alteration in original"):
            pass
        elif standalone(match):
            kept.append(f" {_GAP} ")
            dropped.append(f" {_GAP} ")
        else:
            kept.append(match.group(1))
        position = match.end()
    kept.append(segment[position:])
    dropped.append(segment[position:])
    # The source may itself print the brackets ("raise[s] the same"), quoted exactly: the segment as written.
    return list(dict.fromkeys(["".join(kept), "".join(dropped), segment]))


def _tokens(segment: str) -> list[str | tuple[str, ...]]:
    """Match words of ``segment``; a hyphenated word is a tuple of its two forms (``("non compete",
    "noncompete")``), since a compound broken at its own hyphen at a line end reads joined in the source."""
    form = reading_form(segment)
    tokens: list[str | tuple[str, ...]] = []
    position = 0
    for match in HYPHENATED.finditer(form):
        tokens += match_words(form[position:match.start()]).split()
        spaced = match_words(match.group(0))
        tokens.append((spaced, spaced.replace(" ", "")) if " " in spaced else spaced)
        position = match.end()
    return tokens + match_words(form[position:]).split()


@dataclass(frozen=True)
class _Words:
    """Whole words searched in match words: ``needle`` (words joined by single spaces) where it starts and ends
    at a space or an end of the text. What ``(?<!\\S)needle(?!\\S)`` finds, found with ``str.find``: a
    quotation's pattern compiled per quotation cost more than checking it, and most quotations are plain words."""

    needle: str

    def search(self, haystack: str, position: int = 0) -> "_Hit | None":
        at = haystack.find(self.needle, position)
        while at >= 0:
            end = at + len(self.needle)
            if (at == 0 or haystack[at - 1] == " ") and (end == len(haystack) or haystack[end] == " "):
                return _Hit(at, end)
            at = haystack.find(self.needle, at + 1)
        return None


@dataclass(frozen=True)
class _Hit:
    begin: int
    finish: int

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish


def _pattern(words: list[str | tuple[str, ...]]) -> "re.Pattern | _Words | None":
    if words and all(isinstance(w, str) and w != _GAP for w in words):
        return _Words(" ".join(words))
    parts: list[str] = []
    for word in words:
        if isinstance(word, tuple):
            parts.append("(?:" + "|".join(re.escape(w) for w in word) + ") ")
        elif word == _GAP:
            parts.append(f"(?:\\S+ ){{0,{_GAP_WORDS}}}")
        else:
            parts.append(re.escape(word) + " ")
    body = "".join(parts).rstrip(" ")
    if body.endswith("}"):  # a gap at the end matches nothing in particular
        body = body[: body.rfind("(?:")].rstrip(" ")
    if not body:
        return None
    return re.compile(r"(?<!\S)" + body + r"(?!\S)")


@dataclass(frozen=True)
class QuoteSearch:
    """A quotation prepared for matching: per segment between ellipses, the patterns of its bracket variants,
    and its plain words (for candidate lookup and similarity scoring)."""

    segments: list[list[re.Pattern]]
    plain: list[str]
    inner: str = ""

    @property
    def words(self) -> list[str]:
        return " ".join(self.plain).split()

    def find(self, haystack: str) -> tuple[int, int] | None:
        """Where every segment appears in ``haystack`` (match words), in order: the span from the first
        segment's start to the last one's end; None when any is missing."""
        position, first = 0, None
        for patterns in self.segments:
            best = None
            for pattern in patterns:
                hit = pattern.search(haystack, position)
                if hit and (best is None or hit.start() < best.start()):
                    best = hit
            if best is None:
                return None
            first = best.start() if first is None else first
            position = best.end()
        return (first or 0, position)

    def find_across(self, before: str, after: str) -> bool:
        """Whether the quotation runs from the end of page text ``before`` into the start of ``after`` (match
        words of two consecutive pages), with page furniture between its halves: after its first half, at most
        :data:`FOOT_WORDS` words close the first page (footer, page number, footnotes); before its second half,
        at most :data:`HEAD_WORDS` open the next (running head, page number, a court's filing header). Each half
        must match as quoted, with the same alterations allowed."""
        tokens = [m.start() for m in re.finditer(r"\S+", self.inner)]
        if len(tokens) < 2:
            return False
        before_words, after_words = before.split(), after.split()
        for cut in tokens[1:]:
            head, tail = prepare(self.inner[:cut]), prepare(self.inner[cut:])
            if not head.segments or not tail.segments:
                continue
            reach = FOOT_WORDS + 2 * len(head.words)
            end_of_page = " ".join(before_words[-reach:])
            found = head.find(end_of_page)
            if found is None or not _closes_page(end_of_page[found[1]:].split(), len(head.words)):
                continue
            start_of_page = " ".join(after_words[:HEAD_WORDS + 2 * len(tail.words)])
            found = tail.find(start_of_page)
            if found is not None and _opens_page(start_of_page[:found[0]].split(), len(tail.words)):
                return True
        return False


def _closes_page(rest: list[str], half: int) -> bool:
    """Whether the words ``rest`` after a quotation's first half (``half`` words) can be what closes a page: a
    footer and page number (a few words), or footnotes, which begin with their number or mark and follow a half of
    at least :data:`SPLICE_MIN_WORDS` words. Without this, a word or two of the quotation anywhere near the end
    of a page, then anything, then the rest on the next page, passed as one quotation."""
    if len(rest) <= FURNITURE_WORDS:
        return True
    return len(rest) <= FOOT_WORDS and half >= SPLICE_MIN_WORDS and bool(_NOTE_START.match(rest[0]))


def _opens_page(lead: list[str], half: int) -> bool:
    """Whether the words ``lead`` before a quotation's second half (``half`` words) can be what opens a page: a
    page number, or a running head or filing header, which carries numbers (a page, a docket, a date), before a
    half of at least :data:`SPLICE_MIN_WORDS` words."""
    if len(lead) <= FURNITURE_WORDS:
        return True
    return len(lead) <= HEAD_WORDS and half >= SPLICE_MIN_WORDS and any(c.isdigit() for w in lead for c in w)


# Page furniture between the halves of a quotation that runs over a page break, in match words: a footer, a page
# number and footnotes close a page (a long footnote runs to a few hundred words); a running head, a page number
# and a CM/ECF filing header open the next.
FOOT_WORDS = 300
HEAD_WORDS = 40
# Furniture of this many words may stand between the halves whatever they are (a footer with its page number);
# more only as footnotes or a numbered header, beside halves of at least SPLICE_MIN_WORDS words.
FURNITURE_WORDS = 12
SPLICE_MIN_WORDS = 3
# The first word of a footnote: its number or mark (1, 12., *, †, ‡, §, ¹).
_NOTE_START = re.compile(r"^(?:\d{1,3}[.)]?|[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]+)$")


def prepare(inner: str) -> QuoteSearch:
    """Prepare the quoted text ``inner`` for :meth:`QuoteSearch.find`."""
    segments, plain = [], []
    for segment in _ELLIPSIS.split(inner):
        variants = _variants(segment)
        patterns = [p for p in (_pattern(_tokens(v)) for v in variants) if p is not None]
        words = [w for w in match_words(variants[0]).split() if w != _GAP]
        if patterns and words:
            segments.append(patterns)
            plain.append(" ".join(words))
    return QuoteSearch(segments, plain, inner)
