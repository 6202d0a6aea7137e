"""Dates in text, read the way the matter reads them.

Forms: ``March 3, 2021``, ``Mar. 3rd, 2021``, ``3 March 2021``, ``3rd of March, 2021``, ``2021-03-03``,
``03/03/2021``, ``3-3-21`` and ``03.03.2021``. A numeric date whose day and month could be swapped is read in the
matter's order (``mdy`` or ``dmy``); where both readings are real dates it is ``ambiguous`` and both are kept.
Section numbers (``§§ 2.3, 4.1``) and docket numbers are not dates: a numeric date needs three parts with the
same separator and is never read right after ``§`` or ``section``.

A parser library (dateparser, datefinder) reads far more forms but gives no character offsets and cannot say
that ``03/04/2021`` has two readings, which is the finding an attorney needs.
"""

import datetime as dt
import re
from dataclasses import dataclass

from .text import Spans

MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>[12]\d{3})"
_WORDY = [
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+(?:day\s+)?(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
]
_ISO = re.compile(r"(?<![\d.\-/])(?P<year>[12]\d{3})-(?P<a>\d{2})-(?P<b>\d{2})(?![\d\-/])")
_NUMERIC = re.compile(
    r"(?<![\d.\-/§])(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})(?![\d/]|[.\-]\d)"
)
_SECTION_BEFORE = re.compile(r"(§|\bsections?|\bsecs?\.|\bpara(?:graph)?s?\.?|\bno\.|\bnos\.)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class DateMention:
    """A date in text: ``readings`` are the ISO dates it can mean, the matter's reading first; ``numeric_swap``
    is true when the day and month could be swapped and both readings are real dates."""

    start: int
    end: int
    text: str
    readings: tuple[str, ...]

    @property
    def ambiguous(self) -> bool:
        return len(self.readings) > 1


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None


def _full_year(text: str) -> int:
    year = int(text)
    if len(text) == 2:
        # Two-digit years in case papers are this century's up to the current year, the last century's after.
        year += 2000 if year <= dt.date.today().year % 100 else 1900
    return year


def find_dates(text: str, order: str = "mdy") -> list[DateMention]:
    """Every date in ``text``, in order of position. ``order`` is ``mdy`` or ``dmy`` (``Matter.date_order``).
    Invalid dates (``February 30, 2021``) are not dates."""
    found: list[DateMention] = []
    taken = Spans()

    def add(match: re.Match, readings: list[str | None]) -> None:
        unique = tuple(dict.fromkeys(r for r in readings if r))
        if not unique or taken.overlaps(match.start(), match.end()):
            return
        taken.add(match.start(), match.end())
        found.append(DateMention(match.start(), match.end(), match.group(0), unique))

    for pattern in _WORDY:
        for match in pattern.finditer(text):
            month = MONTHS[match.group("month").lower()]
            add(match, [_iso(int(match.group("year")), month, int(match.group("day")))])
    for match in _ISO.finditer(text):
        add(match, [_iso(int(match.group("year")), int(match.group("a")), int(match.group("b")))])
    for match in _NUMERIC.finditer(text):
        if _SECTION_BEFORE.search(text[max(0, match.start() - 12):match.start()]):
            continue
        if match.group("sep") == "." and len(match.group("year")) == 2:
            continue  # 1.2.21 is a section or version number far more often than a date
        a, b, year = int(match.group("a")), int(match.group("b")), _full_year(match.group("year"))
        month_first, day_first = _iso(year, a, b), _iso(year, b, a)
        add(match, [month_first, day_first] if order == "mdy" else [day_first, month_first])
    found.sort(key=lambda d: d.start)
    return found


def display(iso: str) -> str:
    """``2021-03-04`` as ``March 4, 2021``."""
    day = dt.date.fromisoformat(iso)
    return f"{day.strftime('%B')} {day.day}, {day.year}"
