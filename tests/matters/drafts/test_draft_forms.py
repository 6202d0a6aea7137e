"""The forms of the draft pages (matters/drafts/forms.py, and the reason of a waiver): each refusal, the form's
own or the service's, is on the field at fault, and nothing was written."""

import pytest
from django.urls import reverse

from matters.drafts.forms import DraftApproveForm, DraftExportForm, DraftRenameForm
from matters.drafts.services import draft_approve, draft_rename, finding_waive
from matters.forms import ReasonForm
from matters.models import AuditEntry, GeneratedDocument
from matters.validation import form_submit
from tests.factories import DraftFactory, DraftVersionFactory, FindingFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(matter):
    return DraftVersionFactory(draft=DraftFactory(matter=matter, title="Motion to compel"),
                               text="On March 3, 2021 the tenant paid rent.")


def audits(matter) -> int:
    return AuditEntry.objects.filter(matter=matter).count()


def test_rename_form_puts_an_empty_title_on_the_title(attorney, matter, version):
    before = audits(matter)
    form = DraftRenameForm({"title": "   ", "number": "1"})
    form_submit(form, lambda data: draft_rename(draft=version.draft, title=data["title"], user=attorney))
    assert form.errors["title"] == ["A draft needs a title; the old one was kept."]
    version.draft.refresh_from_db()
    assert version.draft.title == "Motion to compel" and audits(matter) == before


def test_rename_form_refuses_a_version_number_that_is_not_one():
    form = DraftRenameForm({"title": "Reply", "number": "latest"})
    assert not form.is_valid() and form.errors["number"] == ["Enter a whole number."]


def test_the_rename_page_says_why_and_keeps_the_title(client, attorney, matter, version):
    client.force_login(attorney)
    response = client.post(reverse("matters:draft_rename", args=[matter.pk, version.draft_id]),
                           {"title": "", "number": "1"}, follow=True)
    assert "A draft needs a title; the old one was kept." in response.content.decode()
    version.draft.refresh_from_db()
    assert version.draft.title == "Motion to compel"


def test_approve_form_shows_the_services_refusal_and_nothing_is_approved(attorney, matter, version):
    DraftVersionFactory(draft=version.draft)  # a later version: this one may not be approved
    form = DraftApproveForm({"read_confirmed": "on", "override_reason": ""})
    form_submit(form, lambda data: draft_approve(version=version, user=attorney, **data))
    assert form.non_field_errors() == ["Version 1 is not the latest (version 2 is)."]
    version.refresh_from_db()
    assert version.approved_at is None


def test_approve_form_refuses_an_override_reason_past_its_length():
    form = DraftApproveForm({"override_reason": "x" * 2001})
    assert not form.is_valid() and "at most 2000 characters" in form.errors["override_reason"][0]


def test_export_form_refuses_an_unknown_kind_and_the_page_exports_nothing(client, attorney, matter, version):
    form = DraftExportForm({"kind": "odt"})
    assert not form.is_valid()
    assert form.errors["kind"] == ["Unknown export 'odt': choose DOCX, PDF or the verification report."]
    client.force_login(attorney)
    url = reverse("matters:draft_export", args=[matter.pk, version.draft_id, version.number, "odt"])
    response = client.post(url, follow=True)
    assert "Unknown export" in response.content.decode()
    assert not GeneratedDocument.objects.exists() and not AuditEntry.objects.filter(action="draft.export").exists()


def test_export_of_a_version_not_approved_is_refused_on_the_form(client, attorney, matter, version):
    client.force_login(attorney)
    url = reverse("matters:draft_export", args=[matter.pk, version.draft_id, version.number, "pdf"])
    response = client.post(url, follow=True)
    assert "Version 1 is not approved." in response.content.decode()
    assert not GeneratedDocument.objects.exists()


def test_a_waiver_without_a_real_reason_is_refused_on_the_reason(attorney, matter, version):
    finding = FindingFactory(version=version, status="unsupported", verdict="unsupported")
    form = ReasonForm({"reason": "\u200b" * 20})
    form_submit(form, lambda data: finding_waive(finding=finding, user=attorney, **data))
    assert "at least 10 characters" in form.errors["reason"][0]
    finding.refresh_from_db()
    assert finding.status == "unsupported" and finding.resolved_by is None


def test_the_waiver_panel_shows_the_refusal(client, attorney, matter, version):
    finding = FindingFactory(version=version, status="unsupported", verdict="unsupported")
    client.force_login(attorney)
    url = reverse("matters:finding_resolve", args=[matter.pk, version.draft_id, 1, finding.pk, "waive"])
    response = client.post(url, {"reason": "too short"}, HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert 'id="resolve-error">Write the reason (at least 10 characters' in page
    finding.refresh_from_db()
    assert finding.status == "unsupported"
