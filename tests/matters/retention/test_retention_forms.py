"""The retention section's forms: a hold without a reason and a purge without the matter's name are refused on
their fields, and nothing changes."""

import pytest
from django.urls import reverse

from matters.models import AuditEntry, Matter
from matters.retention.forms import HoldForm, PurgeForm
from matters.retention.purge import matter_purge
from matters.retention.services import matter_hold
from matters.validation import form_submit

pytestmark = pytest.mark.django_db


def test_hold_form_refuses_an_action_that_is_neither_hold_nor_lift():
    form = HoldForm({"action": "purge", "reason": "Order of 3 June"})
    assert not form.is_valid()
    assert form.errors == {"action": ["Choose to put the matter on hold or to lift it."]}


def test_hold_form_shows_a_missing_reason_on_the_reason(attorney, matter):
    form = HoldForm({"action": "hold", "reason": " \u200b "})
    form_submit(form, lambda data: matter_hold(matter=matter, user=attorney, reason=data["reason"]))
    assert form.errors["reason"] == ["Say why (a litigation hold notice, a preservation letter, a court order)."]
    matter.refresh_from_db()
    assert not matter.legal_hold and not AuditEntry.objects.filter(action="matter.hold").exists()


def test_purge_form_shows_a_wrong_name_on_the_name_and_the_matter_stays(client, attorney, matter):
    form = PurgeForm({"confirm_name": "Smith"})
    form_submit(form, lambda data: matter_purge(matter=matter, user=attorney, **data))
    assert form.errors["confirm_name"] == ["Type the matter's name exactly as it reads (Smith v. Jones) to purge it."]
    client.force_login(attorney)
    response = client.post(reverse("matters:purge", args=[matter.pk]), {"confirm_name": "Smith"}, follow=True)
    assert "Type the matter&#x27;s name exactly" in response.content.decode()
    assert Matter.objects.filter(pk=matter.pk).exists()
