"""Leases on background work: a worker that holds a row's work renews a time-limited claim on it while it works, so
any other worker, on this host or another, can tell work in progress from work whose worker died.

A row under lease has two columns, ``lease_owner`` (the worker's name, :func:`worker_id`) and ``lease_expires_at``.
The worker claims the row with a conditional update, and :class:`LeaseKeeper`, a thread, pushes the expiry forward
every third of the lease. A worker killed with ``kill -9``, or cut off from the database, stops renewing; once the
expiry has passed, a sweep (``matters.recovery`` for documents, ``pipeline.stages.control`` for job stages) takes
the work over. Every write that ends the work is made conditional on the lease owner, so a worker that lost its
lease (paused past the expiry, then woke up) cannot overwrite the work of the one that took over.

The same mechanism serves both queues: job stages (``pipeline.job_models.StageRun``) and the documents queue
(exhibits being processed, productions being stamped, incoming productions being imported).
"""

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Self

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from django_tasks.base import Task, TaskResultStatus
from django_tasks_db.models import DBTaskResult

from matters.tasks import watch_lease as watch_lease_task

logger = logging.getLogger(__name__)


class LeaseLost(Exception):
    """Raised inside work whose lease another worker has taken over: this worker must stop without writing."""


def worker_id() -> str:
    """Return a lease owner name for this process: ``host:pid:random`` (the random part tells apart two claims made
    by one process, so a stale claim of its own is never mistaken for a live one)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lease_expiry(lease_s: float):
    """Return the time a lease taken or renewed now expires: now plus ``lease_s`` seconds."""
    return timezone.now() + timedelta(seconds=lease_s)


class LeaseKeeper(threading.Thread):
    """Renew the lease of one row every ``lease_s / 3`` seconds until :meth:`stop` is called.

    ``model`` is the row's model, ``pk`` its key, ``owner`` the claiming worker's name; ``live`` are extra field
    lookups (``{"status": "running"}``) that must still hold for the lease to be renewed. When a renewal finds no
    such row (another worker took the work over, or a user ended it), ``lost`` is set, ``on_lost`` is called and
    the thread ends. After each successful renewal ``on_beat`` is called (a stage checks its job's cancel flag
    there). A database error during a renewal is logged and retried at the next beat: a busy or briefly unreachable
    database is not a lost lease, and the lease outlives two missed beats.
    """

    def __init__(self, *, model, pk: int, owner: str, lease_s: float, live: dict | None = None,
                 on_lost: Callable[[], None] | None = None, on_beat: Callable[[], None] | None = None):
        super().__init__(daemon=True, name=f"lease-{model._meta.model_name}-{pk}")
        self.model, self.pk, self.owner, self.lease_s = model, pk, owner, lease_s
        self.live = live or {}
        self.on_lost, self.on_beat = on_lost, on_beat
        self.stopping = threading.Event()
        self.lost = False

    def run(self) -> None:
        try:
            while not self.stopping.wait(self.lease_s / 3):
                try:
                    renewed = self.model.objects.filter(pk=self.pk, lease_owner=self.owner, **self.live).update(
                        lease_expires_at=lease_expiry(self.lease_s))
                    if renewed and self.on_beat is not None:
                        self.on_beat()
                except DatabaseError:
                    logger.warning("could not renew the lease of %s %s", self.model._meta.model_name, self.pk,
                                   exc_info=True)
                    connection.close()  # a broken connection is replaced at the next beat
                    continue
                if not renewed:
                    self.lost = True
                    if self.on_lost is not None:
                        self.on_lost()
                    return
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop renewing and wait (up to 5 s) for the thread to end; the caller then ends or releases the lease."""
        self.stopping.set()
        self.join(timeout=5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# A watch runs this many leases after the claim: one lease for the expiry, half of one for a renewal in flight.
WATCH_AFTER_LEASES = 1.5


def lease_watch_schedule(kind: str, pk: int) -> None:
    """Queue a check of the lease of an ``exhibit``, ``production`` or ``import`` (``kind``, a key of
    ``matters.recovery.LEASED``) with id ``pk`` for when it would have expired, once the current transaction
    commits."""
    run_after = timezone.now() + timedelta(seconds=settings.LAWDESK_DOCUMENT_LEASE_S * WATCH_AFTER_LEASES)
    transaction.on_commit(lambda: watch_lease_task.using(run_after=run_after).enqueue(kind, pk))


def tasks_waiting(task: Task):
    """The queue's tasks of ``task`` that wait to run (``READY``, whenever they may run): a DBTaskResult
    queryset."""
    return DBTaskResult.objects.filter(task_path=task.module_path, status=TaskResultStatus.READY)


def enqueue_unless_waiting(task: Task, *, after_s: float, **kwargs) -> bool:
    """Queue ``task`` with ``kwargs`` to run ``after_s`` seconds from now, unless a run of it already waits in the
    queue; return True if one was queued. A periodic task that queues its own next run this way never has two
    runs waiting, however often it is started."""
    if tasks_waiting(task).exists():
        return False
    task.using(run_after=timezone.now() + timedelta(seconds=after_s)).enqueue(**kwargs)
    return True
