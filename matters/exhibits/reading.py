"""Text as the page shows it: the one normalisation that search indexing, the verifier's quotation matcher and the
review panel's highlighting all read page text through. The stored ``Page.text`` stays exactly as extracted.

The reading form of a text:

- ligature characters U+FB00–U+FB06 (``ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ``) read as their letters, and the text is in Unicode NFC;
- curly and straight quotation marks are one mark (``"`` and ``'``), and every dash (en, em, figure, minus,
  non-breaking hyphen) a hyphen; a soft hyphen (U+00AD) is dropped;
- on a transcript page (see :func:`is_transcript`), the line numbers 1–25 in the margin are dropped, so they never
  break a quotation;
- a word hyphenated at a line end (``water-`` / ``proofing``) is joined (``waterproofing``). A compound that breaks
  at its own hyphen (``non-`` / ``compete``) is joined the same way; a reader of the reading form matches a
  hyphenated word both ways (:func:`hyphen_forms`), so ``non-compete`` and ``noncompete`` both find it.

:func:`reading_form_with_offsets` also returns, for each character of the reading form, the offset of the character
of the original text it came from, so a match in the reading form can be marked in the original (the review panel).
Django-free.
"""

import re
import unicodedata

# Unicode's own decompositions of the Alphabetic Presentation Forms ligatures (U+FB00–U+FB06).
_LIGATURES = {0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl", 0xFB05: "st", 0xFB06: "st"}
_MARKS = {
    "“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"', "″": '"',
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'",
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "﹘": "-", "﹣": "-", "－": "-",
}
_SOFT_HYPHEN = "\u00ad"
# Transcript margins number the lines of a page 1 to 25 (some courts 1 to 28); a number alone at the start of a line.
TRANSCRIPT_LINES = 25
_LINE_NUMBER = re.compile(r"^[ \t]*(2[0-5]|1\d|[1-9])(?=[ \t]|$)[ \t]*", re.MULTILINE)
# At least this many of the numbers 1..25 at line starts, rising, make a page a transcript page.
_MIN_TRANSCRIPT_LINES = 10
_LINE_END_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u00ad][ \t]*\r?\n\s*(?=[^\W\d_])")
_SOFT_HYPHENS = re.compile("\u00ad")


def _numbering(number: int, last: int) -> bool:
    """Whether a line starting with ``number`` continues a margin numbering that reached ``last``: it starts at 1
    (a page number alone on the first line, ``12``, is not line 12) and rises to 25 at most."""
    return number == 1 if last == 0 else last < number <= TRANSCRIPT_LINES


def is_transcript(text: str) -> bool:
    """Whether ``text`` is a transcript page: lines numbered in the margin, at least ten of the numbers 1–25 at the
    start of a line in rising order from 1 (a deposition or hearing page, as court reporters format them)."""
    last, seen = 0, 0
    for match in _LINE_NUMBER.finditer(text):
        number = int(match.group(1))
        if _numbering(number, last):
            last, seen = number, seen + 1
    return seen >= _MIN_TRANSCRIPT_LINES


def transcript_lines(text: str) -> dict[int, str]:
    """The numbered lines of a transcript page: ``{line number: text of that line}`` in reading form (a line
    whose words wrap onto an unnumbered line keeps them). Empty when ``text`` is not a transcript page, or when
    its margin numbers were extracted apart from the lines (a column of numbers, then the text): then no line can
    be told from another."""
    if not is_transcript(text):
        return {}
    lines: dict[int, str] = {}
    current, last = 0, 0
    for raw in text.splitlines():
        match = _LINE_NUMBER.match(raw)
        number = int(match.group(1)) if match else 0
        if match and _numbering(number, last):
            current = last = number
            raw = raw[match.end():]
        if current:
            lines[current] = (lines.get(current, "") + " " + reading_form(raw)).strip()
    if lines and not any(text for number, text in lines.items() if number != max(lines)):
        return {}  # every word after the last number: the numbers were a column of their own
    return lines


_PAGE_HEAD = re.compile(r"^\s*(?:Page\s+)?(\d{1,5})\s*$", re.IGNORECASE)
_PAGE_WORD = re.compile(r"^\s*Page\s+(\d{1,5})(?:\s+of\s+\d+)?\s*$", re.IGNORECASE)


def transcript_page_number(text: str) -> int | None:
    """The transcript's own page number printed on a page: a number alone (or ``Page N``) on its first non-empty
    line, unless that number is the margin's line 1 (the next line then starts with 2); or ``Page N`` on its
    last line. None when there is none."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    head = _PAGE_HEAD.match(lines[0])
    if head:
        number = int(head.group(1))
        following = _LINE_NUMBER.match(lines[1]) if len(lines) > 1 else None
        if not (number == 1 and following and following.group(1) == "2"):
            return number
    tail = _PAGE_WORD.match(lines[-1])
    return int(tail.group(1)) if tail else None


def _characters(text: str) -> tuple[list[str], list[int]]:
    """Ligatures, NFC and marks, character by character with the original offset of each."""
    out: list[str] = []
    origin: list[int] = []
    nfc = unicodedata.is_normalized("NFC", text)
    i, length = 0, len(text)
    while i < length:
        start = i
        cluster = text[i]
        i += 1
        if not nfc:  # a base character and the combining marks after it compose as one
            while i < length and unicodedata.combining(text[i]):
                cluster += text[i]
                i += 1
            cluster = unicodedata.normalize("NFC", cluster)
        for ch in cluster:
            replaced = _LIGATURES.get(ord(ch)) or _MARKS.get(ch, ch)
            out.extend(replaced)
            origin.extend([start] * len(replaced))
    return out, origin


def _drop(pattern: re.Pattern, chars: str, origin: list[int]) -> tuple[str, list[int]]:
    """Remove every match of ``pattern`` from ``chars``, keeping ``origin`` aligned."""
    pieces, kept, position = [], [], 0
    for match in pattern.finditer(chars):
        pieces.append(chars[position:match.start()])
        kept.extend(origin[position:match.start()])
        position = match.end()
    pieces.append(chars[position:])
    kept.extend(origin[position:])
    return "".join(pieces), kept


def reading_form_with_offsets(text: str) -> tuple[str, list[int]]:
    """The reading form of ``text`` and, per character of it, the offset in ``text`` it comes from (a list one
    longer than the form: its last item is ``len(text)``, so a span ``[s, e)`` of the form maps to
    ``[offsets[s], offsets[e - 1] + 1)`` of the original)."""
    if text.isascii():  # no ligature, mark or combining character to replace: every character is itself
        joined, origin = text, list(range(len(text)))
    else:
        chars, origin = _characters(text)
        joined = "".join(chars)
    if is_transcript(joined):
        joined, origin = _drop(_LINE_NUMBER, joined, origin)
    joined, origin = _drop(_LINE_END_HYPHEN, joined, origin)
    if _SOFT_HYPHEN in joined:
        joined, origin = _drop(_SOFT_HYPHENS, joined, origin)
    return joined, origin + [len(text)]


def reading_form(text: str) -> str:
    """The reading form of ``text`` (see the module docstring); ``Page.reading_text`` stores it for search."""
    return reading_form_with_offsets(text)[0]


# A word of letters joined by hyphens (``non-compete``, ``mother-in-law``).
HYPHENATED = re.compile(r"\b([^\W\d_]+(?:-[^\W\d_]+)+)\b")


def hyphen_forms(word: str) -> list[str]:
    """The forms a hyphenated word is found in: ``non-compete`` -> ``["non-compete", "noncompete"]``; a word
    without a hyphen is only itself. A compound broken at its own hyphen at a line end reads joined, and the same
    compound mid-line keeps its hyphen, so a reader must try both."""
    word = reading_form(word)
    if not HYPHENATED.fullmatch(word):
        return [word]
    return [word, word.replace("-", "")]
