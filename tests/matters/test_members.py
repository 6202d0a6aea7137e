"""Attorneys manage a matter's members on its page, through the audited services."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import call_command
from django.urls import reverse

from matters.models import AuditEntry, Matter
from matters.services import matter_add_member, matter_remove_member

pytestmark = pytest.mark.django_db


def test_an_attorney_adds_a_member_on_the_matter_page_and_it_is_audited(make_user, attorney, matter, client):
    make_user("ann", "assistant")
    client.force_login(attorney)
    page = client.get(reverse("matters:detail", args=[matter.pk])).content.decode()
    assert 'id="member-form"' in page and 'id="member-alice"' in page
    response = client.post(reverse("matters:member", args=[matter.pk, "add"]), {"user": "ann"}, follow=True)
    page = response.content.decode()
    assert matter.members.filter(username="ann").exists()
    assert 'id="member-ann"' in page and "assistant" in page
    entry = AuditEntry.objects.get(action="matter.member_add")
    assert entry.actor == "alice" and entry.detail == {"user": "ann"}


def test_a_refused_addition_says_why_on_the_field_and_keeps_what_was_typed(attorney, matter, client):
    client.force_login(attorney)
    response = client.post(reverse("matters:member", args=[matter.pk, "add"]), {"user": "nobody-here"})
    page = response.content.decode()
    assert response.status_code == 400
    assert 'id="error-user"' in page and "no active account with that user name" in page
    assert 'value="nobody-here"' in page
    response = client.post(reverse("matters:member", args=[matter.pk, "add"]), {"user": "alice"})
    assert "already a member of this matter" in response.content.decode()
    assert not AuditEntry.objects.filter(action="matter.member_add").exists()


def test_an_assistant_sees_no_member_form_and_is_refused(make_user, attorney, matter, client):
    assistant = make_user("ann", "assistant")
    make_user("bea", "attorney")
    matter.members.add(assistant)
    client.force_login(assistant)
    page = client.get(reverse("matters:detail", args=[matter.pk])).content.decode()
    assert 'id="member-form"' not in page and 'id="member-alice"' in page
    response = client.post(reverse("matters:member", args=[matter.pk, "add"]), {"user": "bea"})
    assert response.status_code == 403
    assert not matter.members.filter(username="bea").exists()


def test_a_stranger_gets_404_and_learns_nothing(make_user, matter, client):
    make_user("bea", "attorney")
    client.force_login(make_user("sam", "attorney"))
    response = client.post(reverse("matters:member", args=[matter.pk, "add"]), {"user": "sam"})
    assert response.status_code == 404
    assert not matter.members.filter(username="sam").exists()


def test_removing_a_member_is_audited_and_the_last_attorney_stays(make_user, attorney, matter):
    assistant = make_user("ann", "assistant")
    matter_add_member(matter=matter, user=assistant, added_by=attorney)
    matter_remove_member(matter=matter, user=assistant, removed_by=attorney)
    assert not matter.members.filter(pk=assistant.pk).exists()
    assert AuditEntry.objects.filter(action="matter.member_remove", detail__user="ann").count() == 1
    with pytest.raises(ValidationError, match="last attorney"):
        matter_remove_member(matter=matter, user=attorney, removed_by=attorney)
    second = make_user("bea", "attorney")
    matter_add_member(matter=matter, user=second, added_by=attorney)
    matter_remove_member(matter=matter, user=attorney, removed_by=second)
    assert list(matter.members.values_list("username", flat=True)) == ["bea"]


def test_the_service_refuses_an_assistant_whatever_the_path(make_user, attorney, matter):
    assistant = make_user("ann", "assistant")
    matter.members.add(assistant)
    with pytest.raises(PermissionDenied):
        matter_add_member(matter=matter, user=make_user("bea", "attorney"), added_by=assistant)
    with pytest.raises(PermissionDenied):
        matter_remove_member(matter=matter, user=attorney, removed_by=assistant)


def test_the_command_line_adds_members_through_the_audited_service(make_user):
    make_user("alice", "attorney")
    make_user("ann", "assistant")
    call_command("matter_create", "--name", "Doe v. Roe", "--member", "alice", "--member", "ann")
    matter = Matter.objects.get(name="Doe v. Roe")
    assert set(matter.members.values_list("username", flat=True)) == {"alice", "ann"}
    entry = AuditEntry.objects.get(action="matter.member_add", matter=matter)
    assert entry.actor == "system"  # the command line: no user
    assert entry.detail == {"user": "ann"}


def test_a_page_view_reads_the_viewers_membership_once_with_the_matter(attorney, matter, client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(attorney)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("matters:detail", args=[matter.pk])).status_code == 200
    sql = [q["sql"] for q in queries.captured_queries]
    # The page gates several controls on the attorney's acts; each act's rule needs the membership, which the
    # read of the matter (a member's matters only) has already proved.
    matter_reads = [q for q in sql if 'FROM "matters_matter" INNER JOIN "matters_matter_members"' in q]
    assert len(matter_reads) == 1, sql
    assert not [q for q in sql if 'FROM "auth_user" INNER JOIN "matters_matter_members"' in q and "LIMIT 1" in q]


def test_a_membership_changed_during_a_request_is_read_anew(make_user, attorney, matter, rf):
    from matters.permissions import RememberMemberships, may

    ann = make_user("ann", "assistant")
    seen = []

    def view(request):
        seen.append(may(ann, "change_exhibits", matter))
        matter_add_member(matter=matter, user=ann, added_by=attorney)
        seen.append(may(ann, "change_exhibits", matter))
        matter_remove_member(matter=matter, user=ann, removed_by=attorney)
        seen.append(may(ann, "change_exhibits", matter))

    RememberMemberships(view)(rf.get("/"))
    assert seen == [False, True, False]
