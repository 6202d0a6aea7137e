"""How figures are shown to attorneys: one set of filters for every page (``{% load display %}``).

Each takes the stored value (milliseconds, bytes, a count, tok/s, Bates numbers) and returns the words a person
reads; an empty or missing value shows as an en dash rather than "None".
"""

from django import template
from django.template.defaultfilters import filesizeformat

register = template.Library()

MISSING = "–"

# Plurals the pages use that English does not make with a bare "s".
_IRREGULAR = {"box": "boxes", "copy": "copies", "entry": "entries", "family": "families", "party": "parties",
              "match": "matches", "try": "tries"}


@register.filter
def count(value, noun: str) -> str:
    """``3|count:"page"`` → "3 pages", ``1|count:"box"`` → "1 box"; thousands grouped ("1,204 pages")."""
    if value is None or value == "":
        return MISSING
    number = int(value)
    word = noun if number == 1 else _IRREGULAR.get(noun, noun + "s")
    return f"{number:,} {word}"


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
