"""Text forms the verifier reads: the draft flattened onto one line (offsets unchanged), sentences, and the
normalised word form that quotations are matched in."""

import bisect
import re
import unicodedata
from dataclasses import dataclass

from matters.exhibits.reading import reading_form

# str.translate with a mapping takes its slow path on any non-ASCII key: 7 ms for a 220 KB brief, against under one
# for a substitution of the few characters there are.
_FLATTEN = re.compile("[\n\r\t\f\v\u00a0\u2028]")


def flatten(text: str) -> str:
    """``text`` with line breaks and tabs as spaces, same length, so a citation broken across lines
    (``728 F.2d 911,\\n915``) reads as on one line and every offset still points into the original."""
    return _FLATTEN.sub(" ", text)


_WORD = re.compile(r"[0-9a-z§$%]+")


def match_words(text: str) -> str:
    """Words of ``text`` for matching quotations: the reading form (:func:`matters.exhibits.reading.reading_form`:
    ligatures, NFC, one quotation mark and one dash, line-end hyphenation joined, transcript line numbers
    dropped), then NFKC, lower case, apostrophes dropped, every other punctuation mark a word break; words
    joined by single spaces.

    ``“The Court’s holding—”`` becomes ``the courts holding``. Punctuation is not compared: a quotation's
    commas and quotation marks are rendered differently by every PDF and OCR engine, while a changed word is
    what misquotes a source.
    """
    return match_words_of_reading(reading_form(text))


def match_words_of_reading(reading: str) -> str:
    """:func:`match_words` of text already in its reading form (``Page.reading_text``, made when the page is
    saved): the reading form is most of the cost, and a verification reads thousands of pages."""
    text = unicodedata.normalize("NFKC", reading).replace("'", "")
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int


# A period ends a sentence after a word of three or more letters that is not a citation abbreviation, after a
# digit, or after a closing bracket or quotation mark; and only before a capital, a bracket or a quotation mark.
_ABBREVIATIONS = {
    "supp", "cir", "app", "dist", "inc", "corp", "ltd", "stat", "evid", "civ", "crim", "cal", "fed", "jan", "feb",
    "mar", "apr", "aug", "sept", "sep", "oct", "nov", "dec", "bros", "assn", "dept", "gov", "nos", "para", "art",
    "sec", "etc", "ann", "rev", "super", "div", "cty", "twp", "mfg", "ins", "mut", "nat", "int", "bhd", "ass'n",
    "jr", "sr", "esq", "hon", "proc", "reg", "admin", "comm", "cong", "pet", "resp", "mem", "op", "br", "aff",
    "decl", "dep", "tr", "pls", "defs", "def", "pl",
}
# The word before a period is read from at most this many characters back: searching the whole stretch since the
# last sentence end made a run of abbreviations ("Ex. Ex. Ex. ...") quadratic. No abbreviation is this long.
_WORD_BEFORE = 40
_END = re.compile(r"([.?!])(['\"”’)\]]*)(\s+)(?=[A-Z(\[\"“'‘])")
_LAST_WORD = re.compile(r"[\w'’]+$")
_INITIALS = re.compile(r"\b[A-Z]\.[A-Z]$")


def sentences(text: str) -> list[Sentence]:
    """Split ``text`` into sentences with offsets; legal abbreviations (``v.``, ``U.S.``, ``Cir.``, ``Id.``,
    ``Ex.``) do not end one."""
    flat = flatten(text)
    bounds: list[Sentence] = []
    start = 0
    for match in _END.finditer(flat):
        stop = match.start(1)
        word = _LAST_WORD.search(flat, max(start, stop - _WORD_BEFORE), stop)
        closing = match.group(2)
        if match.group(1) == "." and not closing and flat[stop - 1:stop] not in (")", "]", '"', "”", "’", "'"):
            token = word.group(0) if word else ""
            if not token or (not token[-1].isdigit() and (len(token) < 3 or token.lower() in _ABBREVIATIONS)):
                continue
            if _INITIALS.search(flat, max(0, stop - 4), stop):
                continue  # U.S. / N.Y. style
        end = match.end(2)
        if flat[start:end].strip():
            bounds.append(Sentence(start, end))
        start = match.end(3)
    if flat[start:].strip():
        bounds.append(Sentence(start, len(flat.rstrip())))
    return bounds


class Spans:
    """Half-open spans ``[start, end)`` of a text, asked whether a span overlaps any of them in O(log n), where
    testing every span made the checks of a long draft quadratic (10,000 dates against 10,000 quotations).

    Built from any spans (they may overlap one another); :meth:`add` takes only a span that overlaps none of
    those held (check with :meth:`overlaps` first), which keeps the furthest end of every prefix right."""

    def __init__(self, spans=()):
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._reach: list[int] = []  # the furthest end among the spans up to this one, in order of start
        for start, end in sorted(spans):
            self._starts.append(start)
            self._ends.append(end)
            self._reach.append(max(end, self._reach[-1]) if self._reach else end)

    def __iter__(self):
        """The held spans ``(start, end)``, in order of start."""
        return iter(zip(self._starts, self._ends))

    def overlaps(self, start: int, end: int) -> bool:
        """Whether some held span ``(s, e)`` has ``s < end`` and ``start < e``."""
        i = bisect.bisect_left(self._starts, end)
        return i > 0 and self._reach[i - 1] > start

    def ends_within(self, start: int, end: int) -> int | None:
        """The furthest end of the held spans lying wholly inside ``[start, end)``; None when none does."""
        found = None
        i = bisect.bisect_left(self._starts, start)
        while i < len(self._starts) and self._starts[i] < end:
            if self._ends[i] <= end and (found is None or self._ends[i] > found):
                found = self._ends[i]
            i += 1
        return found

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)
        self._reach.insert(i, max(end, self._reach[i - 1]) if i else end)
