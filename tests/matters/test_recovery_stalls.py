"""Work waiting in the documents queue with no task that will run it (matters.recovery.stalled_requeue): a worker
killed between taking the task (django-tasks-db marks it RUNNING) and claiming the row, or a process killed between
a commit and the enqueue after it. The sweep queues such work again once, leaves work with a waiting task alone,
and never queues work its caller does itself; a second task for the same row finds the work claimed."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from matters import recovery
from matters.exhibits.services import exhibit_create
from matters.incoming.services import incoming_confirm, incoming_receive
from matters.models import AuditEntry, Exhibit, IncomingProduction, Production
from matters.productions.reservation import production_create
from matters.recovery import documents_recover, exhibits_recover, lease_watch, stalled_requeue
from tests.support.volumes import zipped_volume

pytestmark = pytest.mark.django_db(transaction=True)

INGEST, STAMP, IMPORT = "matters.tasks.ingest_exhibit", "matters.tasks.run_production", "matters.tasks.run_import"


def _tasks(path: str, pk: int, status: str = TaskResultStatus.READY) -> list[DBTaskResult]:
    """Return the tasks of ``path`` for row ``pk`` with ``status``."""
    return [result for result in DBTaskResult.objects.filter(task_path=path, status=status)
            if result.args_kwargs["args"] == [pk]]


def _taken_by_dead_worker(path: str, pk: int) -> None:
    """Leave the row's waiting task as a worker killed before claiming the row leaves it: RUNNING for ever."""
    [result] = _tasks(path, pk)
    DBTaskResult.objects.filter(pk=result.pk).update(status=TaskResultStatus.RUNNING, started_at=timezone.now(),
                                                     worker_ids=["killed-worker"])


def _waited(model, pk: int) -> None:
    """Make the row's time in the queue longer than the grace period (one document lease)."""
    model.objects.filter(pk=pk).update(queued_at=timezone.now() - timedelta(hours=1))


@pytest.fixture
def uploaded(matter, attorney, corpus):
    """An exhibit uploaded as the browser does: ``queued``, with its ingest task waiting."""
    with open(corpus("court/ca2_1-1.pdf"), "rb") as stream:
        return exhibit_create(matter=matter, stream=stream, original_name="a.pdf", origin="client",
                              uploaded_by=attorney)


def test_an_exhibit_whose_task_died_before_the_claim_is_queued_again_once_and_processed_once(uploaded, matter):
    _waited(Exhibit, uploaded.pk)
    assert stalled_requeue("exhibit") == []  # its task waits in the queue
    _taken_by_dead_worker(INGEST, uploaded.pk)
    Exhibit.objects.filter(pk=uploaded.pk).update(queued_at=timezone.now())
    assert stalled_requeue("exhibit") == []  # within the grace period a live worker may still claim it
    _waited(Exhibit, uploaded.pk)

    assert stalled_requeue("exhibit") == [uploaded.pk]
    assert stalled_requeue("exhibit") == []  # the task it queued waits: a second sweep adds none
    [again] = _tasks(INGEST, uploaded.pk)
    entry = AuditEntry.objects.get(matter=matter, action="exhibit.requeue")
    assert entry.detail["reason"] == "it waited in the queue with no task to run it"

    # Had the first worker been only slow, both tasks run; the claim lets one of them do the work.
    assert again.task.call(*again.args_kwargs["args"]) == "ready"
    [slow] = _tasks(INGEST, uploaded.pk, TaskResultStatus.RUNNING)
    assert slow.task.call(*slow.args_kwargs["args"]) == "ready"
    claims = AuditEntry.objects.filter(matter=matter, action="exhibit.status", detail__to="processing")
    assert claims.count() == 1
    exhibit = Exhibit.objects.get(pk=uploaded.pk)
    assert exhibit.pages.count() == exhibit.page_count > 0


def test_a_production_whose_task_was_never_written_is_queued_again_and_stamped_once(matter, attorney, ingest,
                                                                                     corpus):
    exhibit = ingest(matter, corpus("court/ca2_1-1.pdf"))
    production = production_create(matter=matter, exhibits=[exhibit], prefix="SMITH", created_by=attorney)
    DBTaskResult.objects.filter(task_path=STAMP).delete()  # the process died between the commit and the enqueue
    _waited(Production, production.pk)
    assert stalled_requeue("production") == [production.pk]
    [task] = _tasks(STAMP, production.pk)
    assert task.task.call(production.pk) == "done"
    assert task.task.call(production.pk) == "done"  # a second task finds it done and does nothing
    done = Production.objects.get(pk=production.pk)
    assert done.bates_pages.count() == exhibit.page_count
    assert AuditEntry.objects.filter(matter=matter, action="production.done").count() == 1
    assert stalled_requeue("production") == []


def test_an_import_whose_task_died_before_the_claim_is_queued_again(matter, attorney, tmp_path):
    with open(zipped_volume(tmp_path), "rb") as upload:
        incoming = incoming_receive(matter=matter, uploads=[upload], origin="opposing_party", user=attorney)
    incoming = incoming_confirm(incoming=incoming, field_map=incoming.field_map, user=attorney)
    _taken_by_dead_worker(IMPORT, incoming.pk)
    _waited(IncomingProduction, incoming.pk)
    IncomingProduction.objects.filter(pk=incoming.pk).update(lease_owner="w:1:a",
                                                             lease_expires_at=timezone.now() + timedelta(seconds=30))
    assert stalled_requeue("import") == []  # claimed under a live lease: its worker's
    IncomingProduction.objects.filter(pk=incoming.pk).update(lease_owner="", lease_expires_at=None)
    assert stalled_requeue("import") == [incoming.pk]
    assert len(_tasks(IMPORT, incoming.pk)) == 1
    assert AuditEntry.objects.filter(matter=matter, action="incoming_production.requeue").count() == 1


def test_two_sweeps_that_read_the_same_row_queue_it_once(uploaded, monkeypatch):
    _taken_by_dead_worker(INGEST, uploaded.pk)
    _waited(Exhibit, uploaded.pk)
    read = recovery._ready_ids
    others = []

    def another_sweep_in_between(task):
        seen = read(task)  # this sweep's reading: no task waits for the row
        monkeypatch.setattr(recovery, "_ready_ids", read)
        others.append(stalled_requeue("exhibit"))  # another sweep reads, queues and commits before this one writes
        return seen

    monkeypatch.setattr(recovery, "_ready_ids", another_sweep_in_between)
    assert stalled_requeue("exhibit") == []
    assert others == [[uploaded.pk]]
    assert len(_tasks(INGEST, uploaded.pk)) == 1


def test_work_its_caller_does_itself_is_never_queued(matter, attorney, corpus, ingest):
    with open(corpus("court/ca2_1-1.pdf"), "rb") as stream:
        exhibit = exhibit_create(matter=matter, stream=stream, original_name="a.pdf", origin="client",
                                 uploaded_by=attorney, enqueue=False)  # as the command line and an import do
    ready = ingest(matter, corpus("court/ca6_1-3.pdf"))
    production = production_create(matter=matter, exhibits=[ready], prefix="SMITH", created_by=attorney,
                                   enqueue=False)
    # As manage.py import_production leaves a volume it reads itself: importing, no lease, never queued.
    incoming = IncomingProduction.objects.create(matter=matter, origin="opposing_party", source_name="VOL001.zip",
                                                 sha256="", status=IncomingProduction.Status.IMPORTING)
    for model, pk in ((Exhibit, exhibit.pk), (Production, production.pk), (IncomingProduction, incoming.pk)):
        model.objects.filter(pk=pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert documents_recover() == {"exhibit": [], "production": [], "import": []}
    assert not DBTaskResult.objects.filter(task_path__in=[INGEST, STAMP, IMPORT]).exists()


def test_every_watch_and_the_start_sweep_queue_stalled_work(uploaded, matter, attorney, corpus):
    with open(corpus("court/ca6_1-3.pdf"), "rb") as stream:
        other = exhibit_create(matter=matter, stream=stream, original_name="b.pdf", origin="client",
                               uploaded_by=attorney, enqueue=False)
    _taken_by_dead_worker(INGEST, uploaded.pk)
    _waited(Exhibit, uploaded.pk)
    assert lease_watch("exhibit", other.pk) == "settled"  # a watch of other work
    assert len(_tasks(INGEST, uploaded.pk)) == 1

    # A takeover whose worker died between its commit and queuing the task: the row waits, its task never written.
    Exhibit.objects.filter(pk=uploaded.pk).update(status="processing", lease_owner="w:1:a",
                                                  lease_expires_at=timezone.now() - timedelta(seconds=1))
    DBTaskResult.objects.filter(task_path=INGEST).delete()
    assert exhibits_recover() == [uploaded.pk]
    DBTaskResult.objects.filter(task_path=INGEST).delete()
    _waited(Exhibit, uploaded.pk)
    assert documents_recover()["exhibit"] == [uploaded.pk]
    assert len(_tasks(INGEST, uploaded.pk)) == 1


def test_the_periodic_sweep_takes_back_a_stall_no_watch_sees_and_keeps_one_next_sweep_waiting(uploaded):
    from matters.recovery import documents_sweep_schedule
    from matters.tasks import sweep_documents

    SWEEP = "matters.tasks.sweep_documents"
    assert documents_sweep_schedule(interval_s=60) is True
    assert documents_sweep_schedule(interval_s=60) is False  # never two sweeps waiting
    [waiting] = DBTaskResult.objects.filter(task_path=SWEEP, status=TaskResultStatus.READY)
    assert waiting.run_after > timezone.now() + timedelta(seconds=50)
    # Nothing is claimed anywhere, so no watch exists: only the sweep can notice this stall.
    _taken_by_dead_worker(INGEST, uploaded.pk)
    _waited(Exhibit, uploaded.pk)
    DBTaskResult.objects.filter(pk=waiting.pk).update(status=TaskResultStatus.SUCCESSFUL)

    taken = sweep_documents.call(interval_s=60)

    assert taken["exhibit"] == [uploaded.pk]
    assert len(_tasks(INGEST, uploaded.pk)) == 1
    assert DBTaskResult.objects.filter(task_path=SWEEP, status=TaskResultStatus.READY).count() == 1
