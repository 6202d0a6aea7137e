"""The audit log: append-only entries in per-matter hash chains, checked by ``manage.py audit_verify``."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from matters.audit.services import GENESIS_HASH, audit_record, audit_verify
from matters.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_entries_chain_by_hash(matter, attorney):
    first = matter.audit_entries.order_by("seq").first()  # matter.create
    second = audit_record(action="test.one", actor=attorney, matter=matter, obj=matter, file_sha256="ab" * 32)
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash and second.seq == first.seq + 1
    check = audit_verify(matter=matter)
    assert check.ok and check.entries == 2 and check.head_hash == second.hash


def test_entries_cannot_be_changed_or_deleted_through_the_orm(matter):
    entry = matter.audit_entries.first()
    entry.action = "something else"
    with pytest.raises(ValueError, match="append-only"):
        entry.save()
    with pytest.raises(ValueError, match="append-only"):
        entry.delete()


def test_rewritten_entry_is_detected_by_the_command(matter, attorney):
    audit_record(action="exhibit.upload", actor=attorney, matter=matter, detail={"original_name": "a.pdf"})
    audit_record(action="exhibit.status", matter=matter, detail={"to": "ready"})
    out = io.StringIO()
    call_command("audit_verify", "--matter", str(matter.pk), stdout=out)
    assert json.loads(out.getvalue())["ok"] is True

    target = matter.audit_entries.get(seq=2)
    with connection.cursor() as cursor:  # what someone editing the database directly would do
        cursor.execute(
            "UPDATE matters_auditentry SET detail = %s WHERE id = %s", ['{"original_name": "b.pdf"}', target.pk]
        )
    out = io.StringIO()
    with pytest.raises(CommandError, match="broken at entry 2"):
        call_command("audit_verify", "--matter", str(matter.pk), stdout=out)
    report = json.loads(out.getvalue())
    assert report["ok"] is False and report["broken_seq"] == 2


def test_deleted_entry_is_detected(matter, attorney):
    for n in range(3):
        audit_record(action=f"test.{n}", actor=attorney, matter=matter)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM matters_auditentry WHERE chain = %s AND seq = 2", [f"matter:{matter.pk}"])
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 3 and "sequence gap" in check.problem


def test_chains_of_two_matters_are_independent(matter, attorney):
    from matters.services import matter_create

    other = matter_create(name="Other", created_by=attorney)
    audit_record(action="x", matter=other)
    assert matter.audit_entries.count() == 1 and other.audit_entries.count() == 2
    assert audit_verify(matter=matter).ok and audit_verify(matter=other).ok


def test_logins_and_failed_logins_are_audited(client, attorney):
    client.post(reverse("login"), {"username": "alice", "password": "wrong password"})
    client.post(reverse("login"), {"username": "alice", "password": "correct-horse-battery"})
    actions = list(AuditEntry.objects.filter(chain="system").order_by("seq").values_list("action", "actor"))
    assert actions == [("login_failed", "system"), ("login", "alice")]
    failed = AuditEntry.objects.get(action="login_failed")
    assert failed.detail["username"] == "alice"
    assert "wrong password" not in json.dumps(failed.detail)
    assert audit_verify(matter=None).ok
