"""Removing a redaction box lets its words into the next production: it needs an attorney of the matter, in the
service, whatever page or command asks, whoever drew the box."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from matters.models import Redaction
from matters.privilege.services import redaction_add, redaction_delete
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def assistant(make_user, matter):
    user = make_user("sam", "assistant")
    matter.members.add(user)
    return user


@pytest.fixture
def page(matter):
    return ExhibitFactory(matter=matter, pages=["Call Dana Whitfield at 555-0142 about the settlement."]).pages.get()


def test_an_assistant_cannot_remove_an_attorneys_box_nor_their_own(page, attorney, assistant):
    attorneys = redaction_add(page=page, rect=(72, 72, 300, 90), reason="PII", user=attorney)
    own = redaction_add(page=page, rect=(72, 100, 300, 118), reason="PII", user=assistant)
    for box in (attorneys, own):
        with pytest.raises(PermissionDenied, match="remove a redaction box"):
            redaction_delete(redaction=box, user=assistant)
    assert Redaction.objects.filter(page=page).count() == 2
    assert not page.exhibit.matter.audit_entries.filter(action="redaction.delete").exists()
    redaction_delete(redaction=own, user=attorney)
    assert list(Redaction.objects.filter(page=page)) == [attorneys]


def test_the_page_offers_removal_to_attorneys_and_refuses_the_request_of_an_assistant(client, page, attorney,
                                                                                   assistant):
    box = redaction_add(page=page, rect=(72, 72, 300, 90), reason="PII", user=attorney)
    exhibit, matter = page.exhibit, page.exhibit.matter
    remove = reverse("matters:redaction_delete", args=[matter.pk, exhibit.pk, 1, box.pk])
    viewer = reverse("matters:page", args=[matter.pk, exhibit.pk, 1])
    client.force_login(assistant)
    assert remove not in client.get(viewer).content.decode()
    assert client.post(remove).status_code == 403
    assert Redaction.objects.filter(pk=box.pk).exists()
    client.force_login(attorney)
    assert remove in client.get(viewer).content.decode()
    assert client.post(remove).status_code == 302 and not Redaction.objects.filter(pk=box.pk).exists()
