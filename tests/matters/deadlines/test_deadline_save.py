"""Saving and deleting a matter's deadlines (matters.deadlines.services): counted with the office's closed days,
kept with their counting, audited, refused on the field at fault. Expected dates are worked out by hand beside
each test."""

import datetime as dt

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from matters.deadlines.services import deadline_delete, deadline_save
from matters.models import AuditEntry, CourtClosedDay, Deadline
from matters.retention.purge import matter_purge
from matters.retention.services import MatterOnHold, matter_hold

pytestmark = pytest.mark.django_db


def save(matter, user, **fields):
    values = {"title": "Opposition to the motion to dismiss", "event_date": dt.date(2026, 3, 2), "period": 14}
    return deadline_save(matter=matter, user=user, **(values | fields))


def test_a_saved_deadline_keeps_its_count_its_steps_and_an_audit_entry(matter, attorney, settings):
    settings.TIME_ZONE = "America/New_York"
    # Event Monday 2026-03-02; day 14 is Monday 03-16, a court day; due at the end of that day in New York.
    deadline = save(matter, attorney)
    deadline.refresh_from_db()
    assert deadline.due_date == dt.date(2026, 3, 16)
    # 23:59:59 EDT (daylight saving time began March 8, 2026) is 03:59:59 UTC the next morning.
    assert deadline.due_at == dt.datetime(2026, 3, 17, 3, 59, 59, tzinfo=dt.UTC)
    assert deadline.steps[0].startswith("Event: Monday, March 2, 2026. Period: 14 days after it")
    assert deadline.steps[-1] == "Due: Monday, March 16, 2026."
    entry = AuditEntry.objects.get(matter=matter, action="deadline.save")
    assert entry.object_id == str(deadline.pk)
    assert entry.detail["due_date"] == "2026-03-16" and entry.actor == attorney.username


def test_a_day_the_office_entered_as_closed_moves_the_last_day(matter, attorney):
    # Day 14 is Monday 2026-03-16; the clerk's office was closed that day, so Tuesday 03-17 (Rule 6(a)(3)).
    CourtClosedDay.objects.create(day=dt.date(2026, 3, 16), reason="General Order 26-04: courthouse closed (snow)")
    deadline = save(matter, attorney)
    assert deadline.due_date == dt.date(2026, 3, 17)
    said = "\n".join(deadline.steps)
    assert "inaccessible on Monday, March 16, 2026 (General Order 26-04: courthouse closed (snow))" in said
    assert "Fed. R. Civ. P. 6(a)(3)" in said


def test_a_declared_holiday_is_a_legal_holiday(matter, attorney):
    # Day 14 is Monday 2026-03-16, declared a holiday by the President: Tuesday 03-17 (Rule 6(a)(6)(B)).
    CourtClosedDay.objects.create(day=dt.date(2026, 3, 16), kind=CourtClosedDay.Kind.HOLIDAY,
                                  reason="Executive Order: federal offices closed")
    deadline = save(matter, attorney)
    assert deadline.due_date == dt.date(2026, 3, 17)
    assert "legal holiday: Executive Order: federal offices closed" in "\n".join(deadline.steps)


def test_without_the_closed_day_the_same_period_ends_on_its_own_day(matter, attorney):
    CourtClosedDay.objects.create(day=dt.date(2026, 3, 17), reason="closed the day after")
    assert save(matter, attorney).due_date == dt.date(2026, 3, 16)


def test_a_period_in_hours_ends_at_the_same_time_on_the_next_court_day(matter, attorney, settings):
    settings.TIME_ZONE = "America/New_York"
    # Friday 2026-03-06 17:00 EST + 24 hours = Saturday 03-07 17:00; runs to Monday 03-09 at 17:00, which is EDT
    # by then (daylight saving time began Sunday March 8): 21:00 UTC.
    deadline = save(matter, attorney, event_date=dt.date(2026, 3, 6), event_time=dt.time(17, 0), period=24,
                    unit=Deadline.Unit.HOURS)
    assert deadline.due_date == dt.date(2026, 3, 9)
    assert deadline.due_at == dt.datetime(2026, 3, 9, 21, 0, tzinfo=dt.UTC)


def test_service_by_mail_is_saved_with_its_three_days(matter, attorney):
    # Served by mail Monday 2026-11-09; day 14 is Monday 11-23; + 3 days is Thursday 11-26, Thanksgiving: Friday.
    deadline = save(matter, attorney, event_date=dt.date(2026, 11, 9), service="mail")
    assert deadline.due_date == dt.date(2026, 11, 27)
    assert deadline.service == "mail"


@pytest.mark.parametrize(("fields", "field"), [
    ({"unit": "hours"}, "event_time"),
    ({"unit": "hours", "event_time": dt.time(9), "before": True}, "before"),
    ({"unit": "hours", "event_time": dt.time(9), "service": "mail"}, "service"),
    ({"before": True, "service": "mail"}, "service"),
    ({"state": "ZZ"}, "state"),
    ({"period": 4000}, "period"),
])
def test_a_period_that_cannot_be_counted_is_refused_on_its_field(matter, attorney, fields, field):
    with pytest.raises(ValidationError) as refused:
        save(matter, attorney, **fields)
    assert field in refused.value.message_dict
    assert not Deadline.objects.exists()
    assert not AuditEntry.objects.filter(action="deadline.save").exists()


def test_state_holidays_count_where_the_state_is_named(matter, attorney):
    # Patriots' Day 2026 (Massachusetts) is Monday April 20. Event Monday 2026-04-06, day 14 is Monday 04-20.
    assert save(matter, attorney, event_date=dt.date(2026, 4, 6)).due_date == dt.date(2026, 4, 20)
    deadline = save(matter, attorney, event_date=dt.date(2026, 4, 6), state="ma")
    assert deadline.due_date == dt.date(2026, 4, 21) and deadline.state == "MA"


def test_deleting_a_deadline_is_audited(matter, attorney):
    deadline = save(matter, attorney)
    deadline_delete(deadline=deadline, user=attorney)
    assert not Deadline.objects.exists()
    entry = AuditEntry.objects.get(matter=matter, action="deadline.delete")
    assert entry.detail["title"] == "Opposition to the motion to dismiss"


def test_a_deadline_of_a_matter_on_hold_is_not_deleted(matter, attorney):
    deadline = save(matter, attorney)
    matter_hold(matter=matter, user=attorney, reason="Preservation letter of March 1")
    deadline.matter.refresh_from_db()
    with pytest.raises(MatterOnHold):
        deadline_delete(deadline=deadline, user=attorney)
    assert Deadline.objects.filter(pk=deadline.pk).exists()


def test_only_a_member_saves_or_deletes(matter, attorney, make_user):
    outsider = make_user("bob", "attorney")
    with pytest.raises(PermissionDenied):
        save(matter, outsider)
    deadline = save(matter, attorney)
    with pytest.raises(PermissionDenied):
        deadline_delete(deadline=deadline, user=outsider)
    assert Deadline.objects.count() == 1


def test_a_purge_takes_the_matters_deadlines_and_counts_them(matter, attorney):
    save(matter, attorney)
    report = matter_purge(matter=matter, user=attorney, confirm_name=matter.name)
    assert report.rows.get("matters.deadline") == 1
    assert not Deadline.objects.exists()
