"""Purge under pressure: a hold placed while it runs, a worker still at work, a careless confirmation, an
original shared across an ethical wall, every upload of a production received, and the matter's text in the
database file after it is gone."""

import hashlib
import sqlite3
from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_verify
from matters.exhibits.services import exhibit_create
from matters.incoming.services import incoming_receive
from matters.models import AuditEntry, Exhibit, Matter, Page, Production
from matters.retention import purge
from matters.retention.purge import matter_purge
from matters.retention.services import MatterOnHold, matter_hold
from matters.services import matter_create
from pipeline.job_models import StageRun
from tests.support.retention import row_counts

pytestmark = pytest.mark.django_db


def test_a_hold_placed_while_the_purge_reads_the_files_stops_it(furnish, attorney, monkeypatch):
    acme = furnish("Acme v. Roe")
    reading = purge._hash_matter_files

    def hold_meanwhile(matter):
        hashed = reading(matter)
        matter_hold(matter=matter, user=attorney, reason="Preservation letter arrived during the purge")
        return hashed

    monkeypatch.setattr(purge, "_hash_matter_files", hold_meanwhile)
    before = row_counts()
    with pytest.raises(MatterOnHold, match="Acme v. Roe is on legal hold"):
        matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")
    after = row_counts()
    assert after.pop("matters.auditentry") == before.pop("matters.auditentry") + 1  # the hold's own entry
    assert after == before and storage.production_dir(acme.production.pk).is_dir()


def _lease(model, **filters):
    model.objects.filter(**filters).update(lease_owner="worker-1", lease_expires_at=timezone.now() + timedelta(
        seconds=60))


WORK = {
    "exhibit being processed": lambda acme: _lease(Exhibit, pk=acme.exhibits[1].pk),
    "production being stamped": lambda acme: _lease(Production, pk=acme.production.pk),
    "stage of a job running": lambda acme: _lease(StageRun, job=acme.job),
}


@pytest.mark.parametrize("work", WORK, ids=list(WORK))
def test_a_purge_waits_for_a_worker_at_work_in_the_matter(work, furnish, attorney):
    acme = furnish("Acme v. Roe")
    WORK[work](acme)
    before = row_counts()
    with pytest.raises(ValidationError, match="A worker is working on .* of Acme v. Roe"):
        matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")
    assert row_counts() == before
    for model in (Exhibit, Production, StageRun):  # the worker died: its lease runs out, and the purge goes on
        model.objects.update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe").rows["matters.exhibit"] == 2


@pytest.mark.parametrize("typed", ["acme v. roe", "ACME V. ROE", "Acme  v. Roe", "Acme v. Roe.", "Acme v.\u00a0Roe",
                                   "Acme", ""])
def test_the_name_must_be_typed_as_it_reads(typed, attorney):
    matter = matter_create(name="Acme v. Roe", created_by=attorney)
    with pytest.raises(ValidationError, match="Type the matter's name exactly as it reads"):
        matter_purge(matter=matter, user=attorney, confirm_name=typed)
    assert Matter.objects.get(pk=matter.pk).purged_at is None
    assert matter_purge(matter=matter, user=attorney, confirm_name="\tAcme v. Roe \n").rows["matters.matter_members"]


def test_a_blank_confirmation_never_purges(attorney):
    matter = matter_create(name="Acme v. Roe", created_by=attorney)
    Matter.objects.filter(pk=matter.pk).update(name="   ")  # no form allows it; an import or a script might
    matter.refresh_from_db()
    for typed in ("", "   ", None):
        with pytest.raises(ValidationError, match="Type the matter's name exactly"):
            matter_purge(matter=matter, user=attorney, confirm_name=typed)
    assert Matter.objects.get(pk=matter.pk).purged_at is None


def test_the_matters_record_of_its_purge_says_nothing_of_what_matters_behind_another_wall_hold(
        furnish, attorney, make_user, corpus, django_capture_on_commit_callbacks):
    acme = furnish("Acme v. Roe")
    screened = make_user("carol", "attorney")  # the other team; alice is not a member of its matter
    baker = matter_create(name="Baker v. Cole", created_by=screened)
    with open(corpus("court/ca7_3.pdf"), "rb") as stream:
        shared = exhibit_create(matter=baker, stream=stream, original_name="order.pdf", origin="court",
                                uploaded_by=screened, enqueue=False)
    assert shared.sha256 == acme.exhibits[0].sha256 and not baker.members.filter(pk=attorney.pk).exists()

    with django_capture_on_commit_callbacks(execute=True):
        report = matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")
    entry = AuditEntry.objects.filter(matter=acme.matter, action="matter.purge").get()
    assert set(entry.detail) == {"rows", "files", "bytes", "files_sha256", "originals"}
    assert entry.detail["originals"] == sorted(e.sha256 for e in acme.exhibits)
    held = {f"originals/{e.sha256[:2]}/{e.sha256}": e.sha256 for e in acme.exhibits}
    assert held.items() <= report.files.items()  # the kept original counts as the removed one does
    assert shared.sha256 not in str({k: v for k, v in entry.detail.items() if k != "originals"})

    system = AuditEntry.objects.filter(chain="system", action="original.remove").get()
    assert system.detail == {"matter": acme.matter.pk, "originals_removed": [acme.exhibits[1].sha256],
                             "originals_kept_shared": [shared.sha256]}
    assert storage.blob_path(shared.sha256).is_file() and not storage.blob_path(acme.exhibits[1].sha256).exists()
    assert audit_verify(matter=acme.matter).ok and audit_verify(matter=None).ok


def test_every_upload_of_a_production_received_goes_with_the_purge(attorney, corpus,
                                                                    django_capture_on_commit_callbacks):
    matter = matter_create(name="Acme v. Roe", created_by=attorney)
    paths = [corpus("court/ca7_3.pdf"), corpus("court/ca6_1-3.pdf")]
    streams = [open(path, "rb") for path in paths]
    try:
        incoming = incoming_receive(matter=matter, uploads=streams, origin="opposing_party", user=attorney)
    finally:
        for stream in streams:
            stream.close()
    blobs = [storage.blob_path(hashlib.sha256(path.read_bytes()).hexdigest()) for path in paths]
    assert all(blob.is_file() for blob in blobs) and incoming.sha256 == blobs[0].name
    with django_capture_on_commit_callbacks(execute=True):
        report = matter_purge(matter=matter, user=attorney, confirm_name="Acme v. Roe")
    assert report.originals_removed == sorted(blob.name for blob in blobs)
    assert not any(blob.exists() for blob in blobs)  # the second upload's stored copy too


@pytest.mark.skipif("connection.vendor != 'sqlite'")
@pytest.mark.django_db(transaction=True)
def test_nothing_of_a_purged_matters_text_stays_in_the_database_file_or_the_search_index(furnish, attorney,
                                                                                         tmp_path):
    acme = furnish("Acme v. Roe")
    page = Page.objects.filter(exhibit=acme.exhibits[1]).exclude(text="").order_by("number").first()
    middle = len(page.text) // 2
    phrase = page.text[middle:middle + 40]  # verbatim, as the row stores it
    word = max((w for w in page.text.split() if w.isalpha()), key=len)
    assert len(phrase.strip()) > 20
    copy = tmp_path / "as-a-backup-copies-it.sqlite3"  # the online backup API copies free pages too
    assert phrase.encode() in backed_up_bytes(copy)  # the test can see it there at all
    matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM matters_page_fts WHERE matters_page_fts MATCH ?", [f'"{word}"'])
        assert cursor.fetchone()[0] == 0
        # Deleting from FTS5 adds markers; the terms stay in the index's segments until they are merged. Rows 1
        # and 10 are the index's averages and structure; any other row is a segment.
        cursor.execute("SELECT count(*) FROM matters_page_fts_data WHERE id NOT IN (1, 10)")
        assert cursor.fetchone()[0] == 0
    assert phrase.encode() not in backed_up_bytes(copy)


def backed_up_bytes(copy) -> bytes:
    """The bytes of the test database as SQLite's online backup API copies it (free pages included)."""
    copy.unlink(missing_ok=True)
    source, target = sqlite3.connect(connection.settings_dict["NAME"]), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    return copy.read_bytes()


def test_an_original_uploaded_again_while_the_purge_commits_stays(furnish, attorney, corpus,
                                                                  django_capture_on_commit_callbacks):
    """The purge decides under its lock that no other matter uses the filing; before its files go, the same bytes
    are uploaded to another matter, whose upload keeps the stored file it finds."""
    acme = furnish("Acme v. Roe")
    filing = acme.exhibits[1]
    with django_capture_on_commit_callbacks() as after_commit:
        report = matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")
    assert filing.sha256 in report.originals_removed
    baker = matter_create(name="Baker v. Cole", created_by=attorney)
    with open(corpus("court/ca10_010110462922.pdf"), "rb") as stream:
        again = exhibit_create(matter=baker, stream=stream, original_name="filing.pdf", origin="court",
                               uploaded_by=attorney, enqueue=False)
    assert again.sha256 == filing.sha256
    for callback in after_commit:
        callback()
    assert storage.blob_path(again.sha256).is_file()  # Baker's exhibit keeps its original
    assert not storage.derived_dir(filing.pk).exists()
    kept = AuditEntry.objects.get(chain="system", action="original.keep")
    assert kept.detail["sha256"] == filing.sha256


def test_the_admins_log_keeps_no_title_of_the_purged_matters_exhibits(two_exhibit_matters, attorney):
    acme, other = two_exhibit_matters
    exhibit_type = ContentType.objects.get_for_model(Exhibit)
    for exhibit, title in ((acme.exhibits[1], "Settlement letter to Roe"), (other, "Letter to Cole")):
        LogEntry.objects.create(user=attorney, content_type=exhibit_type, object_id=str(exhibit.pk),
                                object_repr=title, action_flag=CHANGE, change_message="[]")
    report = matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")
    assert report.rows["admin.logentry"] == 1
    assert list(LogEntry.objects.values_list("object_repr", flat=True)) == ["Letter to Cole"]


@pytest.fixture
def two_exhibit_matters(furnish, attorney, corpus, ingest):
    acme = furnish("Acme v. Roe")
    baker = matter_create(name="Baker v. Cole", created_by=attorney)
    return acme, ingest(baker, corpus("court/ca6_1-3.pdf"))
