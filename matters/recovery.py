"""Taking over documents-queue work whose worker died: exhibits left ``processing``, productions left ``stamping``
and imports left ``importing`` with an expired lease (:mod:`matters.leases`).

Whoever claims such work schedules a watch (:func:`matters.leases.lease_watch_schedule`): a small task on the
``documents`` queue that runs when the lease would have expired if nobody renewed it, on whichever worker is free,
on any host. While the work is live the watch looks again one lease later; once the lease has expired it puts the
work back:
- an exhibit goes back to ``queued`` and is processed again from its original (pages the dead worker stored are
  replaced; the original is only ever read);
- a production keeps its reserved Bates range and is stamped again from the start into a fresh output folder, so
  every number of the range ends on exactly one page and no number outside it is used. Nothing of the interrupted
  attempt was delivered or recorded: files and their generated-document records appear only when it is ``done``;
- an import is read again from its kept upload; each record of the volume already made into an exhibit keeps that
  exhibit (``IncomingDocument``), so no record becomes two exhibits and none is lost.
Each takeover is recorded in the matter's audit chain. The three differ only in what :data:`LEASED` lists; one loop,
:func:`leased_recover`, claims and audits them all. :func:`documents_recover` sweeps every row at the start of
``make run``, including exhibits left ``processing`` by a version of LawDesk that held no lease (by idle time).

Two limits close what leases alone leave open:
- work whose worker dies every time (a crash in a native library, the memory running out on one file) is taken
  over at most ``LAWDESK_RECOVERY_MAX_TAKEOVERS`` times; the next time its worker dies it is ``failed`` with that
  reason, audited and shown like any failure (an exhibit can be processed again by hand, which counts afresh);
- work waiting in the queue with no task that will ever run it (a worker killed between taking the task and
  claiming the row, or a process killed between a commit and the enqueue that follows it) is queued again by
  :func:`stalled_requeue`, which every watch, the start of ``make run`` and a periodic sweep run.
The periodic sweep (:func:`documents_sweep_schedule`, every ``SWEEP_AFTER_LEASES`` document leases) is the backstop
for what no watch sees: work that stalled while nothing else was claimed, and watches that were themselves lost.
"""

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from django_tasks.base import Task

from matters import storage
from matters.audit.services import audit_record
from matters.leases import enqueue_unless_waiting, lease_watch_schedule, tasks_waiting
from matters.models import BatesPage, Exhibit, IncomingProduction, Page, Production
from matters.tasks import ingest_exhibit, run_import, run_production, sweep_documents

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Leased:
    """One kind of leased documents-queue work: what a takeover writes, audits and queues, and how it fails.

    ``working`` is the status the row keeps while a worker holds it, ``waiting`` the lookups of a row waiting in
    the queue for a worker; ``release`` returns the fields (besides the lease) a takeover writes; ``audit`` returns
    ``audit_record``'s action, file hash and detail for a row taken back; ``task`` is the task that works a row by
    id; ``noun`` names the row in audit actions; ``fail`` returns the fields, and ``void`` clears what the dead
    worker left and returns the audit entry, of a row failed after too many takeovers (given the reason);
    ``reason`` words that failure for an attorney (given the row and how often its worker died); ``idle_field`` is
    the time stamp a worker moves with its progress, by which a row that holds no lease is judged abandoned (None:
    no such rule for this kind)."""

    model: type[models.Model]
    working: str
    waiting: dict
    release: Callable[[], dict]
    audit: Callable[[models.Model], tuple[str, str, dict]]
    task: Task
    noun: str
    fail: Callable[[str], dict]
    void: Callable[[models.Model, str], tuple[str, str, dict]]
    reason: Callable[[models.Model, int], str]
    idle_field: str | None = None


# Said of every failure after too many takeovers: what most likely happened, so the operator knows where to look.
DIED = ("because the worker doing it died each time (most likely a crash in a reading library, or the memory "
        "running out, on this material)")


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _exhibit_void(row: Exhibit, reason: str) -> tuple[str, str, dict]:
    Page.objects.filter(exhibit=row).delete()  # as any failure leaves it: no pages of a half-read file
    return "exhibit.status", row.sha256, {"from": Exhibit.Status.PROCESSING, "to": Exhibit.Status.FAILED,
                                          "reason": reason}


def _production_void(row: Production, reason: str) -> tuple[str, str, dict]:
    BatesPage.objects.filter(production=row).delete()
    # The interrupted attempt's partial files (written under temporary names) go with the void range.
    transaction.on_commit(lambda: shutil.rmtree(storage.production_dir(row.pk), ignore_errors=True))
    return "production.void", "", {"first": row.first, "last": row.last, "reason": reason}


LEASED = {
    "exhibit": Leased(
        model=Exhibit, working=Exhibit.Status.PROCESSING, waiting={"status": Exhibit.Status.QUEUED, "lease_owner": ""},
        release=lambda: {"status": Exhibit.Status.QUEUED, "progress_page": 0, "updated_at": timezone.now()},
        audit=lambda row: ("exhibit.status", row.sha256, {"from": Exhibit.Status.PROCESSING,
                                                          "to": Exhibit.Status.QUEUED}),
        task=ingest_exhibit, noun="exhibit",
        fail=lambda reason: {"status": Exhibit.Status.FAILED, "reason": reason, "progress_page": 0, "pages_pdf": 0,
                             "pages_ocr": 0, "previews_ready": False, "updated_at": timezone.now()},
        void=_exhibit_void,
        reason=lambda row, deaths: (f"Processing stopped {_times(deaths)} {DIED}, so it was not tried again. Ask the "
                                    "office's operator to look at the workers' log; then process it again, or "
                                    "upload another copy of the file."),
        idle_field="updated_at"),
    "production": Leased(
        model=Production, working=Production.Status.STAMPING,
        waiting={"status": Production.Status.STAMPING, "lease_owner": ""},
        release=lambda: {"pages_done": 0},
        audit=lambda row: ("production.restart", "", {"first": row.first, "last": row.last,
                                                      "note": "stamped again in the same range"}),
        task=run_production, noun="production",
        fail=lambda reason: {"status": Production.Status.FAILED, "reason": reason, "finished_at": timezone.now()},
        void=_production_void,
        reason=lambda row, deaths: (f"Stamping stopped {_times(deaths)} {DIED}, so it was not tried again. Ask the "
                                    "office's operator to look at the workers' log; a new production takes the next "
                                    "numbers."),
    ),
    "import": Leased(
        model=IncomingProduction, working=IncomingProduction.Status.IMPORTING,
        waiting={"status": IncomingProduction.Status.IMPORTING, "lease_owner": ""},
        release=dict,
        audit=lambda row: ("incoming_production.restart", row.sha256,
                           {"note": "read again; documents already imported are kept, none is made twice"}),
        task=run_import, noun="incoming_production",
        fail=lambda reason: {"status": IncomingProduction.Status.FAILED, "reason": reason},
        void=lambda row, reason: ("incoming_production.import", row.sha256,
                                  {"status": IncomingProduction.Status.FAILED, "reason": reason}),
        reason=lambda row, deaths: (f"The import stopped {_times(deaths)} {DIED}, so it was not tried again. The "
                                    "documents it had already made are kept. Ask the office's operator to look at "
                                    "the workers' log, then receive the volume again."),
    ),
}


def leased_recover(kind: str, *, pk: int | None = None, idle_s: float | None = None, enqueue: bool = True) -> list[int]:
    """Take back every row of ``kind`` (a key of :data:`LEASED`) whose worker died; return their ids.

    By default a row is taken back when its lease has expired; with ``idle_s``, instead, a row that holds no lease
    and whose ``idle_field`` has not moved for ``idle_s`` seconds (left by a version without leases). ``pk``
    limits it to one row; ``enqueue=False`` leaves the queuing to the caller, which does the work itself. Each
    takeover is one conditional update (so two workers never both take a row back) and one audit entry. A row
    already taken over ``LAWDESK_RECOVERY_MAX_TAKEOVERS`` times is failed instead, with its reason (its id is
    returned all the same). A live row, whose worker renews its lease, is never touched. Raises KeyError for an
    unknown ``kind``."""
    work = LEASED[kind]
    if idle_s is None:
        which = {"lease_expires_at__lt": timezone.now()}
    elif work.idle_field is None:
        return []
    else:
        which = {"lease_owner": "", f"{work.idle_field}__lt": timezone.now() - timedelta(seconds=idle_s)}
    rows = work.model.objects.filter(status=work.working, **which)
    if pk is not None:
        rows = rows.filter(pk=pk)
    taken = []
    for row in rows.select_related("matter"):
        give_up = row.takeovers >= settings.LAWDESK_RECOVERY_MAX_TAKEOVERS
        reason = work.reason(row, row.takeovers + 1) if give_up else ""
        if give_up:
            fields = work.fail(reason)
        else:
            fields = {**work.release(), "takeovers": row.takeovers + 1}
            # Without a task of the queue the caller works the row itself, so no sweep may queue it meanwhile.
            fields["queued_at"] = timezone.now() if enqueue else None
        with transaction.atomic():
            still = {**which, "pk": row.pk, "status": work.working, "lease_owner": row.lease_owner,
                     "takeovers": row.takeovers}
            if not work.model.objects.filter(**still).update(lease_owner="", lease_expires_at=None, **fields):
                continue
            if give_up:
                action, file_sha256, detail = work.void(row, reason)
                detail = {**detail, "worker": row.lease_owner, "takeovers": row.takeovers}
            else:
                action, file_sha256, detail = work.audit(row)
                detail = {**detail, "reason": "its worker stopped before finishing", "worker": row.lease_owner}
            audit_record(action=action, matter=row.matter, obj=row, file_sha256=file_sha256, detail=detail)
            if enqueue and not give_up:
                transaction.on_commit(lambda pk=row.pk: work.task.enqueue(pk))
        if give_up:
            logger.error("%s %s: its worker died %s times; failed, not taken over again", kind, row.pk,
                         row.takeovers + 1)
        else:
            logger.warning("%s %s: worker %r stopped before finishing; taken back", kind, row.pk, row.lease_owner)
        taken.append(row.pk)
    return taken


def stalled_requeue(kind: str, *, grace_s: float | None = None) -> list[int]:
    """Queue again every row of ``kind`` (a key of :data:`LEASED`) that waits in the queue with no task that will
    run it; return their ids.

    Such a row is waiting for a worker (``queued``; a production or an import without a lease), was put in the
    queue more than ``grace_s`` seconds ago (default: one document lease, ``LAWDESK_DOCUMENT_LEASE_S``, longer
    than a live worker takes between taking a task and claiming its row), and no task of the queue for it is
    ``READY``: its last task is ``RUNNING`` on a worker that died before claiming the row, ended without claiming
    it, or was never written. Each row is queued again by one conditional update of ``queued_at`` (so two sweeps
    that read the same row queue it once) and one audit entry. Should a second task for the same row run anyway
    (its first task's worker was only slow), the claim lets one worker only do the work; the other returns.
    Rows worked by their caller (``queued_at`` empty: the command line, an import's own files) are never queued.
    Raises KeyError for an unknown ``kind``."""
    work = LEASED[kind]
    grace_s = settings.LAWDESK_DOCUMENT_LEASE_S if grace_s is None else grace_s
    cutoff = timezone.now() - timedelta(seconds=grace_s)
    stalled = list(work.model.objects.filter(queued_at__lt=cutoff, **work.waiting).select_related("matter"))
    if not stalled:
        return []
    ready = _ready_ids(work.task)
    queued = []
    for row in stalled:
        if row.pk in ready:
            continue
        with transaction.atomic():
            if not work.model.objects.filter(pk=row.pk, queued_at=row.queued_at, **work.waiting).update(
                    queued_at=timezone.now()):
                continue  # claimed, queued by a person or by another sweep since it was read
            audit_record(action=f"{work.noun}.requeue", matter=row.matter, obj=row,
                         detail={"reason": "it waited in the queue with no task to run it",
                                 "waiting_since": row.queued_at.isoformat()})
            transaction.on_commit(lambda pk=row.pk: work.task.enqueue(pk))
        logger.warning("%s %s waited in the queue with no task to run it; queued again", kind, row.pk)
        queued.append(row.pk)
    return queued


def _ready_ids(task: Task) -> set[int]:
    """Return the ids that tasks of ``task`` waiting in the queue (``READY``, whenever they may run) will work."""
    return {args_kwargs["args"][0] for args_kwargs in tasks_waiting(task).values_list("args_kwargs", flat=True)
            if args_kwargs.get("args")}


def exhibits_recover(*, exhibit_id: int | None = None, enqueue: bool = True) -> list[int]:
    """Queue again every exhibit left ``processing`` whose lease has expired (``exhibit_id``: only that one), or
    fail it after too many takeovers; return their ids. ``enqueue=False``: put it back to ``queued`` without
    queuing a task (the caller reads it)."""
    return leased_recover("exhibit", pk=exhibit_id, enqueue=enqueue)


def productions_recover(*, production_id: int | None = None) -> list[int]:
    """Stamp again, in the same reserved range, every production left ``stamping`` whose lease has expired
    (``production_id``: only that one), or void it after too many takeovers; return their ids."""
    return leased_recover("production", pk=production_id)


def imports_recover(*, incoming_id: int | None = None) -> list[int]:
    """Import again every incoming production left ``importing`` whose lease has expired (``incoming_id``: only
    that one), or fail it after too many takeovers; return their ids."""
    return leased_recover("import", pk=incoming_id)


def lease_watch(kind: str, pk: int) -> str:
    """The watch task's work: ``"recovered"`` when the work was put back (or failed after too many takeovers),
    ``"live"`` (and a later look queued) while its lease is renewed, ``"settled"`` once it has ended or waits
    unclaimed in the queue (its next claim queues its own watch). Every watch also queues again the work of every
    kind that waits with no task to run it (:func:`stalled_requeue`). Raises ValueError for an unknown ``kind``."""
    if kind not in LEASED:
        raise ValueError(f"no lease watch for {kind!r}")
    for any_kind in LEASED:
        stalled_requeue(any_kind)
    work = LEASED[kind]
    if not work.model.objects.filter(pk=pk, status=work.working, lease_expires_at__isnull=False).exists():
        return "settled"
    if leased_recover(kind, pk=pk):
        return "recovered"
    lease_watch_schedule(kind, pk)
    return "live"


def documents_recover(*, idle_s: float | None = None) -> dict[str, list[int]]:
    """Put back every row of every kind whose worker stopped renewing its lease (or fail it after too many
    takeovers), with ``idle_s`` every row without a lease idle that long (see :func:`leased_recover`), and every
    row waiting with no task to run it (:func:`stalled_requeue`); return their ids by kind (``exhibit``,
    ``production``, ``import``)."""
    taken = {}
    for kind in LEASED:
        taken[kind] = leased_recover(kind)
        if idle_s is not None:
            taken[kind] += leased_recover(kind, idle_s=idle_s)
        taken[kind] += stalled_requeue(kind)
    return taken


# A sweep every two document leases (60 s by default): a stall is noticed within about three leases of its enqueue
# (its grace of one lease, then up to two until the next sweep), at a cost of a few indexed queries a minute.
SWEEP_AFTER_LEASES = 2


def documents_sweep_schedule(*, interval_s: float | None = None) -> bool:
    """Queue the periodic sweep (:func:`matters.tasks.sweep_documents`) to run ``interval_s`` seconds from now
    (default: ``SWEEP_AFTER_LEASES`` x ``LAWDESK_DOCUMENT_LEASE_S``), unless a sweep already waits in the queue;
    return True if one was queued. Each sweep queues the next, so one call at start keeps it going on whichever
    documents worker is free."""
    if interval_s is None:
        interval_s = settings.LAWDESK_DOCUMENT_LEASE_S * SWEEP_AFTER_LEASES
    return enqueue_unless_waiting(sweep_documents, after_s=interval_s, interval_s=interval_s)
