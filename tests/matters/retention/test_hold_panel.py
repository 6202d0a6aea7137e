"""The retention section names the hold a matter is under: its reason, who put it on, and when."""

import pytest
import time_machine
from django.urls import reverse

from matters.models import Matter
from matters.retention.services import matter_hold, matter_hold_lift

pytestmark = pytest.mark.django_db


# The clock stays at the hold's day: a session saved then would have expired by today.
@time_machine.travel("2026-05-02 14:30:00+00:00", tick=False)
def test_the_panel_shows_the_holds_reason_who_set_it_and_when(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:hold", args=[matter.pk]),
                           {"action": "hold", "reason": "Preservation letter <of 2 May>"},
                           headers={"HX-Request": "true"})
    panel = response.content.decode()
    assert "Put on hold by alice on 2026-05-02 14:30 UTC. Reason: Preservation letter &lt;of 2 May&gt;" in panel
    page = client.get(matter.get_absolute_url()).content.decode()
    assert "Put on hold by alice on 2026-05-02 14:30 UTC. Reason: Preservation letter &lt;of 2 May&gt;" in page


def test_a_second_hold_shows_the_newest_and_a_lifted_hold_shows_none(client, attorney, matter):
    with time_machine.travel("2026-05-02 09:00:00+00:00", tick=False):
        matter = matter_hold(matter=matter, user=attorney, reason="Hold notice")
    with time_machine.travel("2026-06-01 09:00:00+00:00", tick=False):
        matter = matter_hold_lift(matter=matter, user=attorney, reason="Settled")
        matter = matter_hold(matter=matter, user=attorney, reason="Court order of 1 June")
    client.force_login(attorney)
    page = client.get(matter.get_absolute_url()).content.decode()
    assert "on 2026-06-01 09:00 UTC. Reason: Court order of 1 June" in page and "Hold notice" not in page
    matter_hold_lift(matter=matter, user=attorney, reason="Order vacated")
    page = client.get(matter.get_absolute_url()).content.decode()
    assert 'id="hold-record"' not in page and "Not on legal hold." in page


def test_a_hold_no_audit_entry_records_says_so(client, attorney, matter):
    Matter.objects.filter(pk=matter.pk).update(legal_hold=True)
    client.force_login(attorney)
    page = client.get(matter.get_absolute_url()).content.decode()
    assert "No audit entry records who put this matter on hold, or why." in page


def test_an_action_that_is_neither_hold_nor_lift_is_refused_not_taken_for_a_hold(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:hold", args=[matter.pk]),
                           {"action": "unhold", "reason": "Litigation hold letter of 3 March 2026."}, follow=True)
    matter.refresh_from_db()
    assert not matter.legal_hold
    assert "Choose to put the matter on hold or to lift it." in response.content.decode()
