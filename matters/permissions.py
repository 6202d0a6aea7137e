"""Who may do what: the one rule set of LawDesk (docs/glossary.md, "People and permissions").

Every act is a django-rules predicate over ``(user, matter)``. Services call :func:`require`, views and
templates ask :func:`may` (``{% load gate %}{% may "edit_drafts" matter as can_edit %}``), the topology admin
and page ask :func:`may` with no matter; nothing else decides. The rules are registered twice with django-rules:
as rules (``rules.test_rule(act, user, matter)``) and as object permissions named ``matters.<act>``
(``user.has_perm("matters.edit_drafts", matter)`` through ``rules.permissions.ObjectPermissionBackend``).

=====================  =========  =========  ========
act                    attorney   assistant  operator
=====================  =========  =========  ========
create_matters         yes        yes        no
manage_members         yes        no         no
change_exhibits        yes        yes        no
start_jobs             yes        yes        no
save_deadlines         yes        yes        no
request_digests        yes        yes        no
start_productions      yes        yes        no
receive_productions    yes        yes        no
edit_drafts            yes        yes        no
export_drafts          yes        yes        yes
approve_draft          yes        no         no
decide_evidence        yes        no         no
set_cites_as           yes        no         no
serve_production       yes        no         no
remove_redaction       yes        no         no
hold_matter            yes        no         no
see_topology           no         no         yes
manage_topology        no         no         yes
=====================  =========  =========  ========

Every act on a matter also needs membership of that matter, checked with the role every time (superusers
included: an administrator who is not a member of a matter may not act in it). ``create_matters`` and
the topology acts concern no matter. A superuser counts as holding every role; staff may also see the topology
page (not change it in the admin without the operator's role or the admin's own model permissions).
``user=None`` is the command line, run by whoever administers the machine, and is not checked here.
"""

from contextvars import ContextVar

import rules
from django.core.exceptions import PermissionDenied

ATTORNEY, ASSISTANT, OPERATOR = "attorney", "assistant", "operator"
ROLES = (ATTORNEY, ASSISTANT, OPERATOR)


@rules.predicate
def is_active(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


# Memberships read during one request (RememberMemberships): a page asks for each control it shows, and each
# act's rule asks for the membership again, four or five queries a page view for one answer.
_memberships: ContextVar[dict | None] = ContextVar("lawdesk_memberships", default=None)


@rules.predicate
def is_member(user, matter) -> bool:
    """The user is one of the matter's members (an unsaved or missing matter has none). Read once per request
    for each user and matter (:class:`RememberMemberships`); outside a request, every time."""
    if matter is None or getattr(matter, "pk", None) is None:
        return False
    known, key = _memberships.get(), (user.pk, matter.pk)
    if known is not None and key in known:
        return known[key]
    answer = matter.members.filter(pk=user.pk).exists()
    if known is not None:
        known[key] = answer
    return answer


def membership_read(user, matter) -> None:
    """Note, for the rest of the request, that ``user`` is a member of ``matter``: the caller has just read the
    matter with that membership as the query's condition (:func:`matters.selectors.matter_for_user`)."""
    known = _memberships.get()
    if known is not None and getattr(matter, "pk", None) is not None:
        known[(user.pk, matter.pk)] = True


def forget_memberships() -> None:
    """Forget the memberships this request has read: a member was added or removed."""
    known = _memberships.get()
    if known is not None:
        known.clear()


class RememberMemberships:
    """Middleware: each request reads a user's membership of a matter once (:func:`is_member`), whatever the
    number of controls its page gates on it. A membership changed by the request itself is read again
    (:func:`forget_memberships`, called by the services that change them)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _memberships.set({})
        try:
            return self.get_response(request)
        finally:
            _memberships.reset(token)


def _role(name: str) -> rules.Predicate:
    return rules.is_superuser | rules.is_group_member(name)


is_attorney = _role(ATTORNEY)
is_assistant = _role(ASSISTANT)
is_operator = _role(OPERATOR)

_writer = is_attorney | is_assistant

# act: (who, what the refusal says the user may not do)
ACTS: dict[str, tuple[rules.Predicate, str]] = {
    "create_matters": (is_active & _writer, "open matters"),
    "manage_members": (is_active & is_member & is_attorney, "add or remove the matter's members"),
    "change_exhibits": (is_active & is_member & _writer, "upload or change exhibits"),
    "start_jobs": (is_active & is_member & _writer, "start, cancel or retry jobs"),
    # Calendaring is docketing work an assistant does as often as an attorney; the counting is shown step by step.
    "save_deadlines": (is_active & is_member & _writer, "save or delete deadlines"),
    # A digest is model work on the matter's evidence, as a job is.
    "request_digests": (is_active & is_member & _writer, "ask for digests"),
    "start_productions": (is_active & is_member & _writer, "start productions"),
    "receive_productions": (is_active & is_member & _writer, "receive productions"),
    "edit_drafts": (is_active & is_member & _writer, "edit drafts"),
    # Every member reads the drafts; an export is an approved version as a file, recorded in the audit log.
    "export_drafts": (is_active & is_member, "export its drafts"),
    "approve_draft": (is_active & is_member & is_attorney, "approve drafts, waive or confirm findings"),
    # Counting a marked file as evidence after all, or a flagged page as safe: what the models are given.
    "decide_evidence": (is_active & is_member & is_attorney,
                        "override a generated marking or a prompt-injection flag"),
    "set_cites_as": (is_active & is_member & is_attorney, "set how an exhibit is cited"),
    # Withholding a document and confirming an improper redaction are part of serving: what leaves the office.
    "serve_production": (is_active & is_member & is_attorney, "serve productions"),
    # A removed box lets its words into the next production: the same decision as withholding a document.
    "remove_redaction": (is_active & is_member & is_attorney,
                         "remove a redaction box (its words would reach the next production)"),
    "hold_matter": (is_active & is_member & is_attorney,
                    "put the matter on legal hold, lift the hold or purge it"),
    "see_topology": (is_active & (rules.is_staff | is_operator), "see the topology (staff and operators)"),
    "manage_topology": (is_active & is_operator, "administer hosts, GPUs, boards and model servers"),
}
MATTERLESS_ACTS = frozenset({"create_matters", "see_topology", "manage_topology"})
# Acts only an attorney of the matter may do: the refusal says so.
ATTORNEY_ACTS = frozenset({"manage_members", "approve_draft", "decide_evidence", "set_cites_as", "serve_production",
                           "remove_redaction", "hold_matter"})

for _act, (_who, _what) in ACTS.items():
    rules.add_rule(_act, _who)
    rules.add_perm(f"matters.{_act}", _who)


def may(user, act: str, matter=None) -> bool:
    """Whether ``user`` may do ``act`` (a key of :data:`ACTS`) in ``matter`` (None for the acts that concern no
    matter). Unlike ``user.has_perm``, a superuser is not let through without the membership. KeyError for an act
    not in the rule set."""
    ACTS[act]
    return rules.test_rule(act, user, matter)


def require(user, act: str, matter=None) -> None:
    """Raise PermissionDenied unless ``user`` may do ``act`` in ``matter`` (:func:`may`), saying whether the
    membership or the role is missing; ``user=None`` (the command line) passes. KeyError for an act not in the
    rule set."""
    what = ACTS[act][1]
    if user is None or may(user, act, matter):
        return
    if act not in MATTERLESS_ACTS and not (is_active(user) and is_member(user, matter)):
        raise PermissionDenied(f"Only a member of the matter may {what}.")
    if act in ATTORNEY_ACTS:
        raise PermissionDenied(f"Only an attorney may {what}.")
    raise PermissionDenied(f"You may not {what} in this matter." if act not in MATTERLESS_ACTS
                           else f"You may not {what}.")
