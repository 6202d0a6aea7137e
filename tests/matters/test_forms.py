"""The forms of the matter and exhibit pages (matters/forms.py): each refusal, the form's own or the service's,
is on the field at fault, and nothing was written. Services are called as the views call them
(:func:`matters.validation.form_submit`)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from matters.exhibits.services import exhibit_set_cites_as, exhibit_submit_password, exhibit_update
from matters.forms import ButtonForm, CitesAsForm, ExhibitEditForm, PasswordForm, ReasonForm, SearchForm, UploadForm
from matters.models import AuditEntry, Exhibit
from matters.provenance import exhibit_override_generated
from matters.validation import form_error_messages, form_submit
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def exhibit(matter):
    return ExhibitFactory(matter=matter, title="Lease", pages=["The tenant paid rent."])


def audit_count(matter) -> int:
    return AuditEntry.objects.filter(matter=matter).count()


def test_upload_form_refuses_an_origin_that_is_not_for_uploads_on_its_field():
    form = UploadForm({"origin": "production", "custodian": ""},
                      {"file": SimpleUploadedFile("a.pdf", b"%PDF-1.4")})
    assert not form.is_valid()
    assert "Select a valid choice" in form.errors["origin"][0] and list(form.errors) == ["origin"]


def test_upload_form_without_a_file_says_so_and_the_view_makes_no_exhibit(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:upload", args=[matter.pk]), {"origin": "client"})
    assert response.status_code == 400 and "file: This field is required." in response.json()["error"]
    assert not Exhibit.objects.exists()


def test_exhibit_edit_form_puts_a_label_taken_on_the_label(attorney, matter, exhibit):
    other = ExhibitFactory(matter=matter)
    before = audit_count(matter)
    form = ExhibitEditForm({"label": exhibit.label, "title": "Renamed", "transcript_cite": ""})
    form_submit(form, lambda data: exhibit_update(exhibit=other, updated_by=attorney, **data))
    assert form.errors["label"] == [f"Exhibit {exhibit.label} already exists in this matter."]
    other.refresh_from_db()
    assert other.title != "Renamed" and audit_count(matter) == before


def test_exhibit_edit_form_needs_a_title():
    form = ExhibitEditForm({"label": "3", "title": ""})
    assert not form.is_valid() and form.errors["title"] == ["This field is required."]


def test_cites_as_form_refuses_a_citation_past_its_length_and_nothing_changes(attorney, matter, exhibit):
    before = audit_count(matter)
    form = CitesAsForm({"cites_as": "C" * 301})
    form_submit(form, lambda data: exhibit_set_cites_as(exhibit=exhibit, updated_by=attorney, **data))
    assert "at most 300 characters" in form.errors["cites_as"][0]
    exhibit.refresh_from_db()
    assert exhibit.cites_as == "" and audit_count(matter) == before


def test_password_form_puts_the_services_refusal_on_the_form(attorney, matter, exhibit):
    form = PasswordForm({"password": "hunter2"})
    form_submit(form, lambda data: exhibit_submit_password(exhibit=exhibit, submitted_by=attorney, **data))
    assert form.non_field_errors() == ["This exhibit is not waiting for a password."]
    assert PasswordForm({"password": ""}).errors["password"] == ["This field is required."]


def test_search_form_refuses_a_query_past_its_length():
    form = SearchForm({"q": "x" * 501})
    assert not form.is_valid() and "at most 500 characters" in form.errors["q"][0]


def test_reason_form_shows_the_services_refusal_on_the_reason(attorney, matter):
    marked = ExhibitFactory(matter=matter, generated_reason="Matches the draft “Motion”.")
    before = audit_count(matter)
    form = ReasonForm({"reason": "   ok  "})
    form_submit(form, lambda data: exhibit_override_generated(exhibit=marked, user=attorney, **data))
    assert "Write why this file is evidence" in form.errors["reason"][0]
    assert audit_count(matter) == before


def test_the_reason_reaches_the_page_and_nothing_is_recorded(client, attorney, matter):
    marked = ExhibitFactory(matter=matter, generated_reason="Matches the draft “Motion”.")
    client.force_login(attorney)
    before = audit_count(matter)
    response = client.post(reverse("matters:exhibit_override_generated", args=[matter.pk, marked.pk]),
                           {"reason": "short"}, follow=True)
    assert "Write why this file is evidence" in response.content.decode()
    assert audit_count(matter) == before


def test_button_form_carries_the_services_refusal(client, attorney, matter, exhibit):
    form = ButtonForm({})
    assert form.is_valid() and form_error_messages(form) == []
    client.force_login(attorney)
    response = client.post(reverse("matters:exhibit_reprocess", args=[matter.pk, exhibit.pk]), follow=True)
    assert "Only a failed exhibit can be processed again; this one is ready." in response.content.decode()
    exhibit.refresh_from_db()
    assert exhibit.status == Exhibit.Status.READY
