"""One gate: who may do what is decided in matters/permissions.py and nowhere else."""

import re
from pathlib import Path

import pytest

from matters import permissions
from matters.permissions import ACTS, may, require

ROOT = Path(__file__).resolve().parents[2]
# The rule set, the roles it names, and the Django admin (which keeps its own model permissions).
RULE_SET = {"matters/permissions.py", "matters/roles.py"}
DECIDING = re.compile(r"has_perm\(|\bperms\.|groups__name|groups\.filter\(name|[\"'](attorney|assistant|operator)[\"']"
                      # a membership checked by hand: the rule set's is_member checks it with the role
                      r"|members\.(filter|get)\(\s*(pk|id|username)|members\.contains\(|\bin\s+\S+\.members\.all\(")
# "assistant" is also a message role of the OpenAI chat API the model client speaks, not a LawDesk role.
CHAT_ROLES = re.compile(r"Message\(\s*[\"']assistant[\"']|role[\"']?\s*[:=]=?\s*[\"']assistant[\"']|"
                        r"[\"']role[\"']\s*:\s*[\"']assistant[\"']")

# The first account's user name defaults to the word "attorney": a name, not a role.
USER_NAMES = re.compile(r"LAWDESK_ADMIN_USER")


def _sources():
    for folder in ("matters", "pipeline", "lawdesk", "templates"):
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT).as_posix()
            if path.suffix not in (".py", ".html") or "/migrations/" in relative or relative in RULE_SET:
                continue
            if path.name.startswith("admin") and path.suffix == ".py":
                continue
            yield relative, path.read_text(encoding="utf-8")


def test_no_permission_is_decided_outside_the_rule_set():
    found = []
    for relative, text in _sources():
        for number, line in enumerate(text.splitlines(), 1):
            if "# " in line and line.lstrip().startswith("#"):
                continue
            if DECIDING.search(CHAT_ROLES.sub("", line)) and not USER_NAMES.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "decide permissions through matters.permissions (may / require):\n" + "\n".join(found)


def test_the_check_itself_finds_a_decision_made_in_a_view():
    assert DECIDING.search('    if not request.user.has_perm("matters.upload_exhibit"):')
    assert DECIDING.search("{% if perms.matters.serve_production %}")
    assert DECIDING.search('user.groups.filter(name="attorney").exists()')
    assert not DECIDING.search(CHAT_ROLES.sub("", 'Message("assistant", generation.text)'))


def test_the_check_finds_a_membership_checked_by_hand():
    assert DECIDING.search("    if not version.draft.matter.members.filter(pk=user.pk).exists():")
    assert DECIDING.search("if matter.members.contains(request.user):")
    assert DECIDING.search("if request.user in matter.members.all():")
    assert DECIDING.search("matter.members.get(username=name)")
    # Listing the members for the matter page decides nothing.
    assert not DECIDING.search('matter.members.filter(is_active=True).order_by("username")')


def test_every_act_of_the_rule_set_is_a_django_rules_rule_and_permission():
    import rules

    for act in ACTS:
        assert rules.rule_exists(act) and rules.perm_exists(f"matters.{act}"), act


@pytest.mark.django_db
def test_a_superuser_who_is_not_a_member_may_not_act_though_has_perm_would_say_yes(make_user, matter):
    admin = make_user("root", None, is_superuser=True, is_staff=True)
    assert admin.has_perm("matters.approve_draft", matter)  # Django's own shortcut for superusers
    assert not may(admin, "approve_draft", matter)
    with pytest.raises(permissions.PermissionDenied, match="Only a member of the matter"):
        require(admin, "approve_draft", matter)
    matter.members.add(admin)
    assert may(admin, "approve_draft", matter)


@pytest.mark.django_db
def test_an_inactive_member_may_do_nothing(make_user, matter):
    attorney = make_user("bob", "attorney")
    matter.members.add(attorney)
    assert may(attorney, "edit_drafts", matter)
    attorney.is_active = False
    attorney.save()
    assert not any(may(attorney, act, matter) for act in ACTS)


def test_an_act_not_in_the_rule_set_is_an_error_not_a_refusal():
    with pytest.raises(KeyError):
        may(None, "edit_drafs")


def test_the_acts_said_to_be_an_attorneys_are_exactly_those_no_assistant_may_do():
    from types import SimpleNamespace

    class Members:
        def filter(self, **_):
            return SimpleNamespace(exists=lambda: True)

    matter = SimpleNamespace(pk=1, members=Members())
    assistant = SimpleNamespace(is_authenticated=True, is_active=True, is_superuser=False, is_staff=False,
                                groups=SimpleNamespace(values_list=lambda *a, **k: ["assistant"]), pk=2)
    refused = {act for act in ACTS if act not in permissions.MATTERLESS_ACTS and not may(assistant, act, matter)}
    assert refused == permissions.ATTORNEY_ACTS
