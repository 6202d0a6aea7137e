"""Deadlines counted as Fed. R. Civ. P. 6 and Fed. R. App. P. 26 count them. Each expected date is worked out by
hand in the comment beside it, from a calendar; none is computed by the code under test."""

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matters.deadlines.counting import Calendar, DeadlineError, RuleSet, Service, count_days, count_hours


def test_a_plain_period_counts_every_day_and_excludes_the_event():
    # Event Monday 2026-03-02; day 1 is Tuesday 03-03, day 14 is Monday 03-16, a court day.
    deadline = count_days(date(2026, 3, 2), 14)
    assert deadline.due == date(2026, 3, 16)
    assert deadline.steps[-1] == "Due: Monday, March 16, 2026."


def test_intermediate_weekends_and_holidays_are_counted():
    # Event Friday 2026-11-20; 7 days later is Friday 11-27: Thanksgiving (Thursday 11-26) and the weekend in
    # between still count (6(a)(1)(B)); 11-27 is no federal holiday.
    assert count_days(date(2026, 11, 20), 7).due == date(2026, 11, 27)


def test_a_period_ending_on_a_saturday_before_a_monday_holiday_runs_to_tuesday():
    # Event Saturday 2025-08-16; day 14 is Saturday 08-30; Sunday 08-31; Monday 09-01 is Labor Day; so Tuesday
    # 09-02.
    deadline = count_days(date(2025, 8, 16), 14)
    assert deadline.due == date(2025, 9, 2)
    said = "\n".join(deadline.steps)
    assert "Saturday, August 30, 2025 is a Saturday" in said
    assert "Monday, September 1, 2025 is a legal holiday: Labor Day" in said
    assert "Fed. R. Civ. P. 6(a)(1)(C)" in said


def test_juneteenth_observed_on_a_friday_is_a_legal_holiday():
    # June 19, 2027 is a Saturday, so Juneteenth is observed on Friday June 18 (5 U.S.C. 6103(b)). Event Friday
    # 2027-06-04; day 14 is Friday 06-18 (observed holiday), then Saturday 06-19, Sunday 06-20: Monday 06-21.
    deadline = count_days(date(2027, 6, 4), 14)
    assert deadline.due == date(2027, 6, 21)
    assert "Juneteenth" in "\n".join(deadline.steps)


def test_service_by_mail_adds_three_days_after_the_period_then_skips_a_holiday():
    # Served by mail Monday 2026-11-09; day 14 is Monday 11-23; plus 3 days is Thursday 11-26, Thanksgiving; so
    # Friday 11-27.
    deadline = count_days(date(2026, 11, 9), 14, service=Service.MAIL)
    assert deadline.due == date(2026, 11, 27)
    said = "\n".join(deadline.steps)
    assert "Fed. R. Civ. P. 6(d)" in said and "Thanksgiving" in said


def test_the_three_days_are_added_after_a_weekend_roll():
    # Served by mail Saturday 2026-10-31; day 14 is Saturday 11-14, which runs to Monday 11-16 (6(a)(1)(C));
    # 3 days after that is Thursday 11-19.
    assert count_days(date(2026, 10, 31), 14, service=Service.MAIL).due == date(2026, 11, 19)
    # The same served electronically gets no days: Monday 11-16.
    electronic = count_days(date(2026, 10, 31), 14, service=Service.ELECTRONIC)
    assert electronic.due == date(2026, 11, 16)
    assert "no days are added" in "\n".join(electronic.steps)


def test_a_period_before_an_event_moves_backward():
    # Hearing Thursday 2026-07-09, paper due 5 days before: day 5 back is Saturday 07-04 (Independence Day);
    # backward, Friday 07-03 is its observed holiday; so Thursday 07-02 (6(a)(5)).
    deadline = count_days(date(2026, 7, 9), 5, before=True)
    assert deadline.due == date(2026, 7, 2)
    assert "Fed. R. Civ. P. 6(a)(5)" in "\n".join(deadline.steps)


def test_hours_run_across_midnight_and_a_weekend_end_moves_to_the_same_time():
    # 24 hours from Wednesday 2026-12-02 15:00 end Thursday 12-03 15:00.
    assert count_hours(datetime(2026, 12, 2, 15, 0), 24).due_at == datetime(2026, 12, 3, 15, 0)
    # 8 hours from Friday 2026-12-04 20:00 end Saturday 12-05 04:00: the same time on Monday 12-07.
    deadline = count_hours(datetime(2026, 12, 4, 20, 0), 8)
    assert deadline.due_at == datetime(2026, 12, 7, 4, 0)
    assert "Fed. R. Civ. P. 6(a)(2)(C)" in "\n".join(deadline.steps)


def test_hours_over_a_change_of_daylight_saving_time_are_elapsed_hours():
    # New York leaves daylight saving time on Sunday 2026-11-01 at 02:00 (the clock goes back to 01:00). 72 hours
    # from Friday 10-30 09:00 EDT (13:00 UTC) end Monday 11-02 13:00 UTC, which is 08:00 EST: a Monday, no holiday.
    new_york = ZoneInfo("America/New_York")
    deadline = count_hours(datetime(2026, 10, 30, 9, 0, tzinfo=new_york), 72)
    assert deadline.due_at == datetime(2026, 11, 2, 8, 0, tzinfo=new_york)


def test_a_day_the_clerks_office_is_closed_extends_the_last_day():
    # Day 14 after Monday 2026-03-02 is Monday 03-16; the court closed that day for snow: Tuesday 03-17.
    calendar = Calendar(closed={date(2026, 3, 16): "closed for snow by order of the chief judge"})
    deadline = count_days(date(2026, 3, 2), 14, calendar=calendar)
    assert deadline.due == date(2026, 3, 17)
    assert "inaccessible" in "\n".join(deadline.steps) and "6(a)(3)" in "\n".join(deadline.steps)


def test_state_holidays_count_only_after_an_event():
    # Patriots' Day (Massachusetts) is Monday 2026-04-20. Event Monday 04-06; day 14 is Monday 04-20: in a
    # district court in Massachusetts the period runs to Tuesday 04-21 (6(a)(6)(C)); elsewhere it ends 04-20.
    assert count_days(date(2026, 4, 6), 14, calendar=Calendar(state="MA")).due == date(2026, 4, 21)
    assert count_days(date(2026, 4, 6), 14).due == date(2026, 4, 20)


def test_the_appellate_rules_are_named_and_their_three_days_are_26c():
    deadline = count_days(date(2026, 11, 9), 14, rules=RuleSet.FRAP, service=Service.MAIL)
    assert deadline.due == date(2026, 11, 27)
    said = "\n".join(deadline.steps)
    assert "Fed. R. App. P. 26(c)" in said and "Fed. R. App. P. 26(a)(1)(C)" in said
    assert "Civ." not in said


@pytest.mark.parametrize("days", [0, -3, 4000])
def test_a_period_out_of_range_is_refused_with_a_reason(days):
    with pytest.raises(DeadlineError, match="whole days"):
        count_days(date(2026, 3, 2), days)


def test_three_days_for_service_are_not_added_to_a_period_counted_back():
    with pytest.raises(DeadlineError, match="counted back"):
        count_days(date(2026, 3, 2), 7, before=True, service=Service.MAIL)


@given(event=st.dates(date(2000, 1, 1), date(2060, 12, 31)), days=st.integers(1, 400),
       service=st.sampled_from(list(Service)))
def test_the_last_day_is_a_court_day_no_earlier_than_the_plain_count(event, days, service):
    deadline = count_days(event, days, service=service)
    calendar = Calendar()
    assert not calendar.why_not(deadline.due, after_event=True)
    assert (deadline.due - event).days >= days + (3 if service.adds_three_days else 0)
