"""The permission matrix over every URL of the project: each route the URL resolver knows, for each role as a
member of the matter and as a non-member, a superuser who is not a member, and nobody logged in, by GET and by
POST.

What each answer must be comes from the rule set (:mod:`matters.permissions`), not from a table of status codes:
:data:`ROUTES` says which act of the rule set a route's method does (or that any member may read it), and the
expectation is :func:`matters.permissions.may` for that user, act and matter:

- nobody logged in is sent to the login page;
- a non-member gets exactly what the same URL gets for a matter (or job) that does not exist, and that is a 404:
  the wall does not disclose that the matter exists;
- a member the rule set lets through is let through (no 403, no 404); one it refuses is refused: a 403, or the
  refusal the rule set words (``ACTS[act][1]``) in the page's messages, where a view shows it on the page;
- a method the route does not take is a 405;
- no answer anywhere is a 500.

A route missing from :data:`ROUTES` fails :func:`test_every_route_is_in_the_matrix`, so a new page cannot slip past
the wall unchecked. POSTs are sent empty (with the few ids a view needs to find its object) and rolled back, so
the answers test the wall and the matter stays as built for the next request.
"""

import datetime as dt
import io
import re

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from matters.deadlines.services import deadline_save
from matters.drafts.services import draft_create, draft_verify
from matters.incoming.services import incoming_receive
from matters.models import Matter, PrivilegeLogEntry
from matters.permissions import ACTS, MATTERLESS_ACTS, ROLES, may
from matters.privilege.services import redaction_add
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from pipeline.stages.control import job_start

pytestmark = pytest.mark.django_db

READ = "read"  # any member of the matter may (matter_for_user is the wall)
ANYONE = "anyone logged in"
PUBLIC = "public"  # no login needed

# route name: {method: act of the rule set, READ, ANYONE or PUBLIC}; a method not listed is answered 405.
ROUTES: dict[str, dict[str, str]] = {
    "login": {"GET": PUBLIC, "POST": PUBLIC},
    "logout": {"POST": PUBLIC},
    "favicon": {"GET": PUBLIC, "POST": PUBLIC},
    "admin_password_change": {"GET": ANYONE, "POST": ANYONE},
    "matters:list": {"GET": ANYONE},
    "matters:new": {"POST": "create_matters"},
    "matters:detail": {"GET": READ},
    "matters:member": {"POST": "manage_members"},
    "matters:upload": {"POST": "change_exhibits"},
    "matters:exhibit_rows": {"GET": READ},
    "matters:exhibit": {"GET": READ},
    "matters:exhibit_edit": {"POST": "change_exhibits"},
    "matters:exhibit_cites_as": {"POST": "set_cites_as"},
    "matters:exhibit_password": {"POST": "change_exhibits"},
    "matters:exhibit_original": {"GET": READ},
    "matters:exhibit_reprocess": {"POST": "change_exhibits"},
    "matters:exhibit_override_generated": {"POST": "decide_evidence"},
    "matters:page": {"GET": READ},
    "matters:page_clear_injection": {"POST": "decide_evidence"},
    "matters:page_image": {"GET": READ},
    "matters:privilege_log": {"GET": READ, "POST": "serve_production"},
    "matters:privilege_log_download": {"GET": READ},
    "matters:redact_search": {"POST": "change_exhibits"},
    "matters:redaction_add": {"POST": "change_exhibits"},
    "matters:redaction_delete": {"POST": "remove_redaction"},
    "matters:improper_redact": {"POST": "change_exhibits"},
    "matters:improper_confirm": {"POST": "serve_production"},
    "matters:productions": {"GET": READ, "POST": "start_productions"},
    "matters:production_serve": {"POST": "serve_production"},
    "matters:production_download": {"GET": READ},
    "matters:incoming_upload": {"POST": "receive_productions"},
    "matters:incoming": {"GET": READ, "POST": "receive_productions"},
    "matters:audit": {"GET": READ},
    "matters:hold": {"POST": "hold_matter"},
    "matters:purge": {"POST": "hold_matter"},
    "matters:drafts": {"GET": READ},
    "matters:draft": {"GET": READ},
    "matters:draft_rename": {"POST": "edit_drafts"},
    "matters:draft_versions": {"GET": READ},
    "matters:draft_version": {"GET": READ},
    "matters:review_item": {"GET": READ},
    "matters:finding_resolve": {"POST": "approve_draft"},
    "matters:draft_edit": {"POST": "edit_drafts"},
    "matters:draft_word_upload": {"POST": "edit_drafts"},
    "matters:draft_approve": {"POST": "approve_draft"},
    "matters:draft_export": {"POST": READ},  # a POST: every export is audited
    "matters:draft_authorities": {"GET": READ},
    "matters:deadline_new": {"POST": "save_deadlines"},
    "matters:deadline_delete": {"POST": "save_deadlines"},
    "matters:chronology": {"GET": READ},
    "pipeline:topology": {"GET": "see_topology"},
    "pipeline:topology_probe": {"POST": "see_topology"},
    "pipeline:topology_discover": {"POST": "see_topology"},
    "pipeline:jobs": {"GET": READ, "POST": "start_jobs"},
    "pipeline:digests": {"GET": READ},
    "pipeline:digests_request": {"POST": "request_digests"},
    "pipeline:exhibit_digest": {"GET": READ},
    "pipeline:exhibit_digest_request": {"POST": "request_digests"},
    "pipeline:job": {"GET": READ},
    "pipeline:job_cancel": {"POST": "start_jobs"},
    "pipeline:stage_retry": {"POST": "start_jobs"},
    "pipeline:job_continue": {"POST": "approve_draft"},
    "pipeline:stage_skip": {"POST": "approve_draft"},
    "pipeline:job_front": {"POST": "start_jobs"},
}
# The Django admin answers with its own login and model permissions (the topology admin asks the rule set:
# tests/pipeline/topology/); the matrix leaves it to those tests.
ADMIN = "admin"  # its namespace

# Who asks: (group, superuser, member of the matter). ``None`` is nobody logged in.
PEOPLE = {**{f"{role}, member": (role, False, True) for role in ROLES},
          **{f"{role}, not a member": (role, False, False) for role in ROLES},
          "superuser, not a member": (None, True, False)}


def routes() -> dict[str, str]:
    """Every route of the project as ``{name: pattern}`` (``matters:exhibit`` → ``matters/<int:matter_id>/...``),
    the admin's left out (see :data:`ADMIN`). A route with no name is named by its pattern."""
    found: dict[str, str] = {}

    def walk(patterns, prefix: str, namespace: str) -> None:
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver) and entry.namespace == ADMIN:
                continue
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, route, f"{namespace}{entry.namespace}:" if entry.namespace else namespace)
            elif isinstance(entry, URLPattern):
                found[f"{namespace}{entry.name}" if entry.name else route] = route
    walk(get_resolver().url_patterns, "", "")
    return found


def test_every_route_is_in_the_matrix():
    names = {"favicon" if route == "favicon.ico" else name for name, route in routes().items()}
    assert names == set(ROUTES), "add the new route to ROUTES with the act of the rule set it does"
    acts = {act for methods in ROUTES.values() for act in methods.values()} - {READ, ANYONE, PUBLIC}
    assert acts <= set(ACTS), acts - set(ACTS)


PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
       b"trailer<</Root 1 0 R>>\n%%EOF\n")


class Named(io.BytesIO):
    name = "volume.pdf"


@pytest.fixture
def world(matter, attorney, ingest, corpus, make_user) -> dict:
    """A matter with one of everything a URL names: an exhibit with pages and a redaction, a finished production
    with a withheld document (so a privilege log entry), a received volume, a verified draft with a finding, a
    deadline and a job. Returns the URL arguments and the few POST fields a view needs to find its object."""
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    withheld = ingest(matter, corpus("court/cafc_3.pdf"))
    page = exhibit.pages.get(number=1)
    redaction = redaction_add(page=page, rect=(72, 72, 300, 90), reason="PII", user=attorney)
    production = production_create(matter=matter, exhibits=[exhibit, withheld], prefix="SMITH", created_by=attorney,
                                   enqueue=False, withheld={withheld.pk: {"basis": "work_product",
                                                                          "description": "Draft brief"}})
    production_run(production_id=production.pk)
    entry = PrivilegeLogEntry.objects.filter(document__production=production).first()
    incoming = incoming_receive(matter=matter, uploads=[Named(PDF)], origin="opposing_party", user=attorney)
    version = draft_create(matter=matter, title="Motion", author_kind="person", author=attorney,
                           text="On March 3, 2019 the tenant paid $4,812.55 to the landlord.")
    assert draft_verify(version=version), "the draft should give the verifier something to flag"
    deadline = deadline_save(matter=matter, user=attorney, title="Opposition", event_date=dt.date(2026, 3, 2),
                             period=14)
    job = job_start(matter=matter, instructions="Summarise.", kind="summary", user=attorney, enqueue=False)
    return {
        "args": {"matter_id": matter.pk, "exhibit_id": exhibit.pk, "number": 1, "production_id": production.pk,
                 "redaction_id": redaction.pk, "incoming_id": incoming.pk, "draft_id": version.draft_id,
                 "deadline_id": deadline.pk, "job_id": job.pk},
        # route: its str arguments
        "words": {"matters:member": {"action": "add"}, "matters:page_image": {"size": "thumb"},
                  "matters:privilege_log_download": {"kind": "csv"}, "matters:production_download": {"kind": "pdf"},
                  "matters:draft_export": {"kind": "docx"}, "matters:finding_resolve": {"action": "waive"}},
        # Input a form accepts where the view reads it before the service asks the rule set, so the answer is
        # the rule set's and not the form's.
        "post": {"matters:privilege_log": {"entry": entry.pk if entry else ""},
                 "matters:member": {"user": make_user("bystander", "assistant").username},
                 "matters:deadline_new": {"title": "Reply", "event_date": "2026-03-02", "period": "7", "unit": "days",
                                          "rules": "FRCP", "service": "none"},
                 "pipeline:jobs": {"kind": "summary", "instructions": "Summarise the lease."},
                 "pipeline:job_front": {"reason": "The hearing moved up a week."}},
        "version": version,
    }


def url_of(route: str, world: dict, missing: str = "") -> str:
    """The URL of ``route`` with the world's objects, or with ``missing`` (a parameter name) pointing at nothing."""
    # The review page verifies a version again when the verifier changed, so a finding is looked up when asked.
    finding = world["version"].findings.order_by("pk").first()
    args = {**world["args"], "finding_id": finding.pk, "key": f"f{finding.pk}", **world["words"].get(route.name, {})}
    if missing:
        args[missing] = 999_999
    kwargs = {name: args[name] for name in re.findall(r"<(?:\w+:)?(\w+)>", route.pattern)}
    path = route.pattern
    for name, value in kwargs.items():
        path = re.sub(rf"<(?:\w+:)?{name}>", str(value), path)
    return "/" + path


class Route:
    def __init__(self, name: str, pattern: str):
        self.name, self.pattern = name, pattern
        self.scope = ("matter_id" if "<int:matter_id>" in pattern
                      else "job_id" if "<int:job_id>" in pattern else "")


def answer(client: Client, method: str, url: str, data: dict) -> tuple[int, list[str]]:
    """Status and messages of one request; a POST's writes are rolled back."""
    if method == "GET":
        response = client.get(url)
    else:
        with transaction.atomic():
            response = client.post(url, data)
            transaction.set_rollback(True)
    # Only the messages this request added: those of an earlier one may still wait in the session.
    return response.status_code, [str(m) for m in getattr(response.wsgi_request._messages, "_queued_messages", [])]


def refused(status: int, messages: list[str], act: str) -> bool:
    what = ACTS[act][1]
    return status == 403 or any(what in message for message in messages)


def _expect(person: str, user, route: Route, method: str, act: str | None, matter: Matter) -> str:
    """What the rule set says ``user`` must get: "login", "405", "wall" (as a missing matter), "through" or
    "refused"."""
    if user is None and PUBLIC not in ROUTES[route.name].values():
        return "login"
    if act is None:
        return "405"
    if act == PUBLIC:
        return "through"
    if act == ANYONE:
        return "through"
    if route.scope and not PEOPLE[person][2]:
        return "wall"
    if act == READ:
        return "through"
    allowed = may(user, act) if act in MATTERLESS_ACTS else may(user, act, matter)
    return "through" if allowed else "refused"


@pytest.mark.parametrize("person", [*PEOPLE, "nobody logged in"])
def test_every_url_answers_each_person_as_the_rule_set_says(person, world, matter, attorney, make_user):
    user = None
    if person in PEOPLE:
        group, superuser, member = PEOPLE[person]
        user = make_user("someone", group or "", is_superuser=superuser, is_staff=superuser)
        if member:
            matter.members.add(user)
    client, insider = Client(raise_request_exception=False), Client(raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    insider.force_login(attorney)
    wrong = []
    for name, pattern in sorted(routes().items()):
        route = Route("favicon" if pattern == "favicon.ico" else name, pattern)
        if route.name in ("logout", "login", "admin_password_change") and user is None:
            continue  # the login page and its neighbours are the way in
        for method in ("GET", "POST"):
            act = ROUTES[route.name].get(method)
            url, data = url_of(route, world), world["post"].get(route.name, {})
            asking = client
            if route.name == "logout":  # logging out would leave the rest of the walk logged out
                asking = Client(raise_request_exception=False)
                asking.force_login(user)
            status, messages = answer(asking, method, url, data)
            expected = _expect(person, user, route, method, act, matter)
            ok = status != 500
            if expected == "login":
                ok = ok and status == 302
            elif expected == "405":
                ok = ok and status == 405
            elif expected == "wall":
                missing, _ = answer(insider, method, url_of(route, world, missing=route.scope), data)
                ok = ok and status == missing == 404
            elif expected == "through":
                ok = ok and status not in (403, 404) and not (act in ACTS and refused(status, messages, act))
            else:
                ok = ok and refused(status, messages, act)
            if not ok:
                wrong.append(f"{method} {url} ({route.name}): {status} {messages[:1]}, expected {expected}")
    assert not wrong, f"{person}:\n" + "\n".join(wrong)
