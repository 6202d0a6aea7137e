"""Readings of the shared verifier readers, in true and false twins: a true claim is never blocked, a
fabrication never passes. Joined ranges of numeric dates keep their two readings."""

import pytest

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.dates import find_dates
from tests.factories import ExhibitFactory
from tests.support.record import by_text

STATEMENT = "STATEMENT. Statement period 03/04/2021 to 05/06/2021. Second period 03/15/2021 to 05/16/2021."


def test_a_joined_range_of_swappable_numeric_dates_has_two_readings():
    [both] = find_dates("from 03/04/2021 to 05/06/2021", "mdy")
    assert both.joined and both.ambiguous
    assert (both.days[0], both.days[-1]) == ("2021-03-04", "2021-05-06")
    assert (both.other_days[0], both.other_days[-1]) == ("2021-04-03", "2021-06-05")
    [one] = find_dates("from 03/15/2021 to 05/16/2021", "mdy")
    assert one.joined and not one.ambiguous and one.other_days == ()
    # The other order reads no range (February 1 to January 12 runs backwards): one reading only.
    [backwards] = find_dates("from 01/02/2021 to 12/01/2021", "mdy")
    assert not backwards.ambiguous
    # A range is written in one order: an end only one order reads (May 20) settles the other end.
    [settled] = find_dates("from 03/04/2021 to 05/20/2021", "mdy")
    assert settled.joined and not settled.ambiguous


@pytest.mark.django_db
def test_a_joined_numeric_range_gets_the_single_date_ambiguity_rule(matter, record):
    label = ExhibitFactory(matter=matter, origin="client", pages=[STATEMENT]).label
    findings = verify_text(matter=matter, text=(
        f"The first period ran from 03/04/2021 to 05/06/2021. Ex. {label} at 1. "
        f"The second ran from 03/15/2021 to 05/16/2021. Ex. {label} at 1. "
        f"A third ran from 03/04/2021 to 05/20/2021. Ex. {label} at 1. "
        f"A fourth ran from 02/04/2021 to 05/06/2021. Ex. {label} at 1."))
    swappable = by_text(findings, "03/04/2021 to 05/06/2021")
    assert swappable.status == "ambiguous" and "April 3, 2021 to June 5, 2021" in swappable.message
    # The true twin, readable one way only, is grounded; the invented end is never passed.
    assert by_text(findings, "03/15/2021 to 05/16/2021").status == "grounded"
    for invented in ("03/04/2021 to 05/20/2021", "02/04/2021 to 05/06/2021"):
        finding = by_text(findings, invented)
        assert finding.status not in ("grounded", "needs_record_cite", "ambiguous") and finding.blocking
