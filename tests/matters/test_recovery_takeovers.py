"""Work whose worker dies every time (matters.recovery, LAWDESK_RECOVERY_MAX_TAKEOVERS): it is taken over that many
times, then failed with its reason, audited and shown like any failure; an exhibit processed again by hand counts
afresh. Each death is what a killed worker leaves: the row claimed by a worker whose lease has expired."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from matters import storage
from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create, exhibit_reprocess
from matters.incoming.services import incoming_confirm, incoming_receive
from matters.models import AuditEntry, BatesPage, Exhibit, IncomingProduction, Page, Production
from matters.productions.reservation import production_create
from matters.recovery import exhibits_recover, imports_recover, lease_watch, productions_recover
from tests.support.volumes import zipped_volume

pytestmark = pytest.mark.django_db(transaction=True)


def _worker_died(model, pk: int, worker: str) -> None:
    """Leave the row as a worker killed while holding it does: claimed, its lease run out."""
    claimed = {"status": Exhibit.Status.PROCESSING} if model is Exhibit else {}
    model.objects.filter(pk=pk).update(lease_owner=worker, lease_expires_at=timezone.now() - timedelta(seconds=1),
                                       **claimed)


def _tasks(path: str, pk: int) -> int:
    """Count the tasks of ``path`` for row ``pk`` waiting in the queue."""
    waiting = DBTaskResult.objects.filter(task_path=path, status=TaskResultStatus.READY)
    return sum(args_kwargs["args"] == [pk] for args_kwargs in waiting.values_list("args_kwargs", flat=True))


def test_an_exhibit_that_kills_every_worker_fails_after_the_limit_and_is_processed_again_by_hand(
        settings, matter, attorney, corpus, client):
    settings.LAWDESK_RECOVERY_MAX_TAKEOVERS = 2
    with open(corpus("court/ca2_1-1.pdf"), "rb") as stream:
        exhibit = exhibit_create(matter=matter, stream=stream, original_name="a.pdf", origin="client",
                                 uploaded_by=attorney)
    for death in (1, 2):
        _worker_died(Exhibit, exhibit.pk, f"w:{death}:a")
        assert lease_watch("exhibit", exhibit.pk) == "recovered"
        row = Exhibit.objects.get(pk=exhibit.pk)
        assert (row.status, row.takeovers) == ("queued", death)
    assert _tasks("matters.tasks.ingest_exhibit", exhibit.pk) == 3  # the upload's task and one per takeover

    _worker_died(Exhibit, exhibit.pk, "w:3:a")
    # What the third worker stored before it died.
    Page.objects.create(exhibit=exhibit, number=1, text="half read", source="pdf", width_pt=612, height_pt=792)
    assert exhibits_recover() == [exhibit.pk]
    row = Exhibit.objects.get(pk=exhibit.pk)
    assert (row.status, row.lease_owner, row.lease_expires_at, row.takeovers) == ("failed", "", None, 2)
    assert "stopped 3 times because the worker doing it died each time" in row.reason
    assert not row.pages.exists()
    assert _tasks("matters.tasks.ingest_exhibit", exhibit.pk) == 3  # failed: not queued again
    entry = AuditEntry.objects.get(matter=matter, action="exhibit.status", detail__to="failed")
    assert (entry.detail["worker"], entry.detail["reason"]) == ("w:3:a", row.reason)
    client.force_login(attorney)
    page = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert "died each time" in page and "Process again" in page

    exhibit_reprocess(exhibit=row, requested_by=attorney)
    assert Exhibit.objects.get(pk=exhibit.pk).takeovers == 0  # a person's retry counts afresh
    _worker_died(Exhibit, exhibit.pk, "w:4:a")
    assert exhibits_recover() == [exhibit.pk] and Exhibit.objects.get(pk=exhibit.pk).status == "queued"
    done = exhibit_process(exhibit_id=exhibit.pk, previews="skip")
    assert done.status == "ready" and done.pages.count() == done.page_count > 0


def test_a_production_that_kills_every_worker_is_voided_and_its_numbers_never_used_again(
        settings, matter, attorney, ingest, corpus):
    settings.LAWDESK_RECOVERY_MAX_TAKEOVERS = 0  # the first death is one too many
    exhibit = ingest(matter, corpus("court/ca2_1-1.pdf"))
    production = production_create(matter=matter, exhibits=[exhibit], prefix="SMITH", created_by=attorney)
    _worker_died(Production, production.pk, "w:1:a")
    folder = storage.production_dir(production.pk)
    folder.mkdir(parents=True)
    (folder / f"{production.volume}.zip.part").write_bytes(b"PK\x03\x04 cut short")
    BatesPage.objects.create(production=production, document=production.documents.get(), page=exhibit.pages.first(),
                             number=1, bates="SMITH000001")

    assert productions_recover() == [production.pk]
    row = Production.objects.get(pk=production.pk)
    assert (row.status, row.lease_owner) == ("failed", "")
    assert "Stamping stopped once because the worker doing it died" in row.reason and row.finished_at is not None
    assert not row.bates_pages.exists() and not folder.exists()
    entry = AuditEntry.objects.get(matter=matter, action="production.void")
    assert (entry.detail["first"], entry.detail["last"], entry.detail["worker"]) == (row.first, row.last, "w:1:a")
    assert _tasks("matters.tasks.run_production", production.pk) == 1  # only the one it was created with
    again = production_create(matter=matter, exhibits=[exhibit], prefix="SMITH", created_by=attorney, enqueue=False)
    assert again.first_number == row.last_number + 1


def test_an_import_that_kills_every_worker_fails_with_its_reason(settings, matter, attorney, tmp_path):
    settings.LAWDESK_RECOVERY_MAX_TAKEOVERS = 1
    with open(zipped_volume(tmp_path), "rb") as upload:
        incoming = incoming_receive(matter=matter, uploads=[upload], origin="opposing_party", user=attorney)
    incoming = incoming_confirm(incoming=incoming, field_map=incoming.field_map, user=attorney)
    _worker_died(IncomingProduction, incoming.pk, "w:1:a")
    assert imports_recover() == [incoming.pk]
    assert IncomingProduction.objects.get(pk=incoming.pk).status == "importing"
    _worker_died(IncomingProduction, incoming.pk, "w:2:a")
    assert imports_recover() == [incoming.pk]
    row = IncomingProduction.objects.get(pk=incoming.pk)
    assert (row.status, row.takeovers, row.lease_owner) == ("failed", 1, "")
    assert row.reason.startswith("The import stopped 2 times because the worker doing it died each time")
    entry = AuditEntry.objects.get(matter=matter, action="incoming_production.import")
    assert (entry.detail["status"], entry.detail["worker"]) == ("failed", "w:2:a")


def test_a_live_lease_is_never_counted_as_a_death(settings, matter, attorney, corpus):
    settings.LAWDESK_RECOVERY_MAX_TAKEOVERS = 0
    with open(corpus("court/ca2_1-1.pdf"), "rb") as stream:
        exhibit = exhibit_create(matter=matter, stream=stream, original_name="a.pdf", origin="client",
                                 uploaded_by=attorney, enqueue=False)
    Exhibit.objects.filter(pk=exhibit.pk).update(status="processing", lease_owner="w:1:a",
                                                 lease_expires_at=timezone.now() + timedelta(seconds=30))
    assert exhibits_recover() == [] and lease_watch("exhibit", exhibit.pk) == "live"
    assert Exhibit.objects.get(pk=exhibit.pk).status == "processing"
