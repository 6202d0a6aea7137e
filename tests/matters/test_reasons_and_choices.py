"""Reasons (waivers, confirmations, overrides) must say something visible, and choice fields are checked against
their choices in the services, whatever interface called them."""

import io

import pytest
from django.core.exceptions import ValidationError

from matters.drafts.services import finding_confirm, finding_waive
from matters.exhibits.services import exhibit_create
from matters.incoming.services import incoming_receive
from matters.models import Draft, DraftVersion, Finding, IncomingProduction, Page, Production
from matters.productions.reservation import production_create
from matters.provenance import exhibit_override_generated, generated_record, page_clear_injection
from matters.validation import clean_reason
from pipeline.job_models import Job
from pipeline.stages.control import job_continue

pytestmark = pytest.mark.django_db

EMPTY_REASONS = [
    "",
    "          ",
    "ok",
    "\u200b" * 20,  # zero-width spaces
    "\u202e\u202c" * 10,  # bidi override and pop
    "\x07\x08" * 10,  # control characters
    "\u2066 . \u2069" * 4,
    "\ufeff\u00ad" * 10 + "abc",
]
GOOD = "Checked in Westlaw on 2026-11-30; still good law."


@pytest.mark.parametrize("reason", EMPTY_REASONS)
def test_a_reason_needs_visible_characters(reason):
    with pytest.raises(ValidationError, match="not counting spaces or invisible ones"):
        clean_reason(reason)


def test_a_real_reason_is_kept_as_written():
    assert clean_reason(f"  {GOOD}\n") == GOOD
    assert clean_reason("Daño moral — § 1983 ¶ 4") == "Daño moral — § 1983 ¶ 4"


@pytest.fixture
def finding(matter, attorney):
    draft = Draft.objects.create(matter=matter, title="Motion", created_by=attorney)
    version = DraftVersion.objects.create(draft=draft, number=1, text="Signed on March 3, 2021.", author_kind="person",
                                          author=attorney)
    return Finding.objects.create(version=version, kind="date", status=Finding.Status.UNGROUNDED, start=10, end=23,
                                  text="March 3, 2021")


@pytest.fixture
def generated_exhibit(matter, attorney):
    content = b"%PDF-1.4\n% our own draft export\n"
    generated_record(matter=matter, origin="export", title="Motion export", content=content)
    return exhibit_create(matter=matter, stream=io.BytesIO(content), original_name="found.pdf", origin="client",
                          uploaded_by=attorney, enqueue=False)


@pytest.mark.parametrize("reason", ["\u200b" * 30, "\u202e" * 12 + "x", " \x07 " * 12])
def test_every_reason_taking_service_refuses_an_invisible_reason(reason, matter, attorney, finding, generated_exhibit):
    calls = {
        "waive": lambda: finding_waive(finding=finding, user=attorney, reason=reason),
        "confirm": lambda: finding_confirm(finding=finding, user=attorney, reason=reason),
        "override": lambda: exhibit_override_generated(exhibit=generated_exhibit, user=attorney, reason=reason),
        "clear_injection": lambda: page_clear_injection(
            page=Page.objects.create(exhibit=generated_exhibit, number=1, text="x", width_pt=612, height_pt=792),
            user=attorney, reason=reason),
        "gate_override": lambda: job_continue(job=Job(matter=matter, kind="motion"), user=attorney, reason=reason),
    }
    for name, call in calls.items():
        with pytest.raises(ValidationError) as refused:
            call()
        assert "not counting spaces or invisible ones" in " ".join(refused.value.messages), name
    finding.refresh_from_db()
    generated_exhibit.refresh_from_db()
    assert finding.status == Finding.Status.UNGROUNDED and not generated_exhibit.generated_override_reason
    assert not matter.audit_entries.filter(action__in=["finding.waive", "exhibit.generated_override"]).exists()


def test_a_good_reason_is_accepted(finding, attorney):
    assert finding_waive(finding=finding, user=attorney, reason=GOOD).status == Finding.Status.WAIVED


@pytest.mark.parametrize("field, value", [("cover_sheets", "bogus"), ("cover_sheets", "NUMBERED"),
                                          ("position", "middle")])
def test_production_choices_are_checked_in_the_service(field, value, matter, attorney):
    arguments = {"cover_sheets": Production.CoverSheets.NONE, "position": Production.Position.BOTTOM_RIGHT,
                 field: value}
    with pytest.raises(ValidationError) as refused:
        production_create(matter=matter, exhibits=[], prefix="SMITH", created_by=attorney, **arguments)
    assert field in refused.value.message_dict
    assert not Production.objects.exists()


@pytest.mark.parametrize("origin", ["client", "court", "draft", ""])
def test_an_incoming_production_takes_only_a_producing_party_origin(origin, matter, attorney):
    upload = io.BytesIO(b"%PDF-1.4\n")
    upload.name = "letter.pdf"
    with pytest.raises(ValidationError) as refused:
        incoming_receive(matter=matter, uploads=[upload], origin=origin, user=attorney)
    assert "origin" in refused.value.message_dict
    assert not IncomingProduction.objects.exists()
