"""Deadlines a draft states, checked against the deadlines saved on the matter (:mod:`matters.deadlines`). Part
of :class:`matters.drafts.verifier.check.Verification`.

A stated date or period (:mod:`matters.drafts.verifier.deadlines`) is

- ``grounded`` when a saved deadline says the same: due that day, or counted over that period;
- ``ungrounded`` (blocking) when a saved deadline about the same paper says otherwise;
- ``not_computed`` (not blocking, with the reason) when the matter has no saved deadline, or none about that
  paper and none that says the same.

A saved deadline is *about* a sentence's paper when both name the same kind of paper (:data:`PAPERS`: an
opposition or response, a reply, an answer, an appeal, objections ...), or, for a title that names none of these,
when the sentence has the title's first word. Nothing is counted here: the count is the saved one, made and shown
step by step on the matter page, so the draft is held to the deadline an attorney can check.
"""

import datetime as dt
import re
from zoneinfo import ZoneInfo

from django.conf import settings

from matters.models import Deadline

from .dates import DateMention
from .deadlines import StatedPeriod
from .finding import Kind, Status

# Kinds of paper, each a pattern over the words that name it. "Response" and "opposition" are one kind: courts'
# rules call the paper opposing a motion either (Fed. R. Civ. P. 6(c)(1) "any opposing affidavit"; N.D. Ill.
# L.R. 7.1 "response", D. Mass. L.R. 7.1(b)(2) "opposition").
PAPERS = {
    "response": re.compile(r"\b(?:respon(?:se|ses|d|ding)|opposition|oppos(?:e|ing))\b", re.IGNORECASE),
    "reply": re.compile(r"\brepl(?:y|ies)\b", re.IGNORECASE),
    "answer": re.compile(r"\banswer(?:s|ing)?\b", re.IGNORECASE),
    "appeal": re.compile(r"\bappeal\b", re.IGNORECASE),
    "objection": re.compile(r"\bobjection(?:s)?\b", re.IGNORECASE),
    "disclosure": re.compile(r"\bdisclosures?\b", re.IGNORECASE),
    "rehearing": re.compile(r"\brehearing\b", re.IGNORECASE),
}
_TITLE_WORD = re.compile(r"[A-Za-z]{4,}")
_NOT_A_HEAD = {"defendant", "defendants", "plaintiff", "plaintiffs", "party", "parties", "their", "with", "from"}


def _fmt(day: dt.date) -> str:
    return f"{day:%A, %B} {day.day}, {day.year}"


def _papers(text: str) -> set[str]:
    return {kind for kind, pattern in PAPERS.items() if pattern.search(text)}


def described(deadline: Deadline) -> str:
    """``“Opposition” is due Monday, March 16, 2026 (14 days after March 2, 2026, Fed. R. Civ. P. 6)``."""
    due = _fmt(deadline.due_date)
    if deadline.unit == Deadline.Unit.HOURS:  # the time as counted, in the court's time zone
        due += f" at {deadline.due_at.astimezone(ZoneInfo(settings.TIME_ZONE)):%H:%M}"
    direction = "before" if deadline.before else "after"
    return (f"“{deadline.title}” is due {due} ({deadline.period} {deadline.unit} {direction} "
            f"{deadline.event_date:%B} {deadline.event_date.day}, {deadline.event_date.year}, "
            f"{deadline.rule_citation})")


class DeadlineChecks:
    """The deadline checks of a verification (mixed into ``Verification``)."""

    _deadlines: list[Deadline] | None = None

    @property
    def saved_deadlines(self) -> list[Deadline]:
        if self._deadlines is None:
            self._deadlines = list(Deadline.objects.filter(matter=self.matter).order_by("due_date", "id"))
        return self._deadlines

    def _about(self, sentence: str) -> list[Deadline]:
        """The saved deadlines about the paper ``sentence`` speaks of (see the module's docstring)."""
        named = _papers(sentence)
        about = []
        for deadline in self.saved_deadlines:
            kinds = _papers(deadline.title)
            if kinds:
                if kinds & named:
                    about.append(deadline)
                continue
            head = next((w for w in _TITLE_WORD.findall(deadline.title) if w.lower() not in _NOT_A_HEAD), "")
            if head and re.search(rf"\b{re.escape(head)}", sentence, re.IGNORECASE):
                about.append(deadline)
        return about

    def _deadline_finding(self, status: str, start: int, end: int, message: str, deadlines: list[Deadline]):
        self._finding(Kind.DEADLINE, status, start, end, message,
                      deadlines=[{"id": d.pk, "title": d.title, "due_date": d.due_date.isoformat()}
                                 for d in deadlines])

    def _none_saved(self, start: int, end: int, what: str) -> bool:
        if self.saved_deadlines:
            return False
        self._deadline_finding(Status.NOT_COMPUTED, start, end,
                               f"{what} states a deadline, and this matter has no saved deadline to check it against. "
                               "Count it on the matter page (Deadlines) and save it; the draft is then checked "
                               "against that count.", [])
        return True

    def _check_stated_deadline_date(self, mention: DateMention, sentence: str) -> None:
        what = f"“{mention.text}”"
        if self._none_saved(mention.start, mention.end, what):
            return
        readings = set(mention.readings)
        about = self._about(sentence)
        pool = about or self.saved_deadlines
        same = [d for d in pool if d.due_date.isoformat() in readings]
        if same:
            self._deadline_finding(Status.GROUNDED, mention.start, mention.end,
                                   f"{what} is the saved deadline: {described(same[0])}.", same)
        elif about:
            self._deadline_finding(Status.UNGROUNDED, mention.start, mention.end,
                                   f"{what} is not the saved deadline for this paper: "
                                   f"{'; '.join(described(d) for d in about)}. Correct the date, or count the "
                                   "deadline again on the matter page if the saved one is wrong.", about)
        else:
            self._deadline_finding(Status.NOT_COMPUTED, mention.start, mention.end,
                                   f"{what} states a deadline no saved deadline of this matter is about or gives "
                                   f"(saved: {'; '.join(described(d) for d in self.saved_deadlines)}). Count this "
                                   "one on the matter page to have it checked.", [])

    def _check_stated_period(self, period: StatedPeriod, sentence: str) -> None:
        what = f"“{period.text}”"
        if self._none_saved(period.start, period.end, what):
            return
        about = self._about(sentence)
        pool = about or self.saved_deadlines
        same = [d for d in pool
                if d.period == period.period and d.unit == period.unit and d.before == period.before]
        if same:
            self._deadline_finding(Status.GROUNDED, period.start, period.end,
                                   f"{what} is the period the saved deadline counts: {described(same[0])}.", same)
        elif about:
            self._deadline_finding(Status.UNGROUNDED, period.start, period.end,
                                   f"{what} is not the period of the saved deadline for this paper: "
                                   f"{'; '.join(described(d) for d in about)}.", about)
        else:
            self._deadline_finding(Status.NOT_COMPUTED, period.start, period.end,
                                   f"{what} states a period no saved deadline of this matter is about or counts "
                                   f"(saved: {'; '.join(described(d) for d in self.saved_deadlines)}). Count this "
                                   "one on the matter page to have it checked.", [])
