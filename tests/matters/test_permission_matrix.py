"""Every cell of the permission matrix (docs/glossary.md, People and permissions; matters/permissions.py),
checked at the services, so no page, command or task can go around it.

A cell is "allowed" when the service does not refuse with PermissionDenied (it may still refuse the input with
a ValidationError: that is past the wall)."""

import datetime
import io

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from matters.deadlines.services import deadline_delete, deadline_save
from matters.drafts.export_docx import docx_bytes
from matters.drafts.exports import draft_export
from matters.drafts.services import (
    draft_approve,
    draft_create,
    draft_verify,
    draft_version_create,
    draft_version_from_word,
    finding_waive,
)
from matters.exhibits.services import exhibit_create, exhibit_set_cites_as, exhibit_update
from matters.incoming.services import incoming_receive
from matters.models import AuditEntry, Exhibit, Production
from matters.permissions import ACTS as RULE_SET
from matters.permissions import MATTERLESS_ACTS
from matters.privilege.redaction_search import redactions_from_search
from matters.privilege.services import redaction_add, redaction_delete
from matters.productions.delivery import production_serve
from matters.productions.reservation import production_create
from matters.provenance import exhibit_override_generated, page_clear_injection
from matters.retention.services import matter_hold
from matters.services import matter_add_member, matter_create, matter_remove_member
from pipeline.digests.services import digests_request
from pipeline.stages.control import job_start
from tests.factories import ExhibitFactory, UserFactory

pytestmark = pytest.mark.django_db

PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
       b"trailer<</Root 1 0 R>>\n%%EOF\n")


def upload(matter, user):
    return exhibit_create(matter=matter, stream=io.BytesIO(PDF), original_name="a.pdf", origin="client",
                          uploaded_by=user, enqueue=False)


def an_exhibit(matter, attorney):
    return upload(matter, attorney)


def a_redaction(matter, attorney):
    page = ExhibitFactory(matter=matter, pages=["Call Dana Whitfield at 555-0142."]).pages.get()
    return redaction_add(page=page, rect=(72, 72, 300, 90), reason="PII", user=attorney)


def a_draft_version(matter, attorney):
    return draft_create(matter=matter, title="Motion", author_kind="person", author=attorney,
                        text="On March 3, 2019 the tenant paid $4,812.55 to the landlord.")


def a_finding(matter, attorney):
    version = a_draft_version(matter, attorney)
    findings = draft_verify(version=version)
    assert findings, "the draft should give the verifier something to flag"
    return findings[0]


def a_deadline(matter, user):
    return deadline_save(matter=matter, user=user, title="Opposition", event_date=datetime.date(2026, 3, 2),
                         period=14)


def a_member(matter):
    member = UserFactory(role="assistant")
    matter.members.add(member)
    return member


def a_done_production(matter, attorney):
    return Production.objects.create(matter=matter, prefix="SMITH", first_number=1, last_number=3, page_count=3,
                                     status=Production.Status.DONE, created_by=attorney)


class Named(io.BytesIO):
    name = "volume.pdf"


ACTS = {
    "upload": lambda m, a, u: upload(m, u),
    "edit_exhibit": lambda m, a, u: exhibit_update(exhibit=an_exhibit(m, a), updated_by=u, title="Lease", label=""),
    "start_job": lambda m, a, u: job_start(matter=m, instructions="Summarise.", kind="summary", user=u,
                                           enqueue=False),
    "start_production": lambda m, a, u: production_create(matter=m, exhibits=[], prefix="SMITH", created_by=u,
                                                          enqueue=False),
    "receive_production": lambda m, a, u: incoming_receive(matter=m, uploads=[Named(PDF)], origin="opposing_party",
                                                           user=u),
    "edit_draft": lambda m, a, u: draft_version_create(draft=a_draft_version(m, a).draft, text="New text.",
                                                       author_kind="person", author=u),
    "upload_word_version": lambda m, a, u: draft_version_from_word(
        base=a_draft_version(m, a), upload=io.BytesIO(docx_bytes(text="New text.", title="Motion", footer="")),
        original_name="motion.docx", user=u),
    "save_deadline": lambda m, a, u: a_deadline(m, u),
    "delete_deadline": lambda m, a, u: deadline_delete(deadline=a_deadline(m, a), user=u),
    "approve_draft": lambda m, a, u: draft_approve(version=a_draft_version(m, a), user=u),
    "waive_finding": lambda m, a, u: finding_waive(finding=a_finding(m, a), user=u, reason="x"),
    "serve_production": lambda m, a, u: production_serve(production=a_done_production(m, a), user=u,
                                                         served_to="Counsel for defendant"),
    "remove_redaction": lambda m, a, u: redaction_delete(redaction=a_redaction(m, a), user=u),
    "add_member": lambda m, a, u: matter_add_member(matter=m, user=UserFactory(role="assistant"), added_by=u),
    "remove_member": lambda m, a, u: matter_remove_member(matter=m, user=a_member(m), removed_by=u),
    "count_as_evidence": lambda m, a, u: exhibit_override_generated(exhibit=an_exhibit(m, a), user=u, reason="x"),
    "clear_injection_flag": lambda m, a, u: page_clear_injection(page=ExhibitFactory(matter=m, pages=["x"])
                                                                 .pages.get(), user=u, reason="x"),
    "set_cites_as": lambda m, a, u: exhibit_set_cites_as(exhibit=an_exhibit(m, a), updated_by=u, cites_as="Compl."),
    "hold_matter": lambda m, a, u: matter_hold(matter=m, user=u, reason="Litigation hold letter of 3 March."),
    "request_digests": lambda m, a, u: digests_request(matter=m, user=u),
    # Not approved: refused on its input past the wall (ValidationError), by anyone who may export.
    "export_draft": lambda m, a, u: draft_export(version=a_draft_version(m, a), user=u, kind="pdf"),
    "add_redaction": lambda m, a, u: redaction_add(page=ExhibitFactory(matter=m, pages=["x"]).pages.get(),
                                                   rect=(72, 72, 300, 90), reason="PII", user=u),
    "redact_by_search": lambda m, a, u: redactions_from_search(exhibit=ExhibitFactory(matter=m, pages=["x"]),
                                                               query="", reason="PII", user=u),
}
# Which act of the rule set (matters.permissions.ACTS) each cell exercises: every act of the rule set that
# concerns a matter is tried here, for every role.
RULE_OF = {
    "upload": "change_exhibits", "edit_exhibit": "change_exhibits", "start_job": "start_jobs",
    "start_production": "start_productions", "receive_production": "receive_productions",
    "edit_draft": "edit_drafts", "upload_word_version": "edit_drafts", "save_deadline": "save_deadlines",
    "delete_deadline": "save_deadlines", "approve_draft": "approve_draft", "waive_finding": "approve_draft",
    "serve_production": "serve_production", "remove_redaction": "remove_redaction", "add_member": "manage_members",
    "remove_member": "manage_members", "count_as_evidence": "decide_evidence",
    "clear_injection_flag": "decide_evidence", "set_cites_as": "set_cites_as", "hold_matter": "hold_matter",
    "request_digests": "request_digests", "export_draft": "export_drafts", "add_redaction": "change_exhibits",
    "redact_by_search": "change_exhibits",
}
ASSISTANT_MAY = {"upload", "edit_exhibit", "start_job", "start_production", "receive_production", "edit_draft",
                 "upload_word_version", "save_deadline", "delete_deadline", "request_digests", "export_draft",
                 "add_redaction", "redact_by_search"}
ROLES = {
    # role: (group, superuser, member of the matter, acts allowed)
    "attorney": ("attorney", False, True, set(ACTS)),
    "assistant": ("assistant", False, True, ASSISTANT_MAY),
    "operator": ("operator", False, True, {"export_draft"}),
    "attorney of another matter": ("attorney", False, False, set()),
    "superuser, not a member": ("attorney", True, False, set()),
}


def test_the_matrix_tries_every_act_of_the_rule_set():
    assert set(RULE_OF) == set(ACTS)
    assert set(RULE_OF.values()) == set(RULE_SET) - MATTERLESS_ACTS


@pytest.mark.parametrize("act", list(ACTS))
@pytest.mark.parametrize("role", list(ROLES))
def test_permission_matrix_cell(make_user, attorney, matter, role, act):
    group, superuser, member, allowed = ROLES[role]
    user = make_user("someone", group, is_superuser=superuser, is_staff=superuser)
    if member:
        matter.members.add(user)
    try:
        ACTS[act](matter, attorney, user)
        outcome = "allowed"
    except PermissionDenied:
        outcome = "denied"
    except ValidationError:  # refused on its input, past the permission check
        outcome = "allowed"
    assert outcome == ("allowed" if act in allowed else "denied"), f"{role} / {act}"


@pytest.mark.parametrize("role, may_open", [("attorney", True), ("assistant", True), ("operator", False)])
def test_opening_a_matter_is_checked_in_the_service(make_user, role, may_open):
    user = make_user("someone", role)
    if may_open:
        assert list(matter_create(name="Doe v. Roe", created_by=user).members.all()) == [user]
    else:
        with pytest.raises(PermissionDenied, match="You may not open matters"):
            matter_create(name="Doe v. Roe", created_by=user)
        assert not AuditEntry.objects.filter(action="matter.create").exists()


@pytest.mark.parametrize(("role", "status"), [("attorney", 200), ("assistant", 200), ("operator", 403),
                                            ("attorney of another matter", 404), ("superuser, not a member", 404)])
def test_the_word_upload_url_follows_the_matrix(make_user, attorney, matter, client, role, status):
    group, superuser, member, _ = ROLES[role]
    user = make_user("someone", group, is_superuser=superuser, is_staff=superuser)
    if member:
        matter.members.add(user)
    version = a_draft_version(matter, attorney)
    client.force_login(user)
    # No file: past the wall the form refuses it on its field, so no version is made by anyone.
    response = client.post(reverse("matters:draft_word_upload", args=[matter.pk, version.draft_id, 1]))
    assert response.status_code == status
    assert version.draft.versions.count() == 1


def test_serving_records_who_and_when_once_and_is_audited(attorney, matter, client):
    production = a_done_production(matter, attorney)
    client.force_login(attorney)
    url = reverse("matters:production_serve", args=[matter.pk, production.pk])
    response = client.post(url, {"served_to": "  "}, follow=True)
    assert "Say whom the production was served on" in response.content.decode()
    response = client.post(url, {"served_to": "Counsel for Jones LLC"}, follow=True)
    production.refresh_from_db()
    assert production.served_by == attorney and production.served_at is not None
    assert f'id="served-{production.pk}"' in response.content.decode()
    entry = AuditEntry.objects.get(action="production.serve")
    assert entry.actor == "alice" and entry.detail["served_to"] == "Counsel for Jones LLC"
    response = client.post(url, {"served_to": "Someone else"}, follow=True)
    assert "already served" in response.content.decode()
    assert AuditEntry.objects.filter(action="production.serve").count() == 1


def test_an_assistant_sees_no_serve_button_and_is_refused(make_user, attorney, matter, client):
    production = a_done_production(matter, attorney)
    assistant = make_user("ann", "assistant")
    matter.members.add(assistant)
    client.force_login(assistant)
    page = client.get(reverse("matters:productions", args=[matter.pk])).content.decode()
    assert "Record as served" not in page
    response = client.post(reverse("matters:production_serve", args=[matter.pk, production.pk]),
                           {"served_to": "Counsel for Jones LLC"})
    assert response.status_code == 403
    production.refresh_from_db()
    assert production.served_at is None and not Exhibit.objects.filter(matter=matter).exists()


@pytest.mark.parametrize("role", list(ROLES))
def test_the_table_of_authorities_preview_is_behind_the_matter_wall(make_user, attorney, matter, client, role):
    """Reading a draft's table of authorities is reading the draft: every member may, nobody else (404, so the
    matter's existence is not disclosed either)."""
    group, superuser, member, _ = ROLES[role]
    user = make_user("someone", group, is_superuser=superuser, is_staff=superuser)
    if member:
        matter.members.add(user)
    version = a_draft_version(matter, attorney)
    url = reverse("matters:draft_authorities", args=[matter.pk, version.draft_id, version.number])
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == (200 if member else 404), role
    if member:
        assert 'id="toa-empty"' in response.content.decode()  # the draft cites no authority
    client.logout()
    assert client.get(url).status_code == 302  # to the login page
