"""The permission matrix over the management commands that change the case file, for each role as a member of the
matter and as a non-member, and a superuser who is not a member.

A command either names the person acting (``--by USERNAME``) and is then held to the rule set exactly as a page is
(:func:`matters.permissions.may` for the act it does), or takes no such option and acts as the command line, run
by whoever administers the machine (``user=None``, matters/permissions.py). :data:`COMMANDS` sorts every command of
``matters`` and ``pipeline``; a new one fails :func:`test_every_command_is_in_the_matrix` until it is sorted.
"""

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError

from matters.models import AuditEntry, Matter
from matters.permissions import ACTS, ROLES, may
from matters.retention.services import matter_hold

pytestmark = pytest.mark.django_db

# command: the act of the rule set it does as ``--by``, or COMMAND_LINE (acts as the machine's administrator),
# or READS (changes nothing of the case file).
COMMAND_LINE, READS = "the command line", "reads"
COMMANDS = {
    "legal_hold": "hold_matter",
    "purge_matter": "hold_matter",
    "matter_create": COMMAND_LINE,
    "ingest": COMMAND_LINE,
    "import_production": COMMAND_LINE,
    "bates_produce": COMMAND_LINE,
    "run_job": COMMAND_LINE,
    "digest_exhibits": COMMAND_LINE,
    "verify_draft": READS,
    "exhibit_text": READS,
    "audit_verify": READS,
    "evidence_packet": READS,
    "topology_discover": COMMAND_LINE,
    "topology_load_example": COMMAND_LINE,
    "topology_probe": COMMAND_LINE,
    "topology_use_embedded": COMMAND_LINE,
}

PEOPLE = {**{f"{role}, member": (role, False, True) for role in ROLES},
          **{f"{role}, not a member": (role, False, False) for role in ROLES},
          "superuser, not a member": ("", True, False)}


def _options(name: str) -> set[str]:
    parser = load_command_class(get_commands()[name], name).create_parser("manage.py", name)
    return {option for action in parser._actions for option in action.option_strings}


def test_every_command_is_in_the_matrix():
    ours = {name for name, app in get_commands().items() if app in ("matters", "pipeline")}
    assert ours == set(COMMANDS), "sort the new command into COMMANDS"
    for name, act in COMMANDS.items():
        # Acting as someone is checked against the rule set; the others cannot claim a person at all.
        assert ("--by" in _options(name)) == (act in ACTS), name


def _person(make_user, matter, person):
    group, superuser, member = PEOPLE[person]
    user = make_user("someone", group, is_superuser=superuser, is_staff=superuser)
    if member:
        matter.members.add(user)
    return user


def _run(name: str, **options) -> str:
    """Run ``name``; return "done", or the CommandError's message for a refusal."""
    try:
        call_command(name, **options)
    except CommandError as error:
        return str(error)
    return "done"


@pytest.mark.parametrize("person", list(PEOPLE))
@pytest.mark.parametrize("lift", [False, True])
def test_legal_hold_follows_the_rule_set(make_user, attorney, matter, person, lift):
    user = _person(make_user, matter, person)
    if lift:
        matter_hold(matter=matter, user=attorney, reason="Preservation letter of 3 March.")
    allowed = may(user, COMMANDS["legal_hold"], matter)
    outcome = _run("legal_hold", matter=matter.pk, by=user.username, reason="Order of 9 March.", lift=lift)
    matter.refresh_from_db()
    if allowed:
        assert outcome == "done" and matter.legal_hold is not lift
        entry = AuditEntry.objects.filter(matter=matter).order_by("pk").last()
        assert entry.actor == user.username and entry.detail["reason"] == "Order of 9 March."
    else:
        assert outcome.startswith(("Only a member of the matter may", "Only an attorney may")), outcome
        assert ACTS["hold_matter"][1] in outcome
        assert matter.legal_hold is lift  # unchanged


@pytest.mark.parametrize("person", list(PEOPLE))
def test_purge_follows_the_rule_set(make_user, matter, person):
    user = _person(make_user, matter, person)
    allowed = may(user, COMMANDS["purge_matter"], matter)
    outcome = _run("purge_matter", matter=matter.pk, by=user.username, confirm=matter.name)
    purged = Matter.objects.get(pk=matter.pk).purged_at is not None
    if allowed:
        assert outcome == "done" and purged
    else:
        assert ACTS[COMMANDS["purge_matter"]][1] in outcome and not purged, outcome
