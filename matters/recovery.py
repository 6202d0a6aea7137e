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
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.db import models, transaction
from django.utils import timezone

from matters.audit.services import audit_record
from matters.leases import lease_watch_schedule
from matters.models import Exhibit, IncomingProduction, Production
from matters.tasks import ingest_exhibit, run_import, run_production

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Leased:
    """One kind of leased documents-queue work: what a takeover writes, audits and queues.

    ``working`` is the status the row keeps while a worker holds it; ``release`` returns the fields (besides the
    lease) a takeover writes; ``audit`` returns ``audit_record``'s action, file hash and detail for a row;
    ``requeue`` queues the work again by id (called on commit); ``idle_field`` is the time stamp a worker moves with
    its progress, by which a row that holds no lease is judged abandoned (None: no such rule for this kind)."""

    model: type[models.Model]
    working: str
    release: Callable[[], dict]
    audit: Callable[[models.Model], tuple[str, str, dict]]
    requeue: Callable[[int], None]
    idle_field: str | None = None


LEASED = {
    "exhibit": Leased(
        model=Exhibit, working=Exhibit.Status.PROCESSING,
        release=lambda: {"status": Exhibit.Status.QUEUED, "progress_page": 0, "updated_at": timezone.now()},
        audit=lambda row: ("exhibit.status", row.sha256, {"from": Exhibit.Status.PROCESSING,
                                                          "to": Exhibit.Status.QUEUED}),
        requeue=lambda pk: ingest_exhibit.enqueue(pk), idle_field="updated_at"),
    "production": Leased(
        model=Production, working=Production.Status.STAMPING,
        release=lambda: {"pages_done": 0},
        audit=lambda row: ("production.restart", "", {"first": row.first, "last": row.last,
                                                      "note": "stamped again in the same range"}),
        requeue=lambda pk: run_production.enqueue(pk)),
    "import": Leased(
        model=IncomingProduction, working=IncomingProduction.Status.IMPORTING,
        release=dict,
        audit=lambda row: ("incoming_production.restart", row.sha256,
                           {"note": "read again; documents already imported are kept, none is made twice"}),
        requeue=lambda pk: run_import.enqueue(pk)),
}


def leased_recover(kind: str, *, pk: int | None = None, idle_s: float | None = None, enqueue: bool = True) -> list[int]:
    """Take back every row of ``kind`` (a key of :data:`LEASED`) whose worker died; return their ids.

    By default a row is taken back when its lease has expired; with ``idle_s``, instead, a row that holds no lease
    and whose ``idle_field`` has not moved for ``idle_s`` seconds (left by a version without leases). ``pk``
    limits it to one row; ``enqueue=False`` leaves the queuing to the caller, which does the work itself. Each
    takeover is one conditional update (so two workers never both take a row back) and one audit entry. A live
    row, whose worker renews its lease, is never touched. Raises KeyError for an unknown ``kind``."""
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
        with transaction.atomic():
            still = {**which, "pk": row.pk, "status": work.working, "lease_owner": row.lease_owner}
            if not work.model.objects.filter(**still).update(lease_owner="", lease_expires_at=None, **work.release()):
                continue
            action, file_sha256, detail = work.audit(row)
            audit_record(action=action, matter=row.matter, obj=row, file_sha256=file_sha256,
                         detail={**detail, "reason": "its worker stopped before finishing", "worker": row.lease_owner})
            if enqueue:
                transaction.on_commit(lambda pk=row.pk: work.requeue(pk))
        logger.warning("%s %s: worker %r stopped before finishing; taken back", kind, row.pk, row.lease_owner)
        taken.append(row.pk)
    return taken


def exhibits_recover(*, exhibit_id: int | None = None, enqueue: bool = True) -> list[int]:
    """Queue again every exhibit left ``processing`` whose lease has expired (``exhibit_id``: only that one);
    return their ids. ``enqueue=False``: put it back to ``queued`` without queuing a task (the caller reads it)."""
    return leased_recover("exhibit", pk=exhibit_id, enqueue=enqueue)


def productions_recover(*, production_id: int | None = None) -> list[int]:
    """Stamp again, in the same reserved range, every production left ``stamping`` whose lease has expired
    (``production_id``: only that one); return their ids."""
    return leased_recover("production", pk=production_id)


def imports_recover(*, incoming_id: int | None = None) -> list[int]:
    """Import again every incoming production left ``importing`` whose lease has expired (``incoming_id``: only
    that one); return their ids."""
    return leased_recover("import", pk=incoming_id)


def lease_watch(kind: str, pk: int) -> str:
    """The watch task's work: ``"recovered"`` when the work was put back, ``"live"`` (and a later look queued)
    while its lease is renewed, ``"settled"`` once it has ended or waits unclaimed in the queue (its next claim
    queues its own watch). Raises ValueError for an unknown ``kind``."""
    if kind not in LEASED:
        raise ValueError(f"no lease watch for {kind!r}")
    work = LEASED[kind]
    if not work.model.objects.filter(pk=pk, status=work.working, lease_expires_at__isnull=False).exists():
        return "settled"
    if leased_recover(kind, pk=pk):
        return "recovered"
    lease_watch_schedule(kind, pk)
    return "live"


def documents_recover(*, idle_s: float | None = None) -> dict[str, list[int]]:
    """Put back every row of every kind whose worker stopped renewing its lease, and, with ``idle_s``, every row
    without a lease idle that long (see :func:`leased_recover`); return their ids by kind (``exhibit``,
    ``production``, ``import``)."""
    taken = {}
    for kind in LEASED:
        taken[kind] = leased_recover(kind)
        if idle_s is not None:
            taken[kind] += leased_recover(kind, idle_s=idle_s)
    return taken
