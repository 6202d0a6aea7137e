"""The deadlines section of the matter page: the form counts and saves, a refusal stays on the field with what was
typed, the list shows each counting step by step, and the wall and the roles hold at the URL."""

import datetime as dt

import pytest
from django.urls import reverse

from matters.deadlines.services import deadline_save
from matters.models import Deadline

pytestmark = pytest.mark.django_db

FORM = {"title": "Opposition to the motion to dismiss", "event_date": "2025-08-16", "period": "14", "unit": "days",
        "rules": "FRCP", "service": "none", "state": ""}


def test_the_form_saves_a_deadline_and_the_page_lists_its_counting(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:deadline_new", args=[matter.pk]), FORM, follow=True)
    assert response.status_code == 200
    deadline = Deadline.objects.get(matter=matter)
    # Saturday 2025-08-16 + 14 days = Saturday 08-30; Sunday 08-31; Monday 09-01 Labor Day: Tuesday 09-02.
    assert deadline.due_date == dt.date(2025, 9, 2)
    page = response.content.decode()
    assert "Opposition to the motion to dismiss saved. Due: Tuesday, September 2, 2025." in page
    assert "Tuesday, September 2, 2025</strong>" in page
    assert "Saturday, August 30, 2025 is a Saturday" in page
    assert "Monday, September 1, 2025 is a legal holiday: Labor Day" in page


def test_htmx_gets_the_section_back(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:deadline_new", args=[matter.pk]), FORM, HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert page.lstrip().startswith('<section class="card" id="deadlines">')
    assert "Due: Tuesday, September 2, 2025." in page


def test_a_refused_period_is_said_on_its_field_with_what_was_typed(client, attorney, matter):
    client.force_login(attorney)
    typed = FORM | {"unit": "hours", "period": "48"}
    response = client.post(reverse("matters:deadline_new", args=[matter.pk]), typed)
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="error-event_time"' in page and "counted from the time of the event" in page
    assert 'value="Opposition to the motion to dismiss"' in page and 'value="48"' in page
    assert not Deadline.objects.exists()


def test_an_unknown_state_is_refused_on_the_state_field(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:deadline_new", args=[matter.pk]), FORM | {"state": "ZZ"},
                           HTTP_HX_REQUEST="true")
    assert 'id="error-state"' in response.content.decode()
    assert not Deadline.objects.exists()


@pytest.mark.parametrize(("role", "member", "status"), [
    ("assistant", True, 302), ("operator", True, 403), ("attorney", False, 404)])
def test_the_wall_and_the_roles_hold_at_the_url(client, make_user, matter, role, member, status):
    user = make_user("someone", role)
    if member:
        matter.members.add(user)
    client.force_login(user)
    response = client.post(reverse("matters:deadline_new", args=[matter.pk]), FORM)
    assert response.status_code == status
    assert Deadline.objects.exists() is (status == 302)


def test_a_member_deletes_and_an_outsider_cannot(client, attorney, make_user, matter):
    deadline = deadline_save(matter=matter, user=attorney, title="Reply", event_date=dt.date(2026, 3, 2), period=7)
    url = reverse("matters:deadline_delete", args=[matter.pk, deadline.pk])
    client.force_login(make_user("bob", "attorney"))
    assert client.post(url).status_code == 404
    assert Deadline.objects.filter(pk=deadline.pk).exists()
    client.force_login(attorney)
    response = client.post(url, follow=True)
    assert "The deadline “Reply” was deleted." in response.content.decode()
    assert not Deadline.objects.exists()


def test_the_matter_page_shows_the_form_only_to_who_may_save(client, make_user, matter):
    operator = make_user("olive", "operator")
    matter.members.add(operator)
    client.force_login(operator)
    page = client.get(reverse("matters:detail", args=[matter.pk])).content.decode()
    assert 'id="deadlines"' in page and 'id="deadline-form"' not in page
