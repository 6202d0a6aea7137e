"""Dates and amounts as legal prose writes them: every form read, ranges checked day by day, "on or about"
kept, year-less dates read from their context or reported, numeric orders flagged, unreadable amounts reported."""

import pytest

from matters.drafts.services import draft_create, draft_verify, finding_waive
from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.dates import find_dates
from tests.factories import ExhibitFactory
from tests.support.record import by_text

FORMS = [
    ("the ninth day of July, 2021", "2021-07-09"), ("this 1st day of March 2025", "2025-03-01"),
    ("March 23d, 2021", "2021-03-23"), ("23rd of March 2021", "2021-03-23"), ("Sept. 5, 2020", "2020-09-05"),
    ("5 September 2020", "2020-09-05"), ("the twenty-first day of June, 2019", "2019-06-21"),
]


@pytest.mark.parametrize(("written", "iso"), FORMS)
def test_each_date_form_is_read(written, iso):
    [date] = find_dates(f"It was signed {written}, as agreed.")
    assert (date.text, date.readings) == (written, (iso,))


@pytest.mark.parametrize("written", ["March 9–13, 2012", "March 9-13, 2012", "March 9 to March 13, 2012",
                                     "March 9 through 13, 2012"])
def test_a_range_is_every_day_of_it(written):
    [date] = find_dates(f"The hearings ran from {written} in Chicago.")
    assert date.text == written
    assert date.days == ("2012-03-09", "2012-03-10", "2012-03-11", "2012-03-12", "2012-03-13")


HEARINGS = ("MINUTES. Hearing held March 9, 2012. Continued March 10, 2012, March 11, 2012 and March 12, 2012. "
            "Concluded March 13, 2012. The landlord attended on or about June 1, 2020.")


@pytest.fixture
def minutes(matter, record):
    return ExhibitFactory(matter=matter, origin="court", pages=[HEARINGS])


@pytest.mark.django_db
def test_a_range_is_grounded_only_when_every_day_is(matter, minutes):
    label = minutes.label
    findings = verify_text(matter=matter, text=(
        f"The hearings ran March 9–13, 2012. Ex. {label} at 1. They ran March 9–15, 2012. Ex. {label} at 1."))
    assert by_text(findings, "March 9–13, 2012").status == "grounded"
    partial = by_text(findings, "March 9–15, 2012")
    assert partial.status == "ungrounded" and "2 of the 7 days" in partial.message
    assert "March 14, 2012" in partial.message and "March 15, 2012" in partial.message


@pytest.mark.django_db
def test_on_or_about_and_yearless_dates(matter, minutes):
    label = minutes.label
    findings = verify_text(matter=matter, text=(
        f"On or about June 1, 2020, the landlord came. Ex. {label} at 1. The hearing opened March 9, 2012. "
        f"Ex. {label} at 1. On March 12, it continued. Ex. {label} at 1."))
    about = by_text(findings, "June 1, 2020")
    assert about.status == "grounded" and "on or about" in about.message
    yearless = by_text(findings, "March 12")
    assert yearless.status == "grounded" and "March 9, 2012" in yearless.message
    alone = by_text(verify_text(matter=matter, text="On May 1, the landlord came."), "May 1")
    assert alone.status == "unreadable" and alone.blocking and "no year" in alone.message


@pytest.mark.django_db
def test_numeric_dates_in_the_wrong_or_mixed_order_are_flagged(matter, record):
    findings = verify_text(matter=matter, text="Signed 3/3/2021 (SMITH000001). Paid 15/4/2019 (SMITH000001).")
    day_first = by_text(findings, "15/4/2019")
    assert day_first.status in ("ambiguous", "ungrounded") and "day first" in day_first.message
    mixed = verify_text(matter=matter, text="Signed 3/3/2021 (SMITH000001). Paid 15/4/2019 and 4/16/2019.")
    assert all("both orders" in by_text(mixed, text).message for text in ("15/4/2019", "4/16/2019"))
    assert by_text(mixed, "3/3/2021").status == "grounded"  # the same day in either order


@pytest.mark.django_db
@pytest.mark.parametrize("amount", ["$3.3500", "3.3500 €", "$1,25.00"])
def test_an_amount_that_cannot_be_read_is_unreadable(matter, record, amount):
    finding = by_text(verify_text(matter=matter, text=f"The fee was {amount} a month. SMITH000001."), amount)
    assert finding.kind == "amount" and finding.status == "unreadable" and finding.blocking


@pytest.mark.django_db
def test_an_unreadable_finding_blocks_until_an_attorney_waives_it(matter, record, attorney):
    version = draft_create(matter=matter, title="Motion", text="The fee was $3.3500. SMITH000001.",
                           author_kind="person", author=attorney, kind="motion")
    draft_verify(version=version)
    finding = version.findings.get(kind="amount")
    assert finding.status == "unreadable" and version.open_blocking().count() == 1
    finding_waive(finding=finding, user=attorney, reason="The contract states the fee to four places.")
    assert version.open_blocking().count() == 0


def test_two_dates_sharing_a_year_are_not_a_range():
    text = "In 2019 the lease began. Meetings on March 18 and April 29, 2020 were held."
    assert [(d.text, d.readings, d.days) for d in find_dates(text, yearless=True)] == [
        ("March 18", ("2020-03-18",), ()), ("April 29, 2020", ("2020-04-29",), ())]
    assert find_dates("between March 9 and 13, 2012")[0].days[-1] == "2012-03-13"
