"""The verifier grounds an email's header facts on its header page: the Date in its own timezone and in UTC, the
subject and the parties as quoted."""

import pytest

from matters.drafts.verifier.check import verify_text
from tests.support.record import by_text

from .email_messages import as_bytes, ingest_bytes, message

pytestmark = pytest.mark.django_db


def test_a_message_sent_late_on_march_3_pacific_grounds_march_3_and_march_4_utc(matter, attorney):
    mail = message(subject="Notice of termination", date="Tue, 03 Mar 2026 23:30:00 -0800",
                   body="Ben, we are terminating the lease effective April 30.\n")
    exhibit = ingest_bytes(matter, attorney, as_bytes(mail), origin="opposing_party")
    label = exhibit.label
    findings = verify_text(matter=matter, text=(
        f"Ruiz wrote to Stone on March 3, 2026. Ex. {label} at 1. "
        f"In UTC the message was sent on March 4, 2026. Ex. {label} at 1. "
        f"Ruiz wrote again on March 5, 2026. Ex. {label} at 1. "
        f"The subject read “Notice of termination.” Ex. {label} at 1. "
        f"It came “From: Ana Ruiz” to “Ben Stone.” Ex. {label} at 1."))
    assert by_text(findings, "March 3, 2026").status == "grounded"
    assert by_text(findings, "March 4, 2026").status == "grounded"
    assert by_text(findings, "March 5, 2026").status != "grounded"
    assert by_text(findings, "“Notice of termination.”").status == "grounded"
    assert by_text(findings, "“From: Ana Ruiz”").status == "grounded"
    assert by_text(findings, "“Ben Stone.”").status == "grounded"
