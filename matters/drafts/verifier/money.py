"""Money amounts in text, normalised to a currency and a value in cents-exact decimal.

Forms: ``$1,250.00``, ``$1,250``, ``$1.2 million``, ``USD 1,250``, ``1,250 USD``, ``€1.250,00`` / ``1.250,00 €``
(where the matter writes numbers the continental way, ``Matter.number_format == "de"``), and written amounts
``five hundred dollars ($500)`` whose words and digits must agree (words read with text2num). Figures without a
currency (``1,250.00`` in a ledger) are read from evidence pages only, as ``number``: a draft's ``$1,250.00`` is
grounded by a bank statement's ``1,250.00``.

A figure beside a currency sign or code that none of these forms reads with certainty (``$3.3500``,
``3.3500 €``, ``$1,25.00``, ``$1.250.000,5`` in a matter writing ``1,250.00``) is returned by
:func:`find_unreadable_amounts`, to be reported, never skipped.
"""

import bisect
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from text_to_num import text2num

from .text import Spans

_SYMBOLS = {"$": "USD", "us$": "USD", "usd": "USD", "€": "EUR", "eur": "EUR", "£": "GBP", "gbp": "GBP"}
_SCALE = {"thousand": Decimal(1_000), "million": Decimal(1_000_000), "billion": Decimal(1_000_000_000)}

# Group and decimal separators per number format.
_NUMBER = {
    "en": r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?",
    "de": r"(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d{1,2})?",
}
_WORD_NUMBER = (
    r"(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|"
    r"million|billion)(?:[\s-]+(?:and[\s-]+)?)?)+"
)


@dataclass(frozen=True)
class AmountMention:
    """An amount in text: ``currency`` (ISO 4217), ``value`` (Decimal, two places). ``words_value`` is what the
    written words say where the amount is written out too (``five hundred dollars ($500)``), else None."""

    start: int
    end: int
    text: str
    currency: str
    value: Decimal
    words_value: Decimal | None = None

    @property
    def key(self) -> str:
        return f"{self.currency}:{self.value}"

    @property
    def words_disagree(self) -> bool:
        return self.words_value is not None and self.words_value != self.value


def parse_number(text: str, number_format: str = "en") -> Decimal | None:
    """``1,250.00`` (en) or ``1.250,00`` (de) as Decimal('1250.00'); None when it is not a number."""
    if number_format == "de":
        text = text.replace(".", "").replace(",", ".")
    else:
        text = text.replace(",", "")
    try:
        return Decimal(text).quantize(Decimal("0.01"))
    except InvalidOperation:
        return None


def _patterns(number_format: str) -> list[re.Pattern]:
    number = _NUMBER[number_format]
    scale = r"(?:\s*(?P<scale>thousand|million|billion)\b)?"
    return [
        re.compile(rf"(?P<sym>US\$|\$|€|£)\s?(?P<num>{number})(?![.,]?\d){scale}", re.IGNORECASE),
        re.compile(rf"\b(?P<sym>USD|EUR|GBP)\s?(?P<num>{number})(?![.,]?\d){scale}"),
        re.compile(rf"(?<![\d.,])(?P<num>{number}){scale}\s?(?P<sym>€|EUR\b|USD\b|GBP\b)"),
    ]


_WRITTEN = re.compile(
    rf"\b(?P<words>{_WORD_NUMBER})\s*(?:and\s+(?P<cents>\d{{1,2}})/100\s+)?(?P<unit>dollars|euros|pounds)"
    r"(?:\s+and\s+(?P<centwords>[a-z\s-]+?)\s+cents)?"
    r"\s*\(\s*(?P<digits>[^)]{1,30})\)",
    re.IGNORECASE,
)
_UNIT = {"dollars": "USD", "euros": "EUR", "pounds": "GBP"}
_UNIT_WORD = re.compile(r"\b(?:dollars|euros|pounds)\b", re.IGNORECASE)


def _words_value(match: re.Match) -> Decimal | None:
    words = " ".join(match.group("words").replace("-", " ").split())
    words = re.sub(r"\band\b", "", words).strip()
    try:
        value = Decimal(text2num(" ".join(words.split()), "en"))
    except ValueError:
        return None
    if match.group("cents"):
        value += Decimal(match.group("cents")) / 100
    return value.quantize(Decimal("0.01"))


def find_amounts(text: str, number_format: str = "en") -> list[AmountMention]:
    """Every money amount in ``text`` in order of position; written amounts carry the value of their words."""
    found: list[AmountMention] = []
    taken = Spans()
    written = []
    seen: set[tuple[int, int]] = set()
    # The written-amount pattern is slow to try at every position: try it only just before a currency word.
    for unit in _UNIT_WORD.finditer(text):
        window_start = max(0, unit.start() - 200)
        for m in _WRITTEN.finditer(text, window_start, min(len(text), unit.end() + 60)):
            if m.start("unit") == unit.start() and m.span() not in seen:
                seen.add(m.span())
                written.append((m.span(), m.span("digits"), _words_value(m)))
    written.sort(key=lambda w: w[1])
    digit_starts = [ds for _, (ds, _), _ in written]
    for pattern in _patterns(number_format):
        for match in pattern.finditer(text):
            if taken.overlaps(match.start(), match.end()):
                continue
            value = parse_number(match.group("num"), number_format)
            if value is None:
                continue
            if match.group("scale"):
                value = (value * _SCALE[match.group("scale").lower()]).quantize(Decimal("0.01"))
            currency = _SYMBOLS[match.group("sym").lower()]
            words_value = None
            start, end = match.span()
            # The written amount whose figures in parentheses hold this match (the last one starting before it;
            # looked up by bisection, as a draft can hold thousands).
            i = bisect.bisect_right(digit_starts, start) - 1
            if i >= 0 and end <= written[i][1][1]:
                # The finding covers the words and the digits: they are one claim and must agree.
                words_value, (start, end) = written[i][2], written[i][0]
            taken.add(match.start(), match.end())
            found.append(AmountMention(start, end, text[start:end], currency, value, words_value))
    found.sort(key=lambda a: a.start)
    return found


_BARE = {
    "en": re.compile(r"(?<![\d.,$€£])(\d{1,3}(?:,\d{3})+(?:\.\d{2})?|\d+\.\d{2})(?![\d,]|\.\d)"),
    "de": re.compile(r"(?<![\d.,$€£])(\d{1,3}(?:\.\d{3})+(?:,\d{2})?|\d+,\d{2})(?![\d.]|,\d)"),
}


def find_bare_numbers(text: str, number_format: str = "en") -> list[Decimal]:
    """Figures written with grouping or cents but no currency (``1,250.00``, ``1,250``, ``99.50``), as values."""
    values = []
    for match in _BARE[number_format].finditer(text):
        value = parse_number(match.group(1), number_format)
        if value is not None:
            values.append(value)
    return values


# Anything a currency sign or code stands next to that looks like a figure: digits with dots and commas.
_CURRENCY_FIGURE = re.compile(
    r"(?:US\$|\$|€|£|\b(?:USD|EUR|GBP)\b)\s?\d[\d.,]*\d|(?<![\w.,])\d[\d.,]*\d\s?(?:€|\b(?:EUR|USD|GBP)\b)")


def find_unreadable_amounts(text: str, found: list[AmountMention]) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` of every currency figure in ``text`` that ``found`` (the amounts read from it by
    :func:`find_amounts`) does not cover whole: a figure LawDesk cannot read with certainty."""
    starts = sorted((a.start, a.end) for a in found)
    out = []
    for match in _CURRENCY_FIGURE.finditer(text):
        start, end = match.span()
        whole = any(s <= start and end <= e for s, e in starts[max(0, bisect.bisect_right(starts, (start, end)) - 3):
                                                                bisect.bisect_right(starts, (end, end))])
        if not whole:
            out.append((start, end, match.group(0)))
    return out
