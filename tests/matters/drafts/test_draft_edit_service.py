"""The draft-editing workflow and the finding rules live in the services, so every path (page, command, a second
view) obeys them: only the latest version is edited or resolved."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from matters.drafts.forms import DraftEditForm
from matters.drafts.services import (
    RESOLUTIONS,
    StaleEdit,
    draft_create,
    draft_verify,
    draft_version_edit,
    finding_confirm,
    finding_waive,
)
from matters.models import Finding

pytestmark = pytest.mark.django_db

TEXT = "On March 3, 2019 the tenant paid $4,812.55 to the landlord."


def a_version(matter, attorney):
    return draft_create(matter=matter, title="Motion", author_kind="person", author=attorney, text=TEXT)


def test_an_edit_makes_the_next_version_verified(matter, attorney):
    base = a_version(matter, attorney)
    version = draft_version_edit(base=base, text=TEXT + " The landlord kept it.", user=attorney)
    assert version.number == base.number + 1 and version.author == attorney
    assert version.findings.exists()  # verified at once


def test_an_edit_of_an_earlier_version_is_refused_and_names_the_latest(matter, attorney):
    base = a_version(matter, attorney)
    latest = draft_version_edit(base=base, text=TEXT + " One.", user=attorney)
    with pytest.raises(StaleEdit) as refused:
        draft_version_edit(base=base, text=TEXT + " Two.", user=attorney)
    assert refused.value.latest == latest
    assert f"Version {latest.number} was saved while you edited version {base.number}" in refused.value.messages[0]
    assert base.draft.versions.count() == 2


def test_an_empty_edit_is_refused_and_an_unchanged_one_saves_nothing(matter, attorney):
    base = a_version(matter, attorney)
    with pytest.raises(ValidationError, match="The draft is empty"):
        draft_version_edit(base=base, text=" \n ", user=attorney)
    assert draft_version_edit(base=base, text=TEXT, user=attorney) is None
    assert base.draft.versions.count() == 1


def test_an_operator_may_not_edit(make_user, matter, attorney):
    operator = make_user("otto", "operator")
    matter.members.add(operator)
    with pytest.raises(PermissionDenied):
        draft_version_edit(base=a_version(matter, attorney), text=TEXT + " x", user=operator)


def test_the_form_makes_browser_line_breaks_one_character():
    form = DraftEditForm({"text": "One.\r\nTwo.\rThree."})
    assert form.is_valid() and form.cleaned_data["text"] == "One.\nTwo.\nThree."


def test_a_finding_of_an_earlier_version_cannot_be_waived_whatever_the_path(matter, attorney):
    base = a_version(matter, attorney)
    open_finding = next(f for f in draft_verify(version=base) if f.status in RESOLUTIONS)
    draft_version_edit(base=base, text=TEXT + " More.", user=attorney)
    with pytest.raises(ValidationError, match="not the latest"):
        finding_waive(finding=open_finding, user=attorney, reason="Checked the ledger.")
    open_finding.refresh_from_db()
    assert open_finding.status != Finding.Status.WAIVED


def test_each_status_is_resolved_only_as_the_rule_says(matter, attorney):
    version = a_version(matter, attorney)
    finding = next(f for f in draft_verify(version=version) if RESOLUTIONS.get(f.status) == "waive")
    with pytest.raises(ValidationError, match="cannot be confirmed"):
        finding_confirm(finding=finding, user=attorney, reason="Checked in Westlaw.")
    assert finding_waive(finding=finding, user=attorney, reason="Checked the ledger.").status == Finding.Status.WAIVED
