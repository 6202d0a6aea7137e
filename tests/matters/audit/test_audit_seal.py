"""The keyed audit chain and its checkpoints outside the database: edits, deletions (last and middle) and a chain
recomputed after a rewrite all fail ``audit_verify``, which names what it found."""

import hashlib
import hmac
import io
import json
import os
import stat

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from matters.audit.schemes import detail_digest
from matters.audit.seal import checkpoint_path, key_path
from matters.audit.services import audit_record, audit_verify, entry_canonical
from matters.models import AuditEntry

# Real commits: a checkpoint is written when the entry's transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


def chain_of(matter, committed_entries: int, attorney) -> list[AuditEntry]:
    for n in range(committed_entries):
        audit_record(action=f"test.{n}", actor=attorney, matter=matter, detail={"n": n})
    return list(AuditEntry.objects.filter(chain=f"matter:{matter.pk}").order_by("seq"))


def sql(statement: str, params: list) -> None:
    with connection.cursor() as cursor:  # what someone with the database but not LawDesk would do
        cursor.execute(statement, params)


def test_key_and_checkpoints_live_outside_the_database_with_private_modes(matter, attorney):
    chain_of(matter, 2, attorney)
    assert stat.S_IMODE(os.stat(key_path()).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(checkpoint_path()).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(key_path().parent).st_mode) == 0o700
    lines = [json.loads(line) for line in checkpoint_path().read_text().splitlines()]
    assert [line["seq"] for line in lines if line["chain"] == f"matter:{matter.pk}"] == [1, 2, 3]


def test_edited_entry_fails(matter, attorney):
    entries = chain_of(matter, 3, attorney)
    sql("UPDATE matters_auditentry SET detail = %s WHERE id = %s", ['{"n": 99}', entries[2].pk])
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 3 and "keyed hash" in check.problem


def test_deleting_the_last_entries_fails(matter, attorney):
    entries = chain_of(matter, 4, attorney)
    sql("DELETE FROM matters_auditentry WHERE chain = %s AND seq >= %s", [entries[0].chain, 4])
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 4
    assert "entries 4 to 5" in check.problem and "truncated" in check.problem
    out = io.StringIO()
    with pytest.raises(CommandError, match="truncated"):
        call_command("audit_verify", "--matter", str(matter.pk), stdout=out)
    assert json.loads(out.getvalue())["ok"] is False


def test_deleting_a_middle_entry_fails(matter, attorney):
    entries = chain_of(matter, 4, attorney)
    sql("DELETE FROM matters_auditentry WHERE id = %s", [entries[2].pk])
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 4 and "sequence gap" in check.problem


def _recompute_from(matter, seq: int, digest, sealed_detail=None) -> None:
    """Rewrite entry ``seq`` and recompute every later hash with ``digest(entry) -> hex``; with the key,
    ``sealed_detail(salt, detail) -> hex`` seals the rewritten detail as well."""
    prev = AuditEntry.objects.get(chain=f"matter:{matter.pk}", seq=seq - 1).hash
    for entry in AuditEntry.objects.filter(chain=f"matter:{matter.pk}", seq__gte=seq).order_by("seq"):
        if entry.seq == seq:
            entry.detail = {"n": "rewritten"}
            if sealed_detail is not None:
                entry.detail_digest = sealed_detail(entry.detail_salt, entry.detail)
        entry.prev_hash = prev
        entry.hash = digest(entry)
        sql("UPDATE matters_auditentry SET detail = %s, detail_digest = %s, prev_hash = %s, hash = %s WHERE id = %s",
            [json.dumps(entry.detail), entry.detail_digest, entry.prev_hash, entry.hash, entry.pk])
        prev = entry.hash


def test_recomputed_chain_without_the_key_fails(matter, attorney):
    chain_of(matter, 4, attorney)

    def unkeyed(entry):  # the old, unkeyed scheme: SHA-256 of the same canonical JSON
        return hashlib.sha256(entry_canonical(entry)).hexdigest()

    _recompute_from(matter, 3, unkeyed)
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 3 and "keyed hash" in check.problem


def test_recomputed_chain_even_with_the_key_fails_on_the_checkpoints(matter, attorney):
    chain_of(matter, 4, attorney)
    key = bytes.fromhex(key_path().read_text())

    def keyed(entry):
        return hmac.new(key, entry_canonical(entry), hashlib.sha256).hexdigest()

    _recompute_from(matter, 3, keyed, detail_digest)
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 3 and "checkpoint" in check.problem


def test_rolled_back_entry_leaves_no_checkpoint(matter, attorney):
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        audit_record(action="test.rolled_back", actor=attorney, matter=matter)
        raise RuntimeError("the surrounding change failed")
    audit_record(action="test.after", actor=attorney, matter=matter)
    assert audit_verify(matter=matter).ok


def test_page_images_are_audited_once_per_user_exhibit_and_hour(client, matter, attorney, make_user, corpus,
                                                               ingest, time_machine):
    time_machine.move_to("2026-11-30 09:00:00Z", tick=True)
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    colleague = make_user("carol", "assistant")
    matter.members.add(colleague)

    def images(user) -> None:
        client.force_login(user)
        for number in range(1, exhibit.page_count + 1):
            for size in ("thumb", "full"):
                url = reverse("matters:page_image", args=[matter.pk, exhibit.pk, number, size])
                assert client.get(url).status_code == 200

    def logged() -> list[tuple[str, str]]:
        return list(AuditEntry.objects.filter(action="page.image").values_list("actor", "object_id"))

    images(attorney)
    images(attorney)
    assert logged() == [("alice", str(exhibit.pk))]
    images(colleague)
    assert logged() == [("alice", str(exhibit.pk)), ("carol", str(exhibit.pk))]
    time_machine.shift(3601)
    images(attorney)
    assert len(logged()) == 3
    assert audit_verify(matter=matter).ok
