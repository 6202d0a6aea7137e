"""Deadlines stated in a draft: a date said to be when a paper is due, and a period a paper is due within.

Read (pure Python, on a paragraph's flattened text):

- a **stated date**: a date the draft's date reader found (:mod:`matters.drafts.verifier.dates`) right after a
  cue that makes it a deadline: ``due`` (``is due on``, ``due by``, ``due no later than``), ``must be filed /
  served / submitted by`` (or ``on or before``, ``no later than``; ``was filed on`` is an event of the record,
  not a deadline), ``the deadline ... is``, ``the last day ...
  is``, ``no later than``, ``on or before``; a weekday before the date (``due on Monday, March 16, 2026``) is
  passed over;
- a **stated period**: ``within 14 days of service``, ``within fourteen (14) days after entry``, ``within 48
  hours of``, ``7 days before the hearing``.

Either counts only in a sentence that names court papers or filing (``response``, ``reply``, ``opposition``,
``answer``, ``brief``, ``motion``, ``appeal``, ``objection``, ``filed``, ``served``, ``deadline``, ``Rule`` ...):
"rent was due on March 1, 2019" is a fact of the record, checked as a date against the evidence, not a deadline.
"""

import re
from dataclasses import dataclass

_WEEKDAY = r"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+)?"
_CUE = re.compile(
    # "due" alone too ("is due March 16"): the optional word carries its own space, so one space is enough.
    r"(?:\bdue(?:\s+(?:on\s+or\s+before|on|by|no\s+later\s+than|before))?"
    r"|\b(?:filed|served|submitted|made|answered|lodged|noticed)\s+(?:on\s+or\s+before|by|no\s+later\s+than)"
    r"|\bdeadline\b[^.;]{0,80}?\b(?:is|was|falls\s+on|of|expires\s+on|runs\s+(?:to|until))"
    r"|\blast\s+day\b[^.;]{0,80}?\b(?:is|was)"
    r"|\bno\s+later\s+than|\bon\s+or\s+before|\bexpires\s+on)\s+(?:the\s+)?" + _WEEKDAY + r"$",
    re.IGNORECASE)
_COURT_WORDS = re.compile(
    r"\b(?:respon(?:se|d|ses)|repl(?:y|ies)|opposition|oppos(?:e|ing)|answer|brief|motion|appeal|objections?|"
    r"petition|complaint|memorandum|disclosures?|filed|fil(?:e|ing)|serv(?:ed|e|ice)|deadline|court|Rule\s+\d|"
    r"Fed\.\s*R\.|notice)\b", re.IGNORECASE)
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "twenty-one": 21, "twenty-eight": 28, "thirty": 30,
    "forty-five": 45, "sixty": 60, "ninety": 90,
}
_COUNT = (r"(?P<count>\d{1,4}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
          r"(?:\s*\((?P<digits>\d{1,4})\))?")
_PERIOD = re.compile(
    r"\b(?:(?P<within>within)\s+)?" + _COUNT + r"\s+(?P<unit>days?|hours?)\s+"
    r"(?P<relation>of|after|from|following|before|prior\s+to)\b(?:\s+(?:the\s+)?[A-Za-z]+)?", re.IGNORECASE)


@dataclass(frozen=True)
class StatedPeriod:
    """``within 14 days of service`` at ``start``..``end`` of the text: ``period`` 14, ``unit`` ``days`` or
    ``hours``, ``before`` for a period counted back from an event (``7 days before the hearing``)."""

    start: int
    end: int
    text: str
    period: int
    unit: str
    before: bool


def names_court_papers(sentence: str) -> bool:
    """Whether ``sentence`` speaks of court papers or filing (the module's condition for a deadline)."""
    return bool(_COURT_WORDS.search(sentence))


def states_deadline(before_date: str) -> bool:
    """Whether the text of a sentence just before a date (``before_date``) makes the date a deadline."""
    return bool(_CUE.search(before_date[-120:]))


# What every stated period has, looked for before the full pattern, which is tried only where this is found.
_PERIOD_HINT = re.compile(r"\b(?:days?|hours?)\s+(?:of|after|from|following|before|prior)\b", re.IGNORECASE)


def find_periods(text: str) -> list[StatedPeriod]:
    """Every period ``text`` states a paper is due within (``within N days of/after``, ``N days before``), in
    order. A count in digits after the words (``fourteen (14)``) is read from the digits; ``N days after``
    without ``within`` counts too (``21 days after service``)."""
    found: list[StatedPeriod] = []
    if not _PERIOD_HINT.search(text):
        return found
    for match in _PERIOD.finditer(text):
        relation = match.group("relation").lower()
        before = relation.startswith(("before", "prior"))
        if not match.group("within") and relation == "of":
            continue  # "14 days of discovery" is a length of time, not a period a paper is due within
        count = match.group("digits") or match.group("count")
        period = int(count) if count.isdigit() else _NUMBER_WORDS[count.lower()]
        unit = "hours" if match.group("unit").lower().startswith("hour") else "days"
        found.append(StatedPeriod(match.start(), match.end(), match.group(0), period, unit, before))
    return found
