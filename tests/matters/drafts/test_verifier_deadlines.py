"""A deadline a draft states, checked against the matter's saved deadlines: grounded when a saved one says the
same, blocking when a saved deadline of the same paper says otherwise, not computed (not blocking, with the
reason) when there is none such. Each case has its twin that flips the answer; the saved deadlines are counted
by the real calculator, their dates worked out by hand beside each."""

import datetime as dt

import pytest

from matters.deadlines.services import deadline_delete, deadline_save
from matters.drafts.services import draft_create, draft_stale_reason, draft_verify
from matters.drafts.verifier.check import verify_text
from matters.models import Finding

pytestmark = pytest.mark.django_db


@pytest.fixture
def opposition(matter, attorney):
    # Event Monday 2026-03-02 + 14 days: Monday 2026-03-16, a court day.
    return deadline_save(matter=matter, user=attorney, title="Opposition to the motion to dismiss",
                         event_date=dt.date(2026, 3, 2), period=14)


def deadline_findings(matter, text):
    return [f for f in verify_text(matter=matter, text=text, incremental=False) if f.kind == "deadline"]


@pytest.mark.parametrize(("stated", "status"), [("March 16, 2026", "grounded"), ("March 17, 2026", "ungrounded")])
def test_a_stated_due_date_matches_the_saved_one_or_blocks(matter, opposition, stated, status):
    [finding] = deadline_findings(matter, f"Plaintiff's opposition is due on Monday, {stated}.")
    assert (finding.text, finding.status) == (stated, status)
    assert finding.detail["deadlines"] == [{"id": opposition.pk, "title": "Opposition to the motion to dismiss",
                                            "due_date": "2026-03-16"}]
    assert finding.blocking is (status == "ungrounded")
    assert "due Monday, March 16, 2026 (14 days after March 2, 2026, Fed. R. Civ. P. 6)" in finding.message


@pytest.mark.parametrize(("cue", "is_deadline"), [
    ("The response must be filed by", True), ("The response was filed on", False),
    ("The reply brief is due no later than", True), ("The landlord said the rent was due on", False),
    # "due" with no word after it: a deadline, as "due on" is.
    ("The opposition is due", True), ("The landlord said the rent was due", False),
])
def test_only_a_date_stated_as_a_court_deadline_is_checked_as_one(matter, opposition, cue, is_deadline):
    findings = verify_text(matter=matter, text=f"{cue} March 20, 2026.", incremental=False)
    assert [f.kind for f in findings] == ["deadline" if is_deadline else "date"]


@pytest.mark.parametrize(("stated", "status"), [("March 16, 2026", "grounded"), ("March 17, 2026", "ungrounded")])
def test_a_due_date_stated_with_due_alone_is_held_to_the_saved_one(matter, opposition, stated, status):
    [finding] = deadline_findings(matter, f"The opposition is due {stated}.")
    assert (finding.text, finding.status) == (stated, status)


def test_a_response_is_the_same_paper_as_an_opposition(matter, opposition):
    [finding] = deadline_findings(matter, "Defendant's response to the motion is due on March 19, 2026.")
    assert finding.status == "ungrounded"


def test_a_date_for_another_paper_is_not_computed_and_does_not_block(matter, opposition):
    [finding] = deadline_findings(matter, "The reply is due on March 23, 2026.")
    assert finding.status == "not_computed" and not finding.blocking
    assert "no saved deadline of this matter is about or gives" in finding.message


def test_a_matter_with_no_saved_deadline_says_so(matter):
    [finding] = deadline_findings(matter, "The opposition is due on March 16, 2026.")
    assert finding.status == "not_computed"
    assert "this matter has no saved deadline" in finding.message


@pytest.mark.parametrize(("period", "status"), [("14", "grounded"), ("21", "ungrounded")])
def test_a_stated_period_matches_the_saved_count_or_blocks(matter, opposition, period, status):
    [finding] = deadline_findings(matter, f"Plaintiff must file an opposition within {period} days of service.")
    assert (finding.text, finding.status) == (f"within {period} days of service", status)


def test_a_period_in_words_is_read_from_its_digits(matter, opposition):
    [finding] = deadline_findings(matter, "An opposition is due within fourteen (14) days after service.")
    assert finding.status == "grounded"


def test_a_length_of_time_is_not_a_period_due(matter, opposition):
    assert deadline_findings(matter, "The parties agreed to 14 days of discovery on damages before trial.") == []


def test_a_deadline_saved_after_verification_makes_the_draft_stale_and_verifies_again(matter, attorney):
    version = draft_create(matter=matter, title="Opposition", author_kind="person", author=attorney,
                           text="Plaintiff's opposition is due on March 16, 2026.")
    [finding] = [f for f in draft_verify(version=version) if f.kind == "deadline"]
    assert finding.status == "not_computed"
    version.refresh_from_db()
    assert draft_stale_reason(version=version) == ""
    deadline = deadline_save(matter=matter, user=attorney, title="Opposition to the motion to dismiss",
                             event_date=dt.date(2026, 3, 2), period=14)
    assert draft_stale_reason(version=version) == ("The deadline “Opposition to the motion to dismiss” was saved "
                                                   "after this version was verified")
    # The kept findings of the paragraph are not served against the new state (memo: evidence_state).
    assert [f.status for f in draft_verify(version=version) if f.kind == "deadline"] == ["grounded"]
    version.refresh_from_db()
    deadline_delete(deadline=deadline, user=attorney)
    assert "was deleted after this version was verified" in draft_stale_reason(version=version)
    assert [f.status for f in draft_verify(version=version) if f.kind == "deadline"] == ["not_computed"]
    assert Finding.Status.NOT_COMPUTED not in Finding.BLOCKING_STATUSES


@pytest.mark.parametrize(("stated", "status"), [("48 hours", "grounded"), ("24 hours", "ungrounded")])
def test_a_period_in_hours_is_held_to_a_saved_count_in_hours(matter, attorney, stated, status):
    # Friday 2026-03-06 09:00 + 48 hours: Sunday 03-08 09:00, runs to Monday 03-09 at 09:00.
    deadline_save(matter=matter, user=attorney, title="Objections to the subpoena", event_date=dt.date(2026, 3, 6),
                  event_time=dt.time(9, 0), period=48, unit="hours")
    [finding] = deadline_findings(matter, f"Objections must be served within {stated} of service.")
    assert finding.status == status
    assert "is due Monday, March 9, 2026 at 09:00 (48 hours after March 6, 2026" in finding.message
