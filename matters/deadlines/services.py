"""Saving and deleting a matter's deadlines: each counted by :mod:`matters.deadlines.counting` with the days the
office entered as closed or declared holidays, kept with its counting, and audited in the matter's chain."""

import datetime as dt
from zoneinfo import ZoneInfo

import holidays
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from matters.audit.services import audit_record
from matters.deadlines.counting import Calendar, DeadlineError, RuleSet, Service, count_days, count_hours
from matters.models import CourtClosedDay, Deadline, Matter
from matters.permissions import require

# Rule 6(a)(4)(A): for electronic filing the last day ends at midnight in the court's time zone. A deadline in days
# is kept as due at the last second of that day, so the queue and the job page have a moment to hold.
_END_OF_DAY = dt.time(23, 59, 59)


def court_zone() -> ZoneInfo:
    """The court's time zone: the installation's ``TIME_ZONE`` (``LAWDESK_TIME_ZONE``)."""
    return ZoneInfo(settings.TIME_ZONE)


def office_calendar(*, state: str = "") -> Calendar:
    """The calendar the office's deadlines are counted on: the federal holidays, ``state``'s where a rule counts
    them, and every :class:`CourtClosedDay` (``closed``: the clerk's office inaccessible; ``holiday``: declared)."""
    calendar = Calendar(state=state)
    for day, kind, reason in CourtClosedDay.objects.values_list("day", "kind", "reason"):
        target = calendar.closed if kind == CourtClosedDay.Kind.CLOSED else calendar.declared
        target[day] = reason
    return calendar


def deadline_count(*, event_date: dt.date, event_time: dt.time | None = None, rules: str = RuleSet.FRCP,
                   period: int, unit: str = Deadline.Unit.DAYS, before: bool = False, service: str = Service.NONE,
                   state: str = ""):
    """Count a period without saving it; return :class:`matters.deadlines.counting.Deadline`. Raises
    ValidationError keyed by the field at fault: ``event_time`` missing for a period in hours, ``before`` or
    ``service`` asked of a period in hours (the rules count those only in days), ``state`` unknown to the holiday
    table, ``period`` out of range, ``service`` with ``before``."""
    state = (state or "").strip().upper()
    if state and state not in holidays.US.subdivisions:
        raise ValidationError({"state": f"“{state}” is not a state the holiday table knows (two letters, e.g. MA)."})
    rule_set, served = RuleSet(rules), Service(service)
    if unit == Deadline.Unit.HOURS:
        if event_time is None:
            raise ValidationError({"event_time": "A period in hours is counted from the time of the event: enter it."})
        if before:
            raise ValidationError({"before": "A period in hours is counted after the event only."})
        if served.adds_three_days:
            raise ValidationError({"service": "The 3 days for service are added to a period in days (Rule 6(d))."})
    calendar = office_calendar(state=state)
    try:
        if unit == Deadline.Unit.HOURS:
            event = dt.datetime.combine(event_date, event_time, tzinfo=court_zone())
            return count_hours(event, period, rules=rule_set, calendar=calendar)
        return count_days(event_date, period, rules=rule_set, before=before, service=served, calendar=calendar)
    except DeadlineError as error:
        field = "service" if before and served.adds_three_days else "period"
        raise ValidationError({field: str(error)}) from error


def deadline_save(*, matter: Matter, user, title: str, event_date: dt.date, period: int,
                  event_time: dt.time | None = None, rules: str = RuleSet.FRCP, unit: str = Deadline.Unit.DAYS,
                  before: bool = False, service: str = Service.NONE, state: str = "") -> Deadline:
    """Count the period (:func:`deadline_count`) and save it on ``matter`` with its counting; audited as
    ``deadline.save``. Raises PermissionDenied for anyone but a member who may save deadlines
    (:mod:`matters.permissions`), ValidationError keyed by field for a period that cannot be counted."""
    require(user, "save_deadlines", matter)
    state = (state or "").strip().upper()
    counted = deadline_count(event_date=event_date, event_time=event_time, rules=rules, period=period, unit=unit,
                             before=before, service=service, state=state)
    due_at = counted.due_at or dt.datetime.combine(counted.due, _END_OF_DAY, tzinfo=court_zone())
    deadline = Deadline(
        matter=matter, title=title.strip(), event_date=event_date,
        event_time=event_time if unit == Deadline.Unit.HOURS else None, rules=rules, period=period, unit=unit,
        before=before, service=service, state=state, due_date=counted.due, due_at=due_at,
        steps=list(counted.steps), created_by=user)
    deadline.full_clean()
    with transaction.atomic():
        deadline.save()
        audit_record(action="deadline.save", actor=user, matter=matter, obj=deadline, detail={
            "title": deadline.title, "event_date": event_date.isoformat(), "rules": rules, "period": period,
            "unit": unit, "before": before, "service": service, "state": state,
            "due_date": counted.due.isoformat(), "due_at": due_at.isoformat()})
    return deadline


def deadline_delete(*, deadline: Deadline, user) -> None:
    """Delete a saved deadline; audited as ``deadline.delete``. Raises PermissionDenied as :func:`deadline_save`,
    and :class:`matters.retention.services.MatterOnHold` while the matter is on legal hold."""
    matter = deadline.matter
    require(user, "save_deadlines", matter)
    with transaction.atomic():
        detail = {"title": deadline.title, "due_date": deadline.due_date.isoformat()}
        deadline_id = deadline.pk
        deadline.delete()
        audit_record(action="deadline.delete", actor=user, matter=matter, detail={"deadline": deadline_id, **detail})
