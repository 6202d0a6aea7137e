"""The forms of the privilege pages and of serving a production: each refusal on the field at fault, and nothing
written. Redacting a page's improper boxes is one transaction: all of them or none."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from matters.forms import ButtonForm
from matters.models import AuditEntry, ImproperRedaction, Redaction
from matters.privilege.forms import LogEntryForm, ReasonCodeForm, RedactionBoxForm, RedactSearchForm
from matters.privilege.services import improper_redact, redaction_add, redaction_delete
from matters.productions.delivery import production_serve
from matters.productions.forms import ServeForm
from matters.validation import form_submit
from tests.factories import ExhibitFactory, ProductionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(matter):
    return ExhibitFactory(matter=matter, pages=["Call Dana Whitfield at 555-0142."]).pages.get()


def writes(matter) -> tuple[int, int]:
    return Redaction.objects.count(), AuditEntry.objects.filter(matter=matter).count()


def test_box_form_puts_a_coordinate_that_is_not_a_number_on_its_field(attorney, matter, page):
    before = writes(matter)
    form = RedactionBoxForm({"x0": "72", "y0": "72", "x1": "wide", "y1": "90", "reason": "PII"})
    form_submit(form, lambda data: redaction_add(page=page, rect=form.rect(), reason=data["reason"], user=attorney))
    assert form.errors == {"x1": ["A redaction box needs four numbers (left, top, right, bottom, in points)."]}
    assert writes(matter) == before


def test_box_form_shows_an_unknown_reason_code_on_the_reason(attorney, matter, page):
    before = writes(matter)
    form = RedactionBoxForm({"x0": "72", "y0": "72", "x1": "300", "y1": "90", "reason": "SECRET"})
    form_submit(form, lambda data: redaction_add(page=page, rect=form.rect(), reason=data["reason"], user=attorney))
    assert form.errors["reason"][0].startswith("Choose a reason code (")
    assert writes(matter) == before


def test_search_form_shows_a_broken_pattern_on_the_query(client, attorney, matter, page):
    form = RedactSearchForm({"query": "(unclosed", "regex": "on", "reason": "PII"})
    assert form.is_valid() and form.cleaned_data["regex"] is True
    before = writes(matter)
    client.force_login(attorney)
    response = client.post(reverse("matters:redact_search", args=[matter.pk, page.exhibit_id]),
                           {"query": "", "reason": "PII"}, follow=True)
    assert "Type the words or pattern to redact" in response.content.decode()
    assert writes(matter) == before


def test_search_form_refuses_a_query_past_its_length():
    form = RedactSearchForm({"query": "x" * 1001, "reason": "PII"})
    assert not form.is_valid() and "at most 1000 characters" in form.errors["query"][0]


def test_improper_boxes_are_redacted_all_or_none(attorney, matter, page):
    ImproperRedaction.objects.create(page=page, x0=72, y0=72, x1=300, y1=90, hidden_text="Dana Whitfield")
    # A box off the page (a damaged reading): the service refuses it, and the first box is not redacted alone.
    ImproperRedaction.objects.create(page=page, x0=5000, y0=5000, x1=5100, y1=5020, hidden_text="555-0142")
    before = writes(matter)
    form = ReasonCodeForm({"reason": "PII"})
    form_submit(form, lambda data: improper_redact(page=page, user=attorney, **data))
    assert "The box is not on page 1" in form.non_field_errors()[0]
    assert writes(matter) == before
    form = ReasonCodeForm({"reason": "NOPE"})
    form_submit(form, lambda data: improper_redact(page=page, user=attorney, **data))
    assert form.errors["reason"][0].startswith("Choose a reason code (") and writes(matter) == before


def test_improper_boxes_redacted_are_each_audited(attorney, matter, page):
    ImproperRedaction.objects.create(page=page, x0=72, y0=72, x1=300, y1=90, hidden_text="Dana Whitfield")
    ImproperRedaction.objects.create(page=page, x0=72, y0=100, x1=300, y1=118, hidden_text="555-0142")
    added = improper_redact(page=page, reason="PII", user=attorney)
    assert len(added) == 2 and improper_redact(page=page, reason="PII", user=attorney) == []
    assert AuditEntry.objects.filter(matter=matter, action="redaction.add").count() == 2


def test_improper_confirmation_without_a_reason_is_refused_on_the_page(client, attorney, matter, page):
    ImproperRedaction.objects.create(page=page, x0=72, y0=72, x1=300, y1=90, hidden_text="Dana Whitfield")
    client.force_login(attorney)
    response = client.post(reverse("matters:improper_confirm", args=[matter.pk, page.exhibit_id, 1]),
                           {"reason": "  "}, follow=True)
    assert "Give the reason this page may be produced" in response.content.decode()
    assert not ImproperRedaction.objects.exclude(confirmed_reason="").exists()


def test_removing_a_box_goes_through_a_button_form_and_is_refused_to_an_assistant(make_user, matter, attorney,
                                                                                   page):
    box = redaction_add(page=page, rect=(72, 72, 300, 90), reason="PII", user=attorney)
    assistant = make_user("ann", "assistant")
    matter.members.add(assistant)
    form = ButtonForm({})
    with pytest.raises(PermissionDenied, match="Only an attorney may remove a redaction box"):
        form_submit(form, lambda _: redaction_delete(redaction=box, user=assistant))
    assert Redaction.objects.filter(pk=box.pk).exists()


def test_log_entry_form_needs_the_row():
    form = LogEntryForm({"entry": "first", "date": "2017-07-01"})
    assert not form.is_valid() and form.errors == {"entry": ["Which row of the log?"]}


def test_serve_form_puts_an_empty_recipient_on_its_field(attorney, matter):
    production = ProductionFactory(matter=matter)
    form = ServeForm({"served_to": " \u200b "})
    form_submit(form, lambda data: production_serve(production=production, user=attorney, **data))
    assert form.errors["served_to"] == ["Say whom the production was served on (the party or its counsel)."]
    production.refresh_from_db()
    assert production.served_at is None and not AuditEntry.objects.filter(action="production.serve").exists()


def test_a_refusal_keyed_to_no_field_of_the_form_is_not_lost():
    form = ServeForm({"served_to": "Counsel"})

    def refuse(_):
        raise ValidationError({"production": "This production was already served."})

    assert form_submit(form, refuse) is None
    assert form.non_field_errors() == ["This production was already served."]
