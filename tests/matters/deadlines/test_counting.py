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


# The 2009 advisory committee notes to Fed. R. Civ. P. 6(a) and Fed. R. App. P. 26(a) explain the rule with worked
# examples, in 2007 dates. Each test below is one of them (or the situation it describes), the dates worked out by
# hand from the 2007 calendar: September 1 is a Saturday, Monday September 3 is Labor Day, DST ended on Sunday
# November 4, Veterans Day (Sunday November 11) was observed on Monday November 12.

def test_note_a_10_day_and_a_14_day_period_started_together_end_four_days_apart():
    # The note: under the former rule "a 10-day period and a 14-day period that started on the same day usually
    # ended on the same day -- and the 10-day period not infrequently ended later". Event Monday 2007-10-01: the
    # former rule skipped weekends and Columbus Day (Monday 10-08) in a 10-day period and ended it on Tuesday
    # 10-16, after the 14-day period's Monday 10-15. Counting every day: day 10 is Thursday 10-11, day 14 is
    # Monday 10-15, both court days.
    assert count_days(date(2007, 10, 1), 10).due == date(2007, 10, 11)
    assert count_days(date(2007, 10, 1), 14).due == date(2007, 10, 15)


def test_note_a_forward_period_ending_on_saturday_before_labor_day_runs_to_tuesday():
    # The note to 6(a)(5): "a filing is due within 21 days after an event, and the twenty-first day falls on
    # Saturday, September 1, 2007" -> due Tuesday, September 4. Event Saturday 2007-08-11 (+21 days = 09-01);
    # Sunday 09-02, Monday 09-03 Labor Day, so Tuesday 09-04.
    deadline = count_days(date(2007, 8, 11), 21)
    assert deadline.due == date(2007, 9, 4)
    said = "\n".join(deadline.steps)
    assert "Saturday, September 1, 2007 is a Saturday" in said
    assert "Sunday, September 2, 2007 is a Sunday" in said
    assert "Monday, September 3, 2007 is a legal holiday: Labor Day" in said
    assert said.endswith("Due: Tuesday, September 4, 2007.")


def test_note_a_backward_period_ending_on_saturday_runs_back_to_friday():
    # The note to 6(a)(5): "if a filing is due 21 days before an event, and the twenty-first day falls on
    # Saturday, September 1, then the filing is due on Friday, August 31". Event 2007-09-22 (-21 days = 09-01);
    # backward, Friday 08-31 is a court day.
    deadline = count_days(date(2007, 9, 22), 21, before=True)
    assert deadline.due == date(2007, 8, 31)
    assert "Fed. R. Civ. P. 6(a)(5)" in "\n".join(deadline.steps)


def test_note_an_inaccessible_clerks_office_moves_a_backward_deadline_forward():
    # The same note goes on: "If the clerk's office is inaccessible on August 31, then subdivision (a)(3) extends
    # the filing deadline forward to the next accessible day that is not a Saturday, Sunday, or legal holiday --
    # no earlier than Tuesday, September 4". From Friday 08-31 forward: Saturday 09-01, Sunday 09-02, Labor Day
    # 09-03, so Tuesday 09-04 (not back to Thursday 08-30).
    calendar = Calendar(closed={date(2007, 8, 31): "power failure at the courthouse"})
    deadline = count_days(date(2007, 9, 22), 21, before=True, calendar=calendar)
    assert deadline.due == date(2007, 9, 4)
    said = "\n".join(deadline.steps)
    assert "The clerk's office is inaccessible on Friday, August 31, 2007" in said
    assert "Fed. R. Civ. P. 6(a)(3)" in said


def test_note_appellate_rules_count_the_labor_day_example_alike():
    # The note to Fed. R. App. P. 26(a)(5) gives the example with 10 days: event Wednesday 2007-08-22 (+10 days =
    # Saturday 09-01), so Tuesday 09-04.
    deadline = count_days(date(2007, 8, 22), 10, rules=RuleSet.FRAP)
    assert deadline.due == date(2007, 9, 4)
    assert "Fed. R. App. P. 26(a)(1)(C)" in "\n".join(deadline.steps)


def test_note_72_hours_across_the_end_of_daylight_saving_time():
    # The note to 6(a)(2): "a 72-hour period that commences at 10:23 a.m. on Friday, November 2, 2007, will run
    # until 9:23 a.m. on Monday, November 5; the discrepancy in start and end times ... results from the
    # intervening shift from daylight saving time to standard time". 10:23 EDT is 14:23 UTC; + 72 h is Monday
    # 14:23 UTC, 09:23 EST; Monday 11-05 is a court day.
    new_york = ZoneInfo("America/New_York")
    deadline = count_hours(datetime(2007, 11, 2, 10, 23, tzinfo=new_york), 72)
    assert deadline.due_at == datetime(2007, 11, 5, 9, 23, tzinfo=new_york)
    assert deadline.steps[-1] == "Due: Monday, November 5, 2007 at 09:23."


def test_note_hours_ending_on_a_weekend_run_to_the_same_time_after_a_holiday_and_are_not_rounded():
    # The note to 6(a)(2): a period ending "at a specific time (say, 2:17 p.m.)" on a Saturday, Sunday or legal
    # holiday runs to "the same time (2:17 p.m.) on the next day" that is none of these; hours are not rounded up.
    # 48 hours from Thursday 2007-11-08 14:17 end Saturday 11-10 14:17; Sunday 11-11; Monday 11-12 is Veterans Day
    # observed; so Tuesday 11-13 at 14:17.
    deadline = count_hours(datetime(2007, 11, 8, 14, 17), 48)
    assert deadline.due_at == datetime(2007, 11, 13, 14, 17)
    said = "\n".join(deadline.steps)
    assert "Monday, November 12, 2007 is a legal holiday: Veterans Day" in said
    assert "Fed. R. Civ. P. 6(a)(2)(C)" in said
