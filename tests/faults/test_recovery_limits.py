"""Real documents workers (``manage.py db_worker``) and the two limits of recovery: a file whose worker is killed
every time fails after the takeovers allowed (LAWDESK_RECOVERY_MAX_TAKEOVERS), and an exhibit whose task a killed
worker took but never claimed is queued again by the next watch and processed once."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from matters.exhibits.services import exhibit_create
from matters.models import AuditEntry, Exhibit
from tests.faults.conftest import LEASE_ENV, OCR_ENV, kill_worker, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def _upload(matter, attorney, path, name: str) -> Exhibit:
    with open(path, "rb") as stream:
        return exhibit_create(matter=matter, stream=stream, original_name=name, origin="client", uploaded_by=attorney)


def test_a_file_whose_worker_is_killed_every_time_fails_after_the_takeovers_allowed(matter, attorney, corpus,
                                                                                      processes):
    workers = [processes.worker(**LEASE_ENV, **OCR_ENV, LAWDESK_RECOVERY_MAX_TAKEOVERS="1") for _ in range(3)]
    exhibit = _upload(matter, attorney, corpus("odd/scan-2p.pdf"), "scan-2p.pdf")
    killed = []
    for _death in range(2):
        def mid_ocr():
            row = Exhibit.objects.get(pk=exhibit.pk)
            assert row.status in ("queued", "processing"), f"ended before the kill: {row.status} {row.reason}"
            fresh = row.lease_owner and row.lease_owner not in killed
            return row if row.status == "processing" and fresh and row.progress_page >= 1 else None

        processing = wait_for(mid_ocr, timeout_s=120, what="a worker reading the scan", every_s=0.02)
        kill_worker(workers, processing.lease_owner)
        killed.append(processing.lease_owner)

    def ended():
        row = Exhibit.objects.get(pk=exhibit.pk)
        return row if row.status not in ("queued", "processing") else None

    exhibit = wait_for(ended, timeout_s=120, what="the exhibit to fail")
    assert exhibit.status == "failed" and exhibit.takeovers == 1
    assert exhibit.reason.startswith("Processing stopped 2 times because the worker doing it died each time")
    assert not exhibit.pages.exists() and (exhibit.lease_owner, exhibit.lease_expires_at) == ("", None)
    entries = AuditEntry.objects.filter(matter=matter, action="exhibit.status", detail__from="processing")
    assert [(e.detail["to"], e.detail["worker"]) for e in entries.order_by("seq")] == [
        ("queued", killed[0]), ("failed", killed[1])]
    assert sum(worker.poll() is None for worker in workers) == 1  # the third worker lives on


def test_a_task_taken_by_a_worker_killed_before_its_claim_is_run_by_another(matter, attorney, corpus, processes):
    stalled = _upload(matter, attorney, corpus("court/ca2_1-1.pdf"), "ca2_1-1.pdf")
    # What a worker killed between taking the task and claiming the exhibit leaves: its task RUNNING for ever.
    [task] = [t for t in DBTaskResult.objects.filter(status=TaskResultStatus.READY)
              if t.args_kwargs["args"] == [stalled.pk]]
    DBTaskResult.objects.filter(pk=task.pk).update(status=TaskResultStatus.RUNNING, started_at=timezone.now(),
                                                   worker_ids=["killed-worker"])
    Exhibit.objects.filter(pk=stalled.pk).update(queued_at=timezone.now() - timedelta(minutes=1))
    processes.worker(**LEASE_ENV)
    _upload(matter, attorney, corpus("court/ca6_1-3.pdf"), "ca6_1-3.pdf")  # its claim queues a watch

    def ready():
        row = Exhibit.objects.get(pk=stalled.pk)
        return row if row.status == "ready" else None

    wait_for(ready, timeout_s=120, what="the stalled exhibit to be processed")
    assert AuditEntry.objects.filter(matter=matter, action="exhibit.requeue", object_id=str(stalled.pk)).count() == 1
    claims = AuditEntry.objects.filter(matter=matter, action="exhibit.status", detail__to="processing",
                                       object_id=str(stalled.pk))
    assert claims.count() == 1  # one worker did the work
