"""How figures are shown to attorneys: one set of filters for every page (``{% load display %}``).

Each takes the stored value (milliseconds, bytes, a count, tok/s, Bates numbers, an amount's key, an ISO date, a
status, a finding's detail) and returns the words a person reads; an empty or missing value shows as an en dash
rather than "None". Views building a message call the same functions (:func:`count`, :func:`plural`,
:func:`bates_range`), so a page and a message never word one figure two ways.
"""

import datetime as dt
import re
from decimal import Decimal, InvalidOperation

from django import template
from django.template.defaultfilters import filesizeformat

register = template.Library()

MISSING = "–"

# Plurals the pages use that English does not make with a bare "s".
_IRREGULAR = {"box": "boxes", "copy": "copies", "entry": "entries", "family": "families", "party": "parties",
              "match": "matches", "try": "tries"}




def plural(noun: str, number: int) -> str:
    """``noun`` as ``number`` of it needs it: "page" or "pages", "redaction box" or "redaction boxes" (only the last
    word changes; "-x", "-s", "-ch", "-sh" take "es", a consonant before "y" makes "ies")."""
    if number == 1:
        return noun
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        last = _IRREGULAR[last]
    elif re.search(r"(?:x|s|ch|sh)$", last):
        last += "es"
    elif re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last


@register.filter
def count(value, noun: str) -> str:
    """``3|count:"page"`` → "3 pages", ``1|count:"box"`` → "1 box", ``2|count:"redaction box"`` → "2 redaction
    boxes"; thousands grouped ("1,204 pages")."""
    if value is None or value == "":
        return MISSING
    number = int(value)
    return f"{number:,} {plural(noun, number)}"


def numbers(values) -> str:
    """Page or paragraph numbers as a list a person reads: "3", "3 and 7", "1, 4 and 9"."""
    words = [str(v) for v in values]
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


@register.filter
def duration(milliseconds) -> str:
    """A duration given in milliseconds: "840 ms", "12.4 s", "1 min 51 s", "2 h 05 min"."""
    if milliseconds is None or milliseconds == "":
        return MISSING
    ms = float(milliseconds)
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@register.filter
def tok_s(value) -> str:
    """A speed in tokens per second, to one decimal: "31.4 tok/s"."""
    if value is None or value == "":
        return MISSING
    return f"{float(value):.1f} tok/s"


@register.filter
def size(value) -> str:
    """A file size: "44 bytes" for small files, "2.1 MB (2,203,118 bytes)" past a kilobyte, so the exact figure
    (which a hash or a production log may be checked against) stays beside the readable one."""
    if value is None or value == "":
        return MISSING
    number = int(value)
    if number < 1024:
        return count(number, "byte")
    return f"{filesizeformat(number)} ({number:,} bytes)"


@register.simple_tag
def bates_range(first: str, last: str) -> str:
    """A range of Bates numbers as productions write it: "X000101–X000117", or the one number of a one-page range."""
    if not first:
        return MISSING
    if not last or last == first:
        return first
    return f"{first}–{last}"


# Currencies written with their symbol; others by their ISO 4217 code ("CHF 1,200.00").
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}
PERCENT = "PCT"  # matters.drafts.verifier.money.PERCENT: a percentage's key, "PCT:12.5"


def _grouped(value: Decimal) -> str:
    return f"{value:,.2f}" if value == value.quantize(Decimal("0.01")) else f"{value:,}"


@register.filter
def amount(key) -> str:
    """An amount as the verifier keys it (``matters.drafts.verifier.money.AmountMention.key``, "USD:2500.00") in
    the words a brief uses: "$2,500.00", "CHF 1,200.00", "12.5%" for a percentage ("PCT:12.5"). A bare number
    ("2500.00", the figures or words of an amount) is grouped: "2,500.00". Anything else is shown as it is."""
    if key is None or key == "":
        return MISSING
    currency, _, figure = str(key).rpartition(":")
    try:
        value = Decimal(figure)
    except InvalidOperation:
        return str(key)
    if currency == PERCENT:
        return f"{value.normalize():f}%"
    if not currency:
        return _grouped(value)
    symbol = _SYMBOLS.get(currency)
    sign, value = ("-" if value < 0 else ""), abs(value)
    return f"{sign}{symbol}{_grouped(value)}" if symbol else f"{sign}{currency} {_grouped(value)}"


@register.filter
def day(value) -> str:
    """A date as an attorney writes it: "November 19, 2018", from a date, a datetime or an ISO string
    ("2018-11-19"); a string that is no date is shown as it is."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value[:10])
        except ValueError:
            return value
    return f"{value.strftime('%B')} {value.day}, {value.year}"


# Statuses whose stored name does not read as words once its underscores are spaces.
_STATUS_WORDS = {"needs_password": "needs a password", "needs_record_cite": "needs a record cite",
                 "done": "done", "stamping": "stamping"}


@register.filter
def words(status) -> str:
    """A stored status (``needs_password``) as words: "needs a password"; others with their underscores as spaces
    ("not_computed" → "not computed")."""
    if status is None or status == "":
        return MISSING
    return _STATUS_WORDS.get(str(status), str(status).replace("_", " "))


@register.filter
def share(value) -> str:
    """A share from 0 to 1 as a whole percentage, rounded down so a near-duplicate's 0.996 never reads as the 100 %
    of an identical text: 0.8571 → "85%"; "—" when missing."""
    if value is None or value == "":
        return MISSING
    return f"{int(float(value) * 100 + 1e-9)}%"  # 0.29 * 100 is 28.999... in binary floating point


def _percent(value) -> str:
    return f"{float(value):.0f}%"


def _readings(values) -> str:
    return " or ".join(day(v) for v in values) if isinstance(values, list) else day(values)


# A finding's detail key (matters.drafts.verifier): its label and how its value is shown.
_DETAIL = {
    "readings": ("Read as", _readings),
    "qualifier": ("Written", str),
    "nearest": ("Nearest date in the evidence", day),
    "value": ("Amount", amount),
    "words": ("In words", amount),
    "figures": ("In figures", amount),
    "year": ("Year", str),
    "asserts": ("Asserts", str),
    "ocr_similarity": ("Matched in OCR text at", _percent),
    "closest_similarity": ("Closest passage in the evidence", lambda v: f"{_percent(v)} alike"),
    "low_ocr_confidence": ("Lowest OCR confidence of its pages", _percent),
    "only_in_word_change": ("Only in a Word change", lambda v: f"{v.get('where', '')} of Exhibit {v.get('exhibit')}"),
}


@register.filter
def detail_rows(detail) -> list[tuple[str, str]]:
    """A finding's ``detail`` (a dict, matters.models.Finding) as labelled words, in the dict's order:
    ``{"readings": ["2018-11-19"]}`` → ``[("Read as", "November 19, 2018")]``. A key no one wrote a label for reads
    as its words ("some_key" → "Some key"), a list as its items joined. The asserted text of an uncited sentence
    (``{"asserts": ..., "value": "Judge Fakename"}``) is shown as written, not as an amount."""
    rows = []
    for key, value in (detail or {}).items():
        if key == "value" and "asserts" in detail:
            rows.append(("Written", str(value)))
            continue
        label, shown = _DETAIL.get(key, (key.replace("_", " ").capitalize(), None))
        if shown is None:
            shown = (lambda v: ", ".join(map(str, v))) if isinstance(value, list) else str
        try:
            rows.append((label, shown(value)))
        except (TypeError, ValueError, AttributeError):  # a detail of an older shape: shown as stored
            rows.append((label, str(value)))
    return rows


@register.filter
def quoted(text) -> str:
    """``text`` between curly quotes, unless it is already quoted: a search typed as ``"a phrase"`` shows as
    “a phrase”, not as “"a phrase"”."""
    text = str(text or "").strip()
    inner = text[1:-1]
    if len(text) >= 2 and text[0] in "\"“" and text[-1] in "\"”" and not re.search("[\"“”]", inner):
        text = inner
    return f"“{text}”"


@register.filter
def clip(text, length: int = 80) -> str:
    """``text`` cut at a word boundary to at most ``length`` characters, an ellipsis marking the cut ("The
    landlord served…"); a text that fits is returned whole. Show the whole text in a ``title`` attribute beside."""
    text = " ".join(str(text or "").split())
    length = int(length)
    if len(text) <= length:
        return text
    cut = text[:length]
    space = cut.rfind(" ")
    if space > length // 3:
        cut = cut[:space]
    return cut.rstrip(" ,;:.–-") + "…"
