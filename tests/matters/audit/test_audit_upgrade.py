"""Upgrading an installation whose audit log was hashed the old, unkeyed way: the migration seals each chain's
unkeyed part, ``audit_verify`` verifies it the old way and says how many entries it holds, and that part can be
neither edited, truncated nor extended afterwards."""

import hashlib
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from django.utils import timezone

from matters.audit.schemes import SCHEME_KEYED, SCHEME_SEALED, SCHEME_UNKEYED
from matters.audit.seal import checkpoint_append, checkpoint_path, key_path, seal
from matters.audit.services import GENESIS_HASH, audit_record, audit_verify, entry_canonical
from matters.models import AuditEntry

# Real migrations and real commits: the seal is written by the migration, checkpoints when transactions commit.
pytestmark = pytest.mark.django_db(transaction=True)

UPGRADE = ("matters", "0012_audit_entry_scheme_and_legacy_seal")


def sql(statement: str, params: list) -> None:
    with connection.cursor() as cursor:  # what someone with the database but not LawDesk would do
        cursor.execute(statement, params)


def old_audit_record(model, *, chain: str, matter_id, action: str, actor: str, detail: dict) -> None:
    """Append an entry exactly as the audit log did before it was keyed: SHA-256 of the canonical JSON."""
    head = model.objects.filter(chain=chain).order_by("-seq").first()
    entry = model(chain=chain, seq=(head.seq + 1) if head else 1, matter_id=matter_id, at=timezone.now(),
                  actor=actor, action=action, object_type="", object_id="", file_sha256="",
                  detail=json.loads(json.dumps(detail)), prev_hash=head.hash if head else GENESIS_HASH)
    entry.hash = hashlib.sha256(entry_canonical(entry)).hexdigest()
    entry.save()


def upgrade(populate, *, keep_key: bool = False) -> None:
    """Go back to the schema before the upgrade, let ``populate(AuditEntry)`` write as the old code did, and
    migrate forward again, as ``manage.py migrate`` does on an upgraded installation."""
    executor = MigrationExecutor(connection)
    before = [dep for dep in executor.loader.graph.nodes[UPGRADE].dependencies if dep[0] == "matters"]
    try:
        executor.migrate(before)
        sql("DELETE FROM matters_auditentry", [])
        checkpoint_path().unlink(missing_ok=True)
        if not keep_key:  # an installation from before the key had no key
            key_path().unlink(missing_ok=True)
        populate(executor.loader.project_state(before).apps.get_model("matters", "AuditEntry"))
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def legacy_matter(matter):
    """A matter whose chain holds three entries and the system chain two, all hashed the old way, upgraded."""

    def populate(model) -> None:
        for n in range(3):
            old_audit_record(model, chain=f"matter:{matter.pk}", matter_id=matter.pk, action=f"old.{n}",
                             actor="alice", detail={"n": n, "note": "café"})
        for n in range(2):
            old_audit_record(model, chain="system", matter_id=None, action="login", actor="alice", detail={"n": n})

    upgrade(populate)
    return matter


def test_entries_keyed_before_the_scheme_column_stay_keyed(matter):
    """An installation that ran the keyed log before the scheme column existed: nothing there is unkeyed."""

    def populate(model) -> None:
        prev = GENESIS_HASH
        for n in range(1, 3):
            entry = model(chain=f"matter:{matter.pk}", seq=n, matter_id=matter.pk, at=timezone.now(), actor="alice",
                          action="keyed", object_type="", object_id="", file_sha256="", detail={}, prev_hash=prev)
            entry.hash = seal(entry_canonical(entry))
            entry.save()
            checkpoint_append(chain=entry.chain, seq=entry.seq, hash=entry.hash)
            prev = entry.hash

    upgrade(populate, keep_key=True)
    assert [entry.scheme for entry in chain(matter)] == [SCHEME_KEYED] * 2
    check = audit_verify(matter=matter)
    assert check.ok and check.entries == 2 and check.legacy_entries == 0


def chain(matter) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(chain=f"matter:{matter.pk}").order_by("seq"))


def verify_command(matter) -> dict:
    """Run ``manage.py audit_verify --matter`` and return its JSON line (a broken chain also exits 1)."""
    out = io.StringIO()
    try:
        call_command("audit_verify", "--matter", str(matter.pk), stdout=out)
    except CommandError:
        pass
    return json.loads(out.getvalue())


def test_upgraded_legacy_chain_verifies_and_says_how_many(client, legacy_matter, attorney):
    matter = legacy_matter
    assert [entry.scheme for entry in chain(matter)] == [SCHEME_UNKEYED] * 3
    check = audit_verify(matter=matter)
    assert check.ok and check.entries == 3 and check.legacy_entries == 3
    report = verify_command(matter)
    assert report["ok"] is True and report["legacy_entries"] == 3
    assert report["note"] == "3 entries before sealing, verified unkeyed"
    system = audit_verify(matter=None)
    assert system.ok and system.legacy_entries == 2

    # The seal is outside the database: each chain's last unkeyed entry, marked as such.
    lines = [json.loads(line) for line in checkpoint_path().read_text().splitlines()]
    heads = {(line["chain"], line["seq"]) for line in lines if line.get("legacy_head") is True}
    assert heads == {(f"matter:{matter.pk}", 3), ("system", 2)}

    # The first keyed entry continues the chain from the last unkeyed one.
    audit_record(action="matter.after_upgrade", actor=attorney, matter=matter)
    entries = chain(matter)
    assert entries[3].scheme == SCHEME_SEALED and entries[3].prev_hash == entries[2].hash
    check = audit_verify(matter=matter)
    assert check.ok and check.entries == 4 and check.legacy_entries == 3

    client.force_login(attorney)
    page = client.get(reverse("matters:audit", args=[matter.pk])).content.decode()
    assert "3 entries before sealing, verified unkeyed" in page


def test_a_chain_hashed_the_keyed_way_has_no_legacy_entries(matter, attorney):
    audit_record(action="test.keyed", actor=attorney, matter=matter)
    check = audit_verify(matter=matter)
    assert check.ok and check.legacy_entries == 0 and all(e.scheme == SCHEME_SEALED for e in chain(matter))
    assert verify_command(matter)["note"] == ""


def test_editing_a_legacy_entry_fails(legacy_matter):
    entries = chain(legacy_matter)
    sql("UPDATE matters_auditentry SET detail = %s WHERE id = %s", ['{"n": 99}', entries[1].pk])
    check = audit_verify(matter=legacy_matter)
    assert not check.ok and check.broken_seq == 2 and "unkeyed hash (edited)" in check.problem
    assert verify_command(legacy_matter)["ok"] is False


def test_rewriting_and_recomputing_the_legacy_part_fails_on_the_seal(legacy_matter):
    # Unkeyed hashes need no key, so anyone can recompute them; the head checkpointed at upgrade cannot be.
    prev = chain(legacy_matter)[0].hash
    for entry in chain(legacy_matter)[1:]:
        entry.detail = {"n": "rewritten"} if entry.seq == 2 else entry.detail
        entry.prev_hash = prev
        entry.hash = hashlib.sha256(entry_canonical(entry)).hexdigest()
        sql("UPDATE matters_auditentry SET detail = %s, prev_hash = %s, hash = %s WHERE id = %s",
            [json.dumps(entry.detail), entry.prev_hash, entry.hash, entry.pk])
        prev = entry.hash
    check = audit_verify(matter=legacy_matter)
    assert not check.ok and check.broken_seq == 3 and "checkpoint" in check.problem


def test_deleting_the_last_legacy_entry_fails(legacy_matter):
    sql("DELETE FROM matters_auditentry WHERE id = %s", [chain(legacy_matter)[-1].pk])
    check = audit_verify(matter=legacy_matter)
    assert not check.ok and check.broken_seq == 3 and "truncated" in check.problem


def test_deleting_the_last_legacy_entry_under_keyed_ones_fails(legacy_matter, attorney):
    audit_record(action="matter.after_upgrade", actor=attorney, matter=legacy_matter)
    sql("DELETE FROM matters_auditentry WHERE id = %s", [chain(legacy_matter)[2].pk])
    check = audit_verify(matter=legacy_matter)
    assert not check.ok and check.broken_seq == 4 and "sequence gap" in check.problem


def _append_legacy_row(matter_id, chain_name: str) -> None:
    """Append a row claiming the unkeyed scheme, hashed and linked correctly: all a forger can do without the key."""
    old_audit_record(AuditEntry, chain=chain_name, matter_id=matter_id, action="forged", actor="mallory",
                     detail={})
    forged = AuditEntry.objects.filter(chain=chain_name).order_by("-seq").first()
    sql("UPDATE matters_auditentry SET scheme = %s WHERE id = %s", [SCHEME_UNKEYED, forged.pk])


def test_legacy_row_after_keyed_ones_fails(legacy_matter, attorney):
    audit_record(action="matter.after_upgrade", actor=attorney, matter=legacy_matter)
    _append_legacy_row(legacy_matter.pk, f"matter:{legacy_matter.pk}")
    assert [e.scheme for e in chain(legacy_matter)][-2:] == [SCHEME_SEALED, SCHEME_UNKEYED]
    check = audit_verify(matter=legacy_matter)
    assert not check.ok and check.broken_seq == 5
    assert "after the first keyed entry 4" in check.problem and "cannot be added after sealing" in check.problem


def test_legacy_row_after_the_sealed_head_fails(legacy_matter):
    _append_legacy_row(legacy_matter.pk, f"matter:{legacy_matter.pk}")
    check = audit_verify(matter=legacy_matter)
    assert not check.ok and check.broken_seq == 4
    assert "after the last legacy entry 3 sealed at upgrade" in check.problem


def test_legacy_rows_in_a_chain_created_after_sealing_fail(legacy_matter, attorney):
    from matters.services import matter_create

    later = matter_create(name="Later v. Upgrade", created_by=attorney)
    sql("DELETE FROM matters_auditentry WHERE chain = %s", [f"matter:{later.pk}"])  # a forged chain from scratch
    _append_legacy_row(later.pk, f"matter:{later.pk}")
    check = audit_verify(matter=later)
    assert not check.ok and check.broken_seq == 1 and "records no legacy entries" in check.problem
