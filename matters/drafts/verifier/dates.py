"""Dates in text, read the way the matter reads them.

Forms: ``March 3, 2021``, ``Mar. 3rd, 2021``, ``Sept. 5, 2020``, ``March 23d, 2021``, ``3 March 2021``,
``3rd of March, 2021``, ``the ninth day of July, 2021``, ``this 1st day of March 2025``, ``2021-03-03``,
``03/03/2021``, ``3-3-21`` and ``03.03.2021``; ranges ``March 9–13, 2012``, ``March 9 to 13, 2012``, ``from
March 9 to March 13, 2012``, ``March 30 – April 2, 2012`` (every day of the range is a reading to check); an
``on or about`` before a date is kept as its qualifier. With ``yearless=True`` (a draft), a date without a year
(``On May 1, the landlord ...``) takes the year of the nearest full date before it (else after it) in the
text; with none, it is returned with ``problem`` set, to be reported as unreadable. A numeric date whose day and
month could be swapped is read in the matter's order (``mdy`` or ``dmy``); where both readings are real dates it
is ``ambiguous`` and both are kept.
Section numbers (``§§ 2.3, 4.1``) and docket numbers are not dates: a numeric date needs three parts with the
same separator and is never read right after ``§`` or ``section``.

A parser library (dateparser, datefinder) reads far more forms but gives no character offsets and cannot say
that ``03/04/2021`` has two readings, which is the finding an attorney needs.
"""

import bisect
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
# A pattern opening with a month names the months' first letters in a lookahead, and one opening with a digit a
# digit: ``re`` can then skip to where a match may start, which it cannot from a ``\b`` (a third of the time).
_MONTH_AHEAD = r"(?=[jfmasondJFMASOND])"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th|d)?"
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
    "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}
_ORDINAL = (r"(?P<ordinal>(?:twenty|thirty)[\s-](?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|"
            + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + r"|[0-3]?\d(?:st|nd|rd|th|d)?)")
_YEAR = r"(?P<year>[12]\d{3})"
_WORDY = [
    re.compile(rf"(?=[tT])\b(?:the|this)\s+{_ORDINAL}\s+day\s+of\s+{_MONTH},?\s+(?:in\s+the\s+year\s+)?{_YEAR}\b",
               re.IGNORECASE),
    re.compile(rf"{_MONTH_AHEAD}\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"(?=\d)\b{_DAY}\s+(?:day\s+)?(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
]
_MONTH2 = _MONTH.replace("?P<month>", "?P<month2>")
_DAY_WORD = re.compile(r"day", re.IGNORECASE)
# "and" joins a range only after "between" ("between March 9 and 13, 2012"); "March 18 and April 29, 2020" is
# two dates.
_RANGE = re.compile(
    rf"{_MONTH_AHEAD}\b{_MONTH}\s+{_DAY}\s*(?P<sep>[-–—]|\bto\b|\bthrough\b|\bthru\b|\buntil\b|\band\b)\s*(?:{_MONTH2}\s+)?"
    r"(?P<day2>[0-3]?\d)(?:st|nd|rd|th|d)?,?\s+" + _YEAR + r"\b", re.IGNORECASE)
# A date with no year: capitalised month (so "may 5" as a verb is not one), not followed by a year.
_YEARLESS = re.compile(
    r"(?=[JFMASOND])\b(?P<month>" + "|".join(m.capitalize() for m in sorted(MONTHS, key=len, reverse=True)) + r")\.?\s+"
    r"(?P<day>[0-3]?\d)(?:st|nd|rd|th|d)?\b(?![,.]?\s*(?:[12]\d{3}|[-–—/]|\d))")
_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)
# Dates sharing one year: "March 18 and April 29, 2020", "May 1, 2 and 3, 2019".
_SHARED_YEAR = re.compile(r"^[\s,]*(?:(?:and|or|&|to|through)\s+)?$")
_ON_OR_ABOUT = re.compile(r"\b(?:on\s+or\s+about|on\s+or\s+around|in\s+or\s+about|about|approximately|"
                          r"circa)\s*$", re.IGNORECASE)
_YEAR_WINDOW = 2000
_ISO = re.compile(r"(?=[12])(?<![\d.\-/])(?P<year>[12]\d{3})-(?P<a>\d{2})-(?P<b>\d{2})(?![\d\-/])")
_NUMERIC = re.compile(
    r"(?=\d)(?<![\d.\-/§])(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})(?![\d/]|[.\-]\d)"
)
_SECTION_BEFORE = re.compile(r"(§|\bsections?|\bsecs?\.|\bpara(?:graph)?s?\.?|\bno\.|\bnos\.)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class DateMention:
    """A date in text: ``readings`` are the ISO dates it can mean, the matter's reading first (two when the day
    and month of a numeric date could be swapped and both readings are real dates).

    ``days``: for a range, every ISO day of it (``readings`` then holds its first day). ``qualifier``: ``on or
    about`` (or ``approximately`` ...) as written before it. ``written_order``: ``mdy`` or ``dmy`` for a numeric
    date only one order can read (``15/4/2019`` is ``dmy``), else ''. ``year_from``: for a date written without
    a year, the text of the date its year was taken from. ``problem``: why it cannot be read (no year to be had)."""

    start: int
    end: int
    text: str
    readings: tuple[str, ...]
    days: tuple[str, ...] = ()
    qualifier: str = ""
    written_order: str = ""
    year_from: str = ""
    problem: str = ""
    joined: bool = False  # a range written as two full dates ("Aug 1, 2024 - Aug 31, 2024")
    # For a range joined from numeric dates whose day and month could be swapped: every ISO day of the range the
    # other order reads (``03/04/2021 to 05/06/2021``: April 3 to June 5), when that is a range too.
    other_days: tuple[str, ...] = ()

    @property
    def ambiguous(self) -> bool:
        """Two readings, as a single numeric date (``03/04/2021``) or a joined range of them has."""
        return (len(self.readings) > 1 and not self.days) or bool(self.other_days)


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


def _day_of(match: re.Match) -> int:
    if match.groupdict().get("ordinal"):
        word = match.group("ordinal").lower().replace(" ", "-")
        if word[0].isdigit():
            return int(re.match(r"\d+", word).group(0))
        if "-" in word:
            tens, unit = word.split("-", 1)
            return (20 if tens == "twenty" else 30) + _ORDINALS[unit]
        return _ORDINALS[word]
    return int(match.group("day"))


def find_dates(text: str, order: str = "mdy", yearless: bool = False,
               year_before: tuple[str, str] | None = None) -> list[DateMention]:
    """Every date in ``text``, in order of position. ``order`` is ``mdy`` or ``dmy`` (``Matter.date_order``).
    Invalid dates (``February 30, 2021``) are not dates. ``yearless``: also read dates written without a year
    (see the module docstring); evidence pages are indexed without them. ``year_before``: the last full date
    written just before ``text`` (the paragraphs before it), as ``(text, ISO date)``, whose year a date without
    one takes when no full date of ``text`` stands near it."""
    found: list[DateMention] = []
    taken = Spans()

    def add(match: re.Match, readings: list[str | None], **extra) -> None:
        unique = tuple(dict.fromkeys(r for r in readings if r))
        if not (unique or extra.get("problem")) or taken.overlaps(match.start(), match.end()):
            return
        taken.add(match.start(), match.end())
        qualifier = _ON_OR_ABOUT.search(text[max(0, match.start() - 30):match.start()])
        found.append(DateMention(match.start(), match.end(), match.group(0), unique,
                                 qualifier=" ".join(qualifier.group(0).split()).lower() if qualifier else "", **extra))

    for match in _RANGE.finditer(text):
        if match.group("sep").lower() == "and" and not _BETWEEN.search(text[max(0, match.start() - 12):match.start()]):
            continue
        year = int(match.group("year"))
        month = MONTHS[match.group("month").lower()]
        month2 = MONTHS[match.group("month2").lower()] if match.group("month2") else month
        first, last = _iso(year, month, int(match.group("day"))), _iso(year, month2, int(match.group("day2")))
        if first and last and first < last:
            span = (dt.date.fromisoformat(last) - dt.date.fromisoformat(first)).days
            if span <= 366:
                days = tuple((dt.date.fromisoformat(first) + dt.timedelta(days=k)).isoformat() for k in range(span + 1))
                add(match, [first], days=days)
    for k, pattern in enumerate(_WORDY):
        if k == 0 and not _DAY_WORD.search(text):
            continue  # "the ninth day of July": most texts have no "day"
        for match in pattern.finditer(text):
            month = MONTHS[match.group("month").lower()]
            add(match, [_iso(int(match.group("year")), month, _day_of(match))])
    for match in (_ISO.finditer(text) if "-" in text else ()):
        add(match, [_iso(int(match.group("year")), int(match.group("a")), int(match.group("b")))])
    for match in _NUMERIC.finditer(text):
        if _SECTION_BEFORE.search(text[max(0, match.start() - 12):match.start()]):
            continue
        if match.group("sep") == "." and len(match.group("year")) == 2:
            continue  # 1.2.21 is a section or version number far more often than a date
        a, b, year = int(match.group("a")), int(match.group("b")), _full_year(match.group("year"))
        month_first, day_first = _iso(year, a, b), _iso(year, b, a)
        written = "" if (month_first and day_first) or not (month_first or day_first) else (
            "mdy" if month_first else "dmy")
        add(match, [month_first, day_first] if order == "mdy" else [day_first, month_first], written_order=written)
    found = _join_ranges(text, found, order)
    if yearless:
        full = sorted((d for d in found if not d.problem), key=lambda d: d.start)
        starts = [d.start for d in full]
        for match in _YEARLESS.finditer(text):
            if taken.overlaps(match.start(), match.end()):
                continue
            i = bisect.bisect_left(starts, match.start())
            before = full[i - 1] if i and match.start() - full[i - 1].end <= _YEAR_WINDOW else None
            after = full[i] if i < len(full) and full[i].start - match.end() <= _YEAR_WINDOW else None
            shares = after is not None and _SHARED_YEAR.match(text[match.end():after.start]) is not None
            source = after if shares else before or after
            if source is None and year_before is not None and not any(d.start < match.start() for d in full):
                source = DateMention(0, 0, year_before[0], (year_before[1],))
            month, day = MONTHS[match.group("month").lower()], int(match.group("day"))
            if source is None:
                if 1 <= day <= 31:
                    add(match, [], problem="it gives no year, and no date with a year stands near it")
                continue
            year = int(source.readings[0][:4])
            add(match, [_iso(year, month, day)], year_from=source.text)
    found.sort(key=lambda d: d.start)
    return _join_ranges(text, found, order)


# Two full dates joined as a period: "Aug 1, 2024 - Aug 31, 2024", "from 08/01/2024 to 08/31/2024",
# "between May 1, 2019 and May 3, 2019". A statement period is printed this way, and it states every day of it.
_RANGE_JOIN = re.compile(r"^\s*(?:[-–—]|to|through|thru|until)\s*$", re.IGNORECASE)
_AND_JOIN = re.compile(r"^\s*and\s*$", re.IGNORECASE)


def _by_order(mention: DateMention, order: str) -> dict[str, str]:
    """The ISO date ``mention`` (a single date) reads as under each numeric order that can read it: both orders
    for a date no order changes (``March 3, 2021``, ``03/03/2021``), one for a date only one order reads
    (``31/08/2024``), and the two readings of a numeric date both orders read (the matter's ``order`` first)."""
    other = "dmy" if order == "mdy" else "mdy"
    if mention.written_order:
        return {mention.written_order: mention.readings[0]}
    if len(mention.readings) > 1:
        return {order: mention.readings[0], other: mention.readings[1]}
    return {order: mention.readings[0], other: mention.readings[0]}


def _join_ranges(text: str, found: list[DateMention], order: str = "mdy") -> list[DateMention]:
    """``found`` (in order of position) with every two single dates joined by a range word or dash read as one
    range of every day between them (up to a year long, first before last); the rest as they were.

    A range is written in one numeric order, so both ends are read in the same one: an end only one order reads
    settles the pair (``01/08/2024 - 31/08/2024`` is August 1 to 31, never January 8 to August 31, whatever
    ``order``, the matter's, says). Where both orders read the pair as a range, ``days`` is the range in
    ``order`` and ``other_days`` the other; where only one does, that one alone."""
    found = sorted(found, key=lambda d: d.start)
    out: list[DateMention] = []
    i = 0
    while i < len(found):
        first = found[i]
        second = found[i + 1] if i + 1 < len(found) else None
        if (second is not None and not first.days and not second.days and not first.problem and not second.problem
                and first.readings and second.readings):
            between = text[first.end:second.start]
            joined = _RANGE_JOIN.match(between) or (
                _AND_JOIN.match(between) and _BETWEEN.search(text[max(0, first.start - 12):first.start]))
            ranges = []
            if joined:
                ends_a, ends_b = _by_order(first, order), _by_order(second, order)
                # Each order both ends can be read in, the matter's first, with the range it reads (if any).
                ranges = [(o, _days(ends_a[o], ends_b[o])) for o in (order, "dmy" if order == "mdy" else "mdy")
                          if o in ends_a and o in ends_b]
                ranges = [(o, days) for o, days in ranges if days]
            if ranges:
                (read_as, days), *rest = ranges
                other = rest[0][1] if rest and rest[0][1] != days else ()
                settled = first.written_order or second.written_order or (read_as if len(ranges) == 1 and (
                    len(first.readings) > 1 or len(second.readings) > 1) else "")
                out.append(DateMention(first.start, second.end, text[first.start:second.end], (days[0],), days,
                                       qualifier=first.qualifier, written_order=settled,
                                       year_from=first.year_from or second.year_from, joined=True,
                                       other_days=other))
                i += 2
                continue
        out.append(first)
        i += 1
    return out


def _days(low: str, high: str) -> tuple[str, ...]:
    """Every ISO day from ``low`` to ``high``, both included; () unless ``high`` is 1 to 366 days after ``low``."""
    span = (dt.date.fromisoformat(high) - dt.date.fromisoformat(low)).days
    if not 0 < span <= 366:
        return ()
    return tuple((dt.date.fromisoformat(low) + dt.timedelta(days=k)).isoformat() for k in range(span + 1))


def display(iso: str) -> str:
    """``2021-03-04`` as ``March 4, 2021``."""
    day = dt.date.fromisoformat(iso)
    return f"{day.strftime('%B')} {day.day}, {day.year}"
