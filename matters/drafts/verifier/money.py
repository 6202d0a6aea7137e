"""Money amounts in text, normalised to a currency and a value in cents-exact decimal.

Forms: ``$1,250.00``, ``$1,250``, ``$1.2 million``, ``USD 1,250``, ``1,250 USD``, ``€1.250,00`` / ``1.250,00 €``
(where the matter writes numbers the continental way, ``Matter.number_format == "de"``), and written amounts
``five hundred dollars ($500)`` whose words and digits must agree (words read with text2num; ``seven dollars and
twenty cents`` is 7.20). An amount written only in words (``three hundred thousand dollars``) is an amount too, and
so is a percentage (``12.5%``, ``12.5 percent``, ``twenty per cent``, ``ten per centum``, ``50-percent``:
currency ``PCT``, four decimals), fractional ones too (``two and one-half percent`` and ``2 1/2%`` are 2.5,
``one-half of one percent`` is 0.5). Written-only amounts that state no sum are not read: ``pounds`` without
``sterling``, ``£`` or ``GBP`` beside it (a weight), ``not paid one dollar``, ``the first million dollars``. Figures
without a
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
from functools import lru_cache

from text_to_num import text2num

from .text import Spans

_SYMBOLS = {"$": "USD", "us$": "USD", "usd": "USD", "€": "EUR", "eur": "EUR", "£": "GBP", "gbp": "GBP"}
_SCALE = {"thousand": Decimal(1_000), "million": Decimal(1_000_000), "billion": Decimal(1_000_000_000)}

# Group and decimal separators per number format.
_NUMBER = {
    "en": r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?",
    "de": r"(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d{1,2})?",
}
# Patterns opening with a number word name its first letters in a lookahead, which lets ``re`` skip to them.
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


@lru_cache(maxsize=None)
def _patterns(number_format: str) -> list[re.Pattern]:
    """The figure patterns of a number format, compiled once (asked for by every paragraph read). A leading
    lookahead names the characters a match can start with, which lets ``re`` skip to them."""
    number = _NUMBER[number_format]
    scale = r"(?:\s*(?P<scale>thousand|million|billion)\b)?"
    return [
        re.compile(rf"(?P<sym>US\$|\$|€|£)\s?(?P<num>{number})(?![.,]?\d){scale}", re.IGNORECASE),
        re.compile(rf"(?=[UEG])\b(?P<sym>USD|EUR|GBP)\s?(?P<num>{number})(?![.,]?\d){scale}"),
        re.compile(rf"(?=\d)(?<![\d.,])(?P<num>{number}){scale}\s?(?P<sym>€|EUR\b|USD\b|GBP\b)"),
    ]


_WRITTEN = re.compile(
    rf"(?=[zotfsenhmb])\b(?P<words>{_WORD_NUMBER})\s*(?:and\s+(?P<cents>\d{{1,2}})/100\s+)?(?P<unit>dollars?|euros?|pounds?)"
    rf"(?:\s+and\s+(?P<centwords>{_WORD_NUMBER})\s*cents?\b)?"
    r"\s*\(\s*(?P<digits>[^)]{1,30})\)",
    re.IGNORECASE,
)
# An amount written only in words ("three hundred thousand dollars", "seven dollars and twenty cents"): a claim
# like any figure, checked against the evidence (an evidence page's words are indexed the same way).
_WORDS_ONLY = re.compile(
    rf"(?=[zotfsenhmb])\b(?P<words>{_WORD_NUMBER})\s*(?:and\s+(?P<cents>\d{{1,2}})/100\s+)?(?P<unit>dollars?|euros?|pounds?)\b"
    rf"(?:\s+and\s+(?P<centwords>{_WORD_NUMBER})\s*cents?\b)?",
    re.IGNORECASE,
)
_CURRENCY_CODE = re.compile(r"USD|EUR|GBP|€")
_UNIT = {"dollar": "USD", "euro": "EUR", "pound": "GBP"}
_UNIT_WORD = re.compile(r"\b(?:dollars?|euros?|pounds?)\b", re.IGNORECASE)
# Percentages: "12.5%", "12.5 percent", "twenty per cent". Kept as amounts with the currency ``PCT``.
# "per centum" is how statutes write it (26 U.S.C. § 6621: "3 percentage points", older codes "ten per centum");
# "50-percent" is a compound adjective ("a 50-percent interest").
_PERCENT_WORD = r"(?:\s?%|[\s-]?per\s?cent(?:um)?\b)"
_PERCENT = {
    "en": re.compile(rf"(?=\d)(?<![\w.,])(?P<num>\d{{1,3}}(?:\.\d{{1,4}})?){_PERCENT_WORD}", re.IGNORECASE),
    "de": re.compile(rf"(?=\d)(?<![\w.,])(?P<num>\d{{1,3}}(?:,\d{{1,4}})?){_PERCENT_WORD}", re.IGNORECASE),
}
_PERCENT_WORDS = re.compile(rf"(?=[zotfsenhmb])\b(?P<words>{_WORD_NUMBER})\s*(?P<per>per\s?cent(?:um)?)\b",
                            re.IGNORECASE)
_PER_CENT = re.compile(r"per\s?cent", re.IGNORECASE)
# Fractional percentages, as loan papers and statutes write rates: "two and one-half percent", "one-half percent",
# "three and a quarter per cent", "one-half of one percent" (0.5), "2 1/2%", "2½ percent". Their whole part is a
# number in words or figures; the fraction a half, quarter(s), third(s) or eighth(s). Read before the plain forms:
# "2 1/2%" once read as 2%, and "one-half of one percent" as 1%.
_FRACTION_WORD = {"half": 2, "halves": 2, "quarter": 4, "quarters": 4, "third": 3, "thirds": 3, "eighth": 8,
                  "eighths": 8}
_NUMERATOR_WORD = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "five": 5, "seven": 7}
_PERCENT_FRACTION = re.compile(
    rf"(?<![\w.,/])(?:(?P<whole>{_WORD_NUMBER}|\d{{1,3}}(?=[\s\-½¼¾⅓⅔⅛⅜⅝⅞]))[\s-]*(?:and\s+)?)?"
    r"(?:(?P<numerator>one|an?|two|three|five|seven)[\s-]+(?P<fraction>halfs?|halves|quarters?|thirds?|eighths?)"
    r"(?:\s+of\s+(?P<of>one|an?|1)\b)?|(?P<n>[1357])/(?P<d>[2348])|(?P<glyph>[½¼¾⅓⅔⅛⅜⅝⅞]))"
    r"\s?(?:%|per\s?cent(?:um)?\b)", re.IGNORECASE)
_GLYPHS = {"½": (1, 2), "¼": (1, 4), "¾": (3, 4), "⅓": (1, 3), "⅔": (2, 3), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8),
           "⅞": (7, 8)}
_PERCENT_ANCHOR = re.compile(r"%|per\s?cent", re.IGNORECASE)
# "pounds" is a weight as often as money: read as GBP only as "pounds sterling" or beside "£" or "GBP".
_STERLING_AFTER = re.compile(r"\s*(?:sterling\b|\(\s*(?:£|GBP\b))", re.IGNORECASE)
_STERLING_BEFORE = re.compile(r"(?:£|\bGBP|\bsterling)\W{0,3}$", re.IGNORECASE)
# Words before a written amount that make it no amount: a negation ("has not paid one dollar", "never received
# one dollar": nothing was paid), unless it bounds a figure ("not less than one dollar"); "first"/"last" ("the
# first million dollars", "every last dollar") name a part of a sum, not a sum.
_NEGATION_BEFORE = re.compile(r"(?:\b(?:not|never|no|nor|without)|n['’]t)(?:\s+[a-z]+){0,3}\s+$", re.IGNORECASE)
_BOUND_BEFORE = re.compile(r"\b(?:than|to|of|over|under|least|most)\s+$", re.IGNORECASE)
_PART_BEFORE = re.compile(r"\b(?:first|last)\s+$", re.IGNORECASE)
PERCENT = "PCT"


def _number_words(words: str) -> Decimal | None:
    """``three hundred thousand`` -> 300000 (text2num); None when the words are not one number."""
    words = " ".join(words.replace("-", " ").split())
    words = re.sub(r"\band\b", "", words).strip()
    try:
        return Decimal(text2num(" ".join(words.split()), "en"))
    except ValueError:
        return None


def _words_value(match: re.Match) -> Decimal | None:
    """The value the words of a written amount say, cents included (``seven dollars and twenty cents`` is
    7.20, whether the cents are written ``and 20/100`` or in words)."""
    value = _number_words(match.group("words"))
    if value is None:
        return None
    if match.group("cents"):
        value += Decimal(match.group("cents")) / 100
    if match.groupdict().get("centwords"):
        cents = _number_words(match.group("centwords"))
        if cents is None or cents >= 100:
            return None
        value += cents / 100
    return value.quantize(Decimal("0.01"))


def _percent_value(text: str, number_format: str) -> Decimal | None:
    """``12.5`` (en) or ``12,5`` (de) as Decimal('12.50'); a percentage may have more decimals than money."""
    try:
        return Decimal(text.replace(",", ".") if number_format == "de" else text)
    except InvalidOperation:
        return None


def _unit(word: str) -> str:
    return _UNIT[word.lower().rstrip("s")]


def _is_sum(text: str, match: re.Match, value: Decimal) -> bool:
    """Whether an amount written only in words (``match`` of ``_WORDS_ONLY`` in ``text``) states a sum of money:
    not a weight in pounds, a negation of one dollar, or the first or last N dollars of a sum."""
    before = text[max(0, match.start() - 40):match.start()]
    if _unit(match.group("unit")) == "GBP" and not (
            _STERLING_AFTER.match(text, match.end("unit")) or _STERLING_BEFORE.search(before)):
        return False
    if _PART_BEFORE.search(before):
        return False
    return not (value == 1 and _NEGATION_BEFORE.search(before) and not _BOUND_BEFORE.search(before))


def _percent_words(text: str):
    """Matches of ``_PERCENT_WORDS`` in order, tried only just before a "per cent", as written amounts are tried
    only before a currency word: an alternation of number words is slow to try at every position."""
    for anchor in _PER_CENT.finditer(text):
        window = _PERCENT_WORDS.finditer(text, max(0, anchor.start() - 200), min(len(text), anchor.end() + 60))
        yield from (m for m in window if m.start("per") == anchor.start())


def _fraction_value(match: re.Match) -> Decimal | None:
    """The value of a ``_PERCENT_FRACTION`` match: whole part plus fraction (``two and one-half`` is 2.5); a
    fraction "of one" percent is that fraction (``one-half of one percent`` is 0.5). None when the whole part's
    words are not one number, or the numerator is not below the denominator."""
    if match.group("glyph"):
        numerator, denominator = _GLYPHS[match.group("glyph")]
    elif match.group("n"):
        numerator, denominator = int(match.group("n")), int(match.group("d"))
    else:
        numerator = _NUMERATOR_WORD[match.group("numerator").lower()]
        denominator = _FRACTION_WORD.get(match.group("fraction").lower(), 2)
    if numerator >= denominator:
        return None
    value = Decimal(numerator) / Decimal(denominator)
    whole = match.group("whole")
    if whole:
        if match.group("of"):
            return None  # "two one-half of one percent" is no rate
        number = Decimal(whole) if whole.isdigit() else _number_words(whole)
        if number is None:
            return None
        value += number
    return value.quantize(Decimal("0.0001"))


def _percent_fractions(text: str):
    """Matches of ``_PERCENT_FRACTION`` in order, tried only just before a "%" or "per cent" (see
    :func:`_percent_words`)."""
    seen: set[tuple[int, int]] = set()
    for anchor in _PERCENT_ANCHOR.finditer(text):
        for m in _PERCENT_FRACTION.finditer(text, max(0, anchor.start() - 200), min(len(text), anchor.end() + 60)):
            if m.end() >= anchor.end() and m.start() <= anchor.start() and m.span() not in seen:
                seen.add(m.span())
                yield m


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
    codes = _CURRENCY_CODE.search(text) is not None
    for k, pattern in enumerate(_patterns(number_format)):
        if k and not codes:
            continue  # the second and third forms hold a currency code or "€"; most texts have none
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
    covered = Spans((w[0] for w in written))
    for unit in _UNIT_WORD.finditer(text):
        if covered.overlaps(unit.start(), unit.end()):
            continue
        for m in _WORDS_ONLY.finditer(text, max(0, unit.start() - 200), min(len(text), unit.end() + 60)):
            if m.start("unit") != unit.start() or taken.overlaps(m.start(), m.end()):
                continue
            value = _words_value(m)
            if value is not None and _is_sum(text, m, value):
                taken.add(m.start(), m.end())
                found.append(AmountMention(m.start(), m.end(), m.group(0), _unit(m.group("unit")), value))
    for m in _percent_fractions(text):
        value = _fraction_value(m)
        if value is not None and not taken.overlaps(m.start(), m.end()):
            taken.add(m.start(), m.end())
            found.append(AmountMention(m.start(), m.end(), m.group(0), PERCENT, value))
    for m in (*_PERCENT[number_format].finditer(text), *_percent_words(text)):
        if taken.overlaps(m.start(), m.end()):
            continue
        if "num" in m.groupdict():
            value = _percent_value(m.group("num"), number_format)
        else:
            value = _number_words(m.group("words"))
        if value is not None:
            taken.add(m.start(), m.end())
            found.append(AmountMention(m.start(), m.end(), m.group(0), PERCENT,
                                       Decimal(value).quantize(Decimal("0.0001"))))
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
    r"(?=[U$€£EG\d])(?:(?:US\$|\$|€|£|\b(?:USD|EUR|GBP)\b)\s?\d[\d.,]*\d"
    r"|(?<![\w.,])\d[\d.,]*\d\s?(?:€|\b(?:EUR|USD|GBP)\b))")


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
