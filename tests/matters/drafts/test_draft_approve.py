"""Drafts: versions, verification, waivers and confirmations, and approval refused while a finding blocks."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from matters.audit.services import audit_verify
from matters.drafts.services import (
    draft_approve,
    draft_create,
    draft_verify,
    draft_version_create,
    finding_confirm,
    finding_waive,
)
from matters.models import AuditEntry, Finding, GeneratedDocument

pytestmark = pytest.mark.django_db

TEXT = ("The lease was signed on March 3, 2021. SMITH000001. The roof was inspected on July 1, 2021. "
        "Landlords must repair. Brown v. Greenfield Props., 512 F.3d 441, 447 (9th Cir. 2008).")


@pytest.fixture
def version(matter, record, attorney):
    version = draft_create(matter=matter, title="Motion to compel repairs", text=TEXT, author_kind="model",
                           model_name="gemma-3-270m", server_name="embedded", kind="motion")
    draft_verify(version=version)
    return version


def test_a_version_is_generated_material_and_its_findings_are_stored(version):
    assert GeneratedDocument.objects.get(pk=version.generated_id).origin == "draft"
    statuses = {f.text: f.status for f in version.findings.all()}
    assert statuses["March 3, 2021"] == "grounded"
    assert statuses["July 1, 2021"] == "ungrounded"
    assert statuses["Brown v. Greenfield Props., 512 F.3d 441, 447 (9th Cir. 2008)"] == "unverified_authority"
    assert version.open_blocking().count() == 2


def test_approval_is_refused_while_a_blocking_finding_is_open(version, attorney):
    with pytest.raises(ValidationError, match="2 blocking finding"):
        draft_approve(version=version, user=attorney)
    version.refresh_from_db()
    assert version.approved_at is None


def test_only_an_attorney_member_waives_confirms_or_approves(version, make_user, matter):
    assistant = make_user("bob", "assistant")
    matter.members.add(assistant)
    finding = version.findings.get(text="July 1, 2021")
    with pytest.raises(PermissionDenied):
        finding_waive(finding=finding, user=assistant, reason="The inspection report is on its way.")
    outsider = make_user("carol", "attorney")
    with pytest.raises(PermissionDenied):
        draft_approve(version=version, user=outsider)


def test_waive_and_confirm_need_a_reason_then_approval_goes_through(version, attorney, matter):
    date = version.findings.get(text="July 1, 2021")
    case = version.findings.get(kind="case_citation")
    with pytest.raises(ValidationError, match="reason"):
        finding_waive(finding=date, user=attorney, reason="ok")
    with pytest.raises(ValidationError, match="cannot be confirmed"):
        finding_confirm(finding=date, user=attorney, reason="checked in Westlaw on 2026-11-30")
    with pytest.raises(ValidationError, match="cannot be waived"):
        finding_waive(finding=case, user=attorney, reason="checked in Westlaw on 2026-11-30")
    finding_waive(finding=date, user=attorney, reason="The inspection report arrives Monday; date from the client.")
    finding_confirm(finding=case, user=attorney, reason="Checked in Westlaw on 2026-11-30: good law.")
    approved = draft_approve(version=version, user=attorney, record={"job": 7})
    assert approved.approved_by == attorney
    entry = AuditEntry.objects.filter(matter=matter, action="draft.approve").get()
    assert entry.detail["sha256"] == version.sha256 and entry.detail["job"] == 7
    actions = list(AuditEntry.objects.filter(matter=matter).values_list("action", flat=True))
    assert {"finding.waive", "finding.confirm", "draft.verify", "draft.version"} <= set(actions)
    assert audit_verify(matter=matter).ok
    # Approval re-verified the version: the resolutions survived it.
    assert {f.status for f in approved.findings.filter(verdict__in=Finding.BLOCKING_STATUSES)} == {
        "waived", "confirmed"}


def test_a_resolution_carries_to_an_edit_that_does_not_touch_its_claim(version, attorney):
    case = version.findings.get(kind="case_citation")
    finding_confirm(finding=case, user=attorney, reason="Checked in Westlaw on 2026-11-30: good law.")
    edited = draft_version_create(draft=version.draft, text=TEXT.replace("July 1, 2021", "March 3, 2021"),
                                  author_kind="person", author=attorney)
    draft_verify(version=edited)
    assert edited.number == 2 and edited.author == attorney
    carried = edited.findings.get(kind="case_citation")
    assert carried.status == "confirmed" and carried.carried_from_id == case.pk
    assert edited.open_blocking().count() == 0
    with pytest.raises(ValidationError, match="not the latest"):
        draft_approve(version=version, user=attorney)
    assert draft_approve(version=edited, user=attorney).approved_at is not None


def test_attacks_anchor_to_their_quoted_span_and_go_outdated_when_it_is_edited_away(version, attorney):
    from matters.drafts.services import attacks_carry, draft_add_attacks

    attacks = draft_add_attacks(version=version, attacks=[
        {"quote": "The roof was inspected on July 1, 2021.", "attack": "No inspection report is in the record.",
         "severity": "high", "suggested_fix": "Cite the report or drop the sentence."},
        {"quote": "landlords MUST repair", "attack": "Overstates the duty.", "severity": "urgent"},
        {"quote": "a sentence the draft never had", "attack": "Invented.", "severity": "low"},
    ])
    exact = next(a for a in attacks if a.quote.startswith("The roof"))
    assert (exact.start, exact.end) == (TEXT.index("The roof"), TEXT.index("The roof") + 39)
    loose = next(a for a in attacks if a.quote == "landlords MUST repair")
    assert TEXT[loose.start:loose.end] == "Landlords must repair" and loose.severity == "medium"
    assert next(a for a in attacks if a.severity == "low").outdated
    edited = draft_version_create(draft=version.draft,
                                  text=TEXT.replace(" The roof was inspected on July 1, 2021.", ""),
                                  author_kind="person", author=attorney)
    carried = {a.quote: a for a in attacks_carry(from_version=version, to_version=edited)}
    assert carried["The roof was inspected on July 1, 2021."].outdated
    assert edited.text[carried["landlords MUST repair"].start:].startswith("Landlords must repair")
