"""The audit log's edges: the checkpoint file is a keyed chain of its own, so the checkpoints of deleted entries (the
last ones of a chain, or a whole chain) cannot be removed with them unseen; an entry's matter is in its hash; a
purge erases the detail of the matter's entries (its text) and the chain still verifies, and nothing else may
erase it."""

import json
import sqlite3
import threading

import pytest
from django.db import IntegrityError, connection

from matters.audit.seal import checkpoint_file_problem, checkpoint_path
from matters.audit.services import audit_record, audit_verify
from matters.drafts.services import draft_create, draft_rename
from matters.exhibits.services import exhibit_update
from matters.models import AuditEntry
from matters.privilege.services import redaction_add
from matters.retention.purge import matter_purge
from matters.retention.services import matter_hold, matter_hold_lift
from matters.services import matter_create
from pipeline.stages.control import job_start
from tests.factories import ExhibitFactory

# Real commits: a checkpoint is written when the entry's transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


def sql(statement: str, params: list) -> None:
    with connection.cursor() as cursor:  # what someone with the database but not LawDesk would do
        cursor.execute(statement, params)


def entries_of(matter, count: int, attorney) -> None:
    for n in range(count):
        audit_record(action=f"test.{n}", actor=attorney, matter=matter, detail={"n": n})


def drop_lines(keep) -> None:
    """Rewrite the checkpoint file without the lines ``keep(record)`` refuses, as someone who can edit it would."""
    path = checkpoint_path()
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if keep(json.loads(line))))


def test_deleting_a_chains_last_entries_with_their_checkpoints_fails(matter, attorney):
    entries_of(matter, 4, attorney)
    audit_record(action="login", actor=attorney)  # the office goes on: something is recorded after them
    chain = f"matter:{matter.pk}"
    sql("DELETE FROM matters_auditentry WHERE chain = %s AND seq >= %s", [chain, 4])
    drop_lines(lambda record: not (record["chain"] == chain and record["seq"] >= 4))
    check = audit_verify(matter=matter)
    assert not check.ok and "checkpoint lines were removed, inserted or changed" in check.problem
    assert not audit_verify(matter=None).ok  # the file is the system's record too


def test_deleting_a_whole_chain_with_its_checkpoints_fails(matter, attorney, make_user):
    other = matter_create(name="Other v. Party", created_by=attorney)
    entries_of(matter, 3, attorney)
    entries_of(other, 2, attorney)
    chain = f"matter:{matter.pk}"
    sql("DELETE FROM matters_auditentry WHERE chain = %s", [chain])
    drop_lines(lambda record: record["chain"] != chain)
    check = audit_verify(matter=matter)
    assert not check.ok and check.entries == 0 and "checkpoint" in check.problem
    assert not audit_verify(matter=other).ok


def test_a_line_added_by_hand_or_a_line_edited_fails(matter, attorney):
    entries_of(matter, 2, attorney)
    path = checkpoint_path()
    original = path.read_bytes()
    with path.open("a") as file:
        file.write(json.dumps({"chain": f"matter:{matter.pk}", "seq": 9, "hash": "0" * 64}) + "\n")
    assert "carries no mac" in checkpoint_file_problem()
    path.write_bytes(original.replace(b'"seq":2', b'"seq":7', 1))
    assert "does not follow the line before it" in checkpoint_file_problem()
    path.write_bytes(original)
    assert checkpoint_file_problem() == "" and audit_verify(matter=matter).ok


def test_a_torn_line_and_writers_at_once_keep_the_file_verifiable(matter, attorney):
    entries_of(matter, 1, attorney)
    with checkpoint_path().open("a") as file:
        file.write('{"chain": "matter:1", "se')  # a crash in the middle of a write
    from matters.audit.seal import checkpoint_append

    def write(n: int) -> None:
        for seq in range(10):
            checkpoint_append(chain=f"writer:{n}", seq=seq + 1, hash=f"{n:02d}{seq:062d}")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert checkpoint_file_problem() == ""
    assert len(checkpoint_path().read_text().splitlines()) == 2 + 1 + 60  # matter.create, test.0, torn, 60


def test_writers_at_once_take_turns_on_a_chain(matter, attorney, monkeypatch):
    """Eight request threads appending to one matter's chain at once (an office viewing pages): every entry lands,
    the numbers run without a gap or a fork, and no writer had to start again. Racing writers on PostgreSQL
    retried about three times an entry and some gave up."""
    collisions = []
    save = AuditEntry.save

    def counted_save(entry, *args, **kwargs):
        try:
            return save(entry, *args, **kwargs)
        except IntegrityError:
            collisions.append(entry.seq)
            raise

    monkeypatch.setattr(AuditEntry, "save", counted_save)
    failures = []

    def view_pages(n: int) -> None:
        try:
            for page in range(25):
                audit_record(action="exhibit.page_view", actor=attorney, matter=matter, detail={"n": n, "page": page})
        except Exception as error:  # a writer that gave up is what this test is about
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=view_pages, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and collisions == []
    seqs = list(AuditEntry.objects.filter(chain=f"matter:{matter.pk}").order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert AuditEntry.objects.filter(matter=matter, action="exhibit.page_view").count() == 200
    assert audit_verify(matter=matter).ok


def test_an_entry_moved_to_another_matter_breaks_both_chains(matter, attorney):
    other = matter_create(name="Other v. Party", created_by=attorney)
    entries_of(matter, 3, attorney)
    moved = AuditEntry.objects.get(chain=f"matter:{matter.pk}", seq=2)
    sql("UPDATE matters_auditentry SET matter_id = %s WHERE id = %s", [other.pk, moved.pk])
    source, target = audit_verify(matter=matter), audit_verify(matter=other)
    assert not source.ok and source.broken_seq == 2 and "matter was changed" in source.problem
    assert not target.ok and "was moved into this matter" in target.problem
    sql("UPDATE matters_auditentry SET matter_id = NULL WHERE id = %s", [moved.pk])
    assert not audit_verify(matter=matter).ok


def test_detail_erased_without_a_purge_fails(matter, attorney):
    entries_of(matter, 3, attorney)
    entry = AuditEntry.objects.get(chain=f"matter:{matter.pk}", seq=2)
    sql("UPDATE matters_auditentry SET detail = %s, detail_salt = '', detail_erased = %s WHERE id = %s",
        ["{}", True, entry.pk])
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 2 and "not by a purge" in check.problem


def test_a_detail_salt_that_is_not_hex_is_a_broken_chain_not_an_error(matter, attorney):
    entries_of(matter, 2, attorney)
    entry = AuditEntry.objects.get(chain=f"matter:{matter.pk}", seq=1)
    sql("UPDATE matters_auditentry SET detail_salt = %s WHERE id = %s", ["not-hex!", entry.pk])
    check = audit_verify(matter=matter)
    assert not check.ok and check.broken_seq == 1 and "salt" in check.problem


MARKERS = ("Zorbatek", "Quillfeather", "Vantablue", "Marrowglen", "Hexacorde", "Pellucidia")


def every_row_text() -> str:
    """Every value of every row of every table, as text."""
    texts = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            texts.extend(str(row) for row in cursor.fetchall())
    return "\n".join(texts)


def database_file_bytes(copy) -> bytes:
    """SQLite only: the test database's bytes as the online backup API copies them (free pages included)."""
    source, target = sqlite3.connect(connection.settings_dict["NAME"]), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    return copy.read_bytes()


def test_after_a_purge_no_text_of_the_matter_stays_in_its_chain_and_the_chain_verifies(attorney, data_dir,
                                                                                       tmp_path):
    matter = matter_create(name="Acme v. Roe", created_by=attorney)
    exhibit = ExhibitFactory(matter=matter, pages=["The Zorbatek merger closed on March 3, 2019."])
    exhibit_update(exhibit=exhibit, updated_by=attorney, title="Quillfeather memo to the board", label="1")
    redaction_add(page=exhibit.pages.get(), rect=(72, 72, 300, 90), reason="PII", user=attorney,
                  found_by="Vantablue account")
    draft = draft_create(matter=matter, title="Motion about Marrowglen", text="Draft text.", author_kind="person",
                         author=attorney)
    draft_rename(draft=draft.draft, title="Reply about Hexacorde", user=attorney)
    job_start(matter=matter, kind="summary", instructions="Summarise what Pellucidia knew.", user=attorney,
              enqueue=False)
    matter_hold(matter=matter, user=attorney, reason="Pellucidia preservation letter")
    matter_hold_lift(matter=matter, user=attorney, reason="Pellucidia settled")
    text = every_row_text()
    assert all(marker in text for marker in MARKERS)  # the test can see them at all
    if connection.vendor == "sqlite":
        assert b"Vantablue" in database_file_bytes(tmp_path / "before.sqlite3")

    report = matter_purge(matter=matter, user=attorney, confirm_name="Acme v. Roe")
    text = every_row_text()
    assert [marker for marker in MARKERS if marker in text] == []
    on_disk = [p for p in data_dir.rglob("*") if p.is_file() and any(m.encode() in p.read_bytes() for m in MARKERS)]
    assert on_disk == []
    if connection.vendor == "sqlite":  # nor in the free pages a backup copies
        raw = database_file_bytes(tmp_path / "copy.sqlite3")
        assert [marker for marker in MARKERS if marker.encode() in raw] == []
    check = audit_verify(matter=matter)
    assert check.ok and check.erased_entries == report.audit_details_erased >= 8
    entries = list(AuditEntry.objects.filter(chain=f"matter:{matter.pk}").order_by("seq"))
    purge, erasure = entries[-2:]
    assert purge.action == "matter.purge" and purge.detail["rows"]  # the purge's own record stays
    assert erasure.action == "audit.erase" and erasure.detail["entries"] == len(entries) - 2
    assert all(e.detail == {} and e.detail_erased for e in entries[:-2])
    assert [e.action for e in entries][:2] == ["matter.create", "exhibit.edit"]  # who did what, when, stays


@pytest.fixture
def purged(attorney):
    matter = matter_create(name="Acme v. Roe", created_by=attorney)
    entries_of(matter, 3, attorney)
    matter_purge(matter=matter, user=attorney, confirm_name="Acme v. Roe")
    assert audit_verify(matter=matter).ok
    return matter


@pytest.mark.parametrize("change", [
    "detail_erased = %s",  # an erased entry said not to be (its digest cannot be matched without the salt)
    "actor = 'mallory', detail_erased = %s",
])
def test_after_a_purge_flipping_an_entrys_erasure_breaks_the_chain(purged, change):
    entry = AuditEntry.objects.get(chain=f"matter:{purged.pk}", seq=2)
    sql(f"UPDATE matters_auditentry SET {change} WHERE id = %s", [False, entry.pk])
    check = audit_verify(matter=purged)
    assert not check.ok and "erase" in check.problem


def test_after_a_purge_an_entry_after_it_marked_erased_breaks_the_chain(purged, attorney):
    audit_record(action="test.after", actor=attorney, matter=purged, detail={"n": 9})
    entry = AuditEntry.objects.filter(chain=f"matter:{purged.pk}").order_by("-seq").first()
    sql("UPDATE matters_auditentry SET detail = %s, detail_salt = '', detail_erased = %s WHERE id = %s",
        ["{}", True, entry.pk])
    check = audit_verify(matter=purged)
    assert not check.ok and "after the erasure" in check.problem


def test_after_a_purge_editing_what_stays_of_an_older_scheme_entry_breaks_the_chain(attorney):
    """An entry hashed before the detail was sealed apart cannot be recomputed once its detail is gone: the
    erasure's seal holds what stays of it (its actor, action, time and object)."""
    matter = matter_create(name="Acme v. Roe", created_by=attorney)
    entries_of(matter, 2, attorney)
    first = AuditEntry.objects.get(chain=f"matter:{matter.pk}", seq=1)
    # As the keyed scheme wrote it (hmac-sha256 over the detail itself), which a v2 entry is not.
    from matters.audit.schemes import SCHEME_KEYED, entry_canonical
    from matters.audit.seal import seal
    first.scheme = SCHEME_KEYED
    sql("UPDATE matters_auditentry SET scheme = %s WHERE id = %s", [SCHEME_KEYED, first.pk])
    assert seal(entry_canonical(first)) != first.hash  # not recomputable: the test only needs it erased below
    matter_purge(matter=matter, user=attorney, confirm_name="Acme v. Roe")
    sql("UPDATE matters_auditentry SET actor = 'mallory' WHERE id = %s", [first.pk])
    check = audit_verify(matter=matter)
    assert not check.ok and "changed after the erasure" in check.problem


def test_after_a_purge_deleting_the_erasure_breaks_the_chain(purged):
    erasure = AuditEntry.objects.get(chain=f"matter:{purged.pk}", action="audit.erase")
    sql("DELETE FROM matters_auditentry WHERE id = %s", [erasure.pk])
    assert not audit_verify(matter=purged).ok
