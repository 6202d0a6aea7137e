"""Taking over documents-queue work whose worker died: exhibits left ``processing`` and productions left
``stamping`` with an expired lease (:mod:`matters.leases`).

Whoever claims such work schedules a watch (:func:`matters.leases.lease_watch_schedule`): a small task on the
``documents`` queue that runs when the lease would have expired if nobody renewed it, on whichever worker is free,
on any host. While the work is live the watch looks again one lease later; once the lease has expired it puts the
work back:
- an exhibit goes back to ``queued`` and is processed again from its original (pages the dead worker stored are
  replaced; the original is only ever read);
- a production keeps its reserved Bates range and is stamped again from the start into a fresh output folder, so
  every number of the range ends on exactly one page and no number outside it is used. Nothing of the interrupted
  attempt was delivered: files appear only when the production is ``done``.
Each takeover is recorded in the matter's audit chain. :func:`documents_recover` does the same sweep over all
rows, for the start of ``make run``.
"""

import logging

from django.db import transaction
from django.utils import timezone

from matters.audit.services import audit_record
from matters.exhibits.services import enqueue_ingest
from matters.leases import lease_watch_schedule
from matters.models import Exhibit, Production
from matters.productions.services import production_enqueue

logger = logging.getLogger(__name__)


def exhibits_recover(*, exhibit_id: int | None = None) -> list[int]:
    """Queue again every exhibit left ``processing`` whose lease has expired (``exhibit_id``: only that one);
    return their ids. A live exhibit, whose worker renews its lease, is never touched."""
    stale = Exhibit.objects.filter(status=Exhibit.Status.PROCESSING, lease_expires_at__lt=timezone.now())
    if exhibit_id is not None:
        stale = stale.filter(pk=exhibit_id)
    requeued = []
    for exhibit in stale.select_related("matter"):
        with transaction.atomic():
            if not Exhibit.objects.filter(pk=exhibit.pk, status=Exhibit.Status.PROCESSING,
                                          lease_owner=exhibit.lease_owner,
                                          lease_expires_at__lt=timezone.now()).update(
                    status=Exhibit.Status.QUEUED, progress_page=0, lease_owner="", lease_expires_at=None,
                    updated_at=timezone.now()):
                continue
            audit_record(action="exhibit.status", matter=exhibit.matter, obj=exhibit, file_sha256=exhibit.sha256,
                         detail={"from": Exhibit.Status.PROCESSING, "to": Exhibit.Status.QUEUED,
                                 "reason": "its worker stopped before finishing", "worker": exhibit.lease_owner})
            transaction.on_commit(lambda pk=exhibit.pk: enqueue_ingest(pk))
        logger.warning("exhibit %s: worker %s stopped renewing its lease; queued again", exhibit.pk,
                       exhibit.lease_owner)
        requeued.append(exhibit.pk)
    return requeued


def productions_recover(*, production_id: int | None = None) -> list[int]:
    """Stamp again, in the same reserved range, every production left ``stamping`` whose lease has expired
    (``production_id``: only that one); return their ids. A live production is never touched."""
    stale = Production.objects.filter(status=Production.Status.STAMPING, lease_expires_at__lt=timezone.now())
    if production_id is not None:
        stale = stale.filter(pk=production_id)
    resumed = []
    for production in stale.select_related("matter"):
        with transaction.atomic():
            if not Production.objects.filter(pk=production.pk, status=Production.Status.STAMPING,
                                             lease_owner=production.lease_owner,
                                             lease_expires_at__lt=timezone.now()).update(
                    lease_owner="", lease_expires_at=None, pages_done=0):
                continue
            audit_record(action="production.restart", matter=production.matter, obj=production,
                         detail={"first": production.first, "last": production.last,
                                 "reason": "its worker stopped before finishing; stamped again in the same range",
                                 "worker": production.lease_owner})
            transaction.on_commit(lambda pk=production.pk: production_enqueue(pk))
        logger.warning("production %s: worker %s stopped renewing its lease; stamping again", production.pk,
                       production.lease_owner)
        resumed.append(production.pk)
    return resumed


def lease_watch(kind: str, pk: int) -> str:
    """The watch task's work: ``"recovered"`` when the work was put back, ``"live"`` (and a later look queued)
    while its lease is renewed, ``"settled"`` once it has ended or waits unclaimed in the queue (its next claim
    queues its own watch). Raises ValueError for an unknown ``kind``."""
    watched = {"exhibit": (Exhibit, Exhibit.Status.PROCESSING, exhibits_recover, "exhibit_id"),
               "production": (Production, Production.Status.STAMPING, productions_recover, "production_id")}
    if kind not in watched:
        raise ValueError(f"no lease watch for {kind!r}")
    model, working, recover, key = watched[kind]
    if not model.objects.filter(pk=pk, status=working, lease_expires_at__isnull=False).exists():
        return "settled"
    if recover(**{key: pk}):
        return "recovered"
    lease_watch_schedule(kind, pk)
    return "live"


def documents_recover() -> dict[str, list[int]]:
    """Put back every exhibit and production whose worker stopped renewing its lease; return their ids by kind."""
    return {"exhibits": exhibits_recover(), "productions": productions_recover()}
