"""Counting a period of time as the federal rules count it, step by step. Pure Python (no Django).

The rules (each deadline names the set it was counted under):

- **Fed. R. Civ. P. 6(a)** (district courts) and **Fed. R. App. P. 26(a)** (courts of appeals) count alike:
  - a period in days (6(a)(1), 26(a)(1)): exclude the day of the event; count every day, Saturdays, Sundays and
    legal holidays included; include the last day, but if it is a Saturday, Sunday or legal holiday the period runs
    until the end of the next day that is none of these;
  - a period in hours (6(a)(2), 26(a)(2)): begin counting at the event, count every hour; if the period would end
    on a Saturday, Sunday or legal holiday it runs until the same time on the next day that is none of these;
  - the clerk's office inaccessible (6(a)(3), 26(a)(3)) on the last day (or, for hours, in the last hour): the
    time runs to the first accessible day that is not a Saturday, Sunday or legal holiday (for hours, at the same
    time), forward even for a period counted before an event (2009 advisory committee note to 6(a)(5)). The days
    a court declared closed are entered by the office;
  - "next day" (6(a)(5), 26(a)(4)... (5)): forward for a period measured after an event, backward for one measured
    before an event (e.g. 14 days before a hearing);
  - legal holidays (6(a)(6), 26(a)(6)): the days set aside by statute for observing the federal holidays of
    5 U.S.C. § 6103(a), with the observed dates of § 6103(b) and Executive Order 11582 (a holiday on a Saturday is
    observed the Friday before, on a Sunday the Monday after), any day the President or Congress declares a
    holiday (entered by the office, with the court's closures), and, for a period measured after an event, the
    state holidays of the state where the district court sits (6(a)(6)(C); under 26(a)(6)(C), the state of the
    district court or of the circuit clerk's principal office).
- **Three days for service** (Fed. R. Civ. P. 6(d); Fed. R. App. P. 26(c)): when a party must act within a period
  after being served and service was by mail (Rule 5(b)(2)(C)), by leaving the paper with the clerk (5(b)(2)(D))
  or by other means consented to (5(b)(2)(F)), 3 days are added after the period would otherwise expire under
  6(a); a last day that then falls on a Saturday, Sunday or legal holiday runs to the next day that is none of
  these (advisory committee note, 2005). Electronic service adds nothing (since the 2016 amendments), nor does
  personal delivery. Under FRAP 26(c) the 3 days are added unless the paper is delivered on the date of service
  stated in the proof of service (electronic service counts as so delivered).

Federal holidays come from the ``holidays`` package (``holidays.country_holidays("US", observed=True)``), a
well-kept table of § 6103 with its observed-date rules; state holidays from the same package by subdivision.
"""

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from enum import StrEnum

import holidays


class RuleSet(StrEnum):
    FRCP = "FRCP"  # Fed. R. Civ. P. 6
    FRAP = "FRAP"  # Fed. R. App. P. 26

    @property
    def citation(self) -> str:
        return {"FRCP": "Fed. R. Civ. P. 6", "FRAP": "Fed. R. App. P. 26"}[self.value]

    def rule(self, part: str) -> str:
        """The subdivision ``part`` (e.g. ``a1``) as cited: ``Fed. R. Civ. P. 6(a)(1)``."""
        number = {"FRCP": "6", "FRAP": "26"}[self.value]
        if self is RuleSet.FRAP and part == "d":
            part = "c"  # FRAP's three days for service are 26(c), where the civil rules have 6(d)
        body = "".join(f"({c})" for c in part)
        prefix = "Fed. R. Civ. P." if self is RuleSet.FRCP else "Fed. R. App. P."
        return f"{prefix} {number}{body}"


class Service(StrEnum):
    """How the paper that starts the period was served (Fed. R. Civ. P. 5(b)(2))."""

    NONE = "none"              # the period does not run from service
    PERSONAL = "personal"      # 5(b)(2)(A), (B): handed over or left at the office or home
    ELECTRONIC = "electronic"  # 5(b)(2)(E): the court's electronic-filing system or consented e-mail
    MAIL = "mail"              # 5(b)(2)(C)
    CLERK = "clerk"            # 5(b)(2)(D): left with the clerk, no known address
    OTHER = "other"            # 5(b)(2)(F): other means the person consented to in writing

    @property
    def adds_three_days(self) -> bool:
        return self in (Service.MAIL, Service.CLERK, Service.OTHER)


class DeadlineError(ValueError):
    """A period that cannot be counted as asked; ``str()`` says why, for the attorney."""


@dataclass
class Calendar:
    """What is not a day to file: Saturdays and Sundays, federal legal holidays (observed dates), the state's
    holidays where the rule counts them, and ``declared``: days declared holidays by the President or Congress
    and days the court declared its clerk's office closed (date -> reason), entered by the office."""

    state: str = ""
    declared: dict[date, str] = field(default_factory=dict)
    closed: dict[date, str] = field(default_factory=dict)

    def _federal(self, year: int) -> holidays.HolidayBase:
        return holidays.country_holidays("US", years=[year - 1, year, year + 1], observed=True)

    def holiday(self, day: date, *, after_event: bool) -> str:
        """The legal holiday ``day`` is, by name, or ''. State holidays count only for a period measured after an
        event (6(a)(6)(C))."""
        if day in self.declared:
            return self.declared[day]
        name = self._federal(day.year).get(day)
        if name:
            return name
        if self.state and after_event:
            try:
                state = holidays.country_holidays("US", subdiv=self.state, years=[day.year], observed=True)
            except NotImplementedError as unknown:
                raise DeadlineError(f"“{self.state}” is not a state the holiday table knows.") from unknown
            name = state.get(day)
            if name:
                return f"{name} ({self.state})"
        return ""

    def why_not(self, day: date, *, after_event: bool) -> str:
        """Why ``day`` is not a day the period may end on ('' when it may): a weekend day or a legal holiday."""
        if day.weekday() == 5:
            return "Saturday"
        if day.weekday() == 6:
            return "Sunday"
        name = self.holiday(day, after_event=after_event)
        return f"legal holiday: {name}" if name else ""


@dataclass(frozen=True)
class Deadline:
    """A counted period: ``due`` (the last day), ``due_at`` (for a period in hours, the moment it ends),
    ``rules`` the set it was counted under, and ``steps``: the counting as an attorney would check it, one line
    each (the event, the rule, the days, each day skipped and why, the result)."""

    rules: RuleSet
    event: date | datetime
    period: str
    due: date
    steps: tuple[str, ...]
    due_at: datetime | None = None


def _fmt(day: date) -> str:
    return f"{day:%A, %B} {day.day}, {day.year}"


def _roll(day: date, step: int, calendar: Calendar, after_event: bool, steps: list[str], rule: str) -> date:
    """The first day from ``day`` (moving by ``step``) that is no Saturday, Sunday or legal holiday, each skipped
    day said in ``steps``."""
    while reason := calendar.why_not(day, after_event=after_event):
        following = day + timedelta(days=step)
        direction = "next" if step > 0 else "previous"
        steps.append(f"{_fmt(day)} is a {reason}: the period runs to the {direction} day ({rule}).")
        day = following
    return day


def _accessible(day: date, calendar: Calendar, after_event: bool, steps: list[str], rules: RuleSet) -> date:
    """6(a)(3): a last day on which the clerk's office is inaccessible runs to the first accessible day that is
    not a Saturday, Sunday or legal holiday. Always forward, for a period counted before an event too: the 2009
    advisory committee note to 6(a)(5) extends a backward-counted Friday, August 31, 2007 on which the office is
    inaccessible "forward" to "no earlier than Tuesday, September 4" (the "next day" of 6(a)(5) is for weekends
    and holidays, not for 6(a)(3))."""
    while day in calendar.closed:
        steps.append(f"The clerk's office is inaccessible on {_fmt(day)} ({calendar.closed[day]}): the time runs "
                     f"to the first accessible day ({rules.rule('a3')}).")
        day = _roll(day + timedelta(days=1), 1, calendar, after_event, steps, rules.rule("a1C"))
    return day


def count_days(event: date, days: int, *, rules: RuleSet = RuleSet.FRCP, before: bool = False,
               service: Service = Service.NONE, calendar: Calendar | None = None) -> Deadline:
    """The last day of a period of ``days`` days after ``event`` (``before``: a period that ends ``days`` days
    before the event, such as a paper due 14 days before a hearing), counted under ``rules``. ``service``: how the
    paper starting the period was served (3 days added for mail, the clerk or other consented means; not for a
    period counted before an event). Raises DeadlineError for a period under 1 day or over 3,650."""
    if not 1 <= days <= 3650:
        raise DeadlineError("A period is counted in whole days from 1 to 3,650.")
    if before and service.adds_three_days:
        raise DeadlineError("The 3 days for service are added to a period that runs after service, not to one "
                            "counted back from an event.")
    calendar = calendar or Calendar()
    step = -1 if before else 1
    after_event = not before
    steps = [f"Event: {_fmt(event)}. Period: {days} day{'s' if days != 1 else ''} "
             f"{'before' if before else 'after'} it, counted under {rules.citation}."]
    steps.append(f"The day of the event is excluded and every day is counted, Saturdays, Sundays and legal holidays "
                 f"included ({rules.rule('a1A')}, {rules.rule('a1B')}).")
    day = event + timedelta(days=step * days)
    steps.append(f"Day {days} is {_fmt(day)}.")
    day = _roll(day, step, calendar, after_event, steps, rules.rule("a1C") if not before else rules.rule("a5"))
    day = _accessible(day, calendar, after_event, steps, rules)
    if service.adds_three_days:
        steps.append(f"Served by {service.value}: 3 days are added after the period would otherwise expire "
                     f"({rules.rule('d')}).")
        day = day + timedelta(days=3)
        steps.append(f"Three days later is {_fmt(day)}.")
        day = _roll(day, 1, calendar, True, steps, rules.rule("a1C"))
        day = _accessible(day, calendar, True, steps, rules)
    elif service is Service.ELECTRONIC:
        steps.append(f"Served electronically: no days are added ({rules.rule('d')}).")
    steps.append(f"Due: {_fmt(day)}.")
    return Deadline(rules, event, f"{days} days {'before' if before else 'after'}", day, tuple(steps))


def count_hours(event: datetime, hours: int, *, rules: RuleSet = RuleSet.FRCP,
                calendar: Calendar | None = None) -> Deadline:
    """The moment a period of ``hours`` hours after ``event`` ends (6(a)(2)): every hour counted from the event;
    one that would end on a Saturday, Sunday or legal holiday (or on a day the clerk's office is inaccessible)
    runs to the same time on the next day that is none of these. ``event`` is a time in the court's time zone
    (aware, as ``zoneinfo`` gives it, where a change of daylight saving time may fall inside the period)."""
    if not 1 <= hours <= 24 * 365:
        raise DeadlineError("A period in hours is counted from 1 hour to a year.")
    calendar = calendar or Calendar()
    steps = [f"Event: {_fmt(event.date())} at {event:%H:%M}. Period: {hours} hour{'s' if hours != 1 else ''}, "
             f"counted under {rules.citation}.",
             f"Counting begins at the event and every hour is counted ({rules.rule('a2A')}, {rules.rule('a2B')})."]
    # Every hour is counted (6(a)(2)(B)): across a change to or from daylight saving time that is elapsed time,
    # not the clock's, so an aware event is counted in UTC.
    end = event + timedelta(hours=hours) if event.tzinfo is None else \
        (event.astimezone(timezone.utc) + timedelta(hours=hours)).astimezone(event.tzinfo)
    steps.append(f"Hour {hours} ends on {_fmt(end.date())} at {end:%H:%M}.")
    day = _roll(end.date(), 1, calendar, True, steps, rules.rule("a2C"))
    day = _accessible(day, calendar, True, steps, rules)
    due_at = datetime.combine(day, end.timetz())
    steps.append(f"Due: {_fmt(day)} at {due_at:%H:%M}.")
    return Deadline(rules, event, f"{hours} hours after", day, tuple(steps), due_at=due_at)

