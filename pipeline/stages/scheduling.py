"""Where and when a stage attempt runs: the worker queue, the lease and wait constants, queueing an attempt, and
the watch that recovers it when its worker dies.

The runner (which queues the next stage and watches the attempt it claims) and job control (which starts, retries
and recovers stages) both build on this module, so neither imports the other. Tasks are enqueued when the
surrounding transaction commits, so a worker never looks for a StageRun that is not written yet.
"""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from pipeline.tasks import run_stage as run_stage_task
from pipeline.tasks import watch_stage as watch_stage_task

from ..job_models import Job, StageRun, StageStatus
from . import live
from .specs import STAGES

# The queue of job stages and model-server probes (settings.TASKS; ``make run`` starts LAWDESK_MODEL_WORKERS
# workers on it). pipeline.tasks names it too: a tasks module imports nothing of its app.
MODELS_QUEUE = "models"

# Seconds an attempt's lease lasts; its worker renews it every third of that (settings.LAWDESK_STAGE_LEASE_S).
LEASE_S: float = settings.LAWDESK_STAGE_LEASE_S
# A server that is down or loading: the first wait in seconds, doubling, and how many waits before ``failed``.
BACKOFF_S: float = settings.LAWDESK_STAGE_BACKOFF_S
MAX_WAITS: int = settings.LAWDESK_STAGE_MAX_WAITS
# Seconds a request may go without a byte from its server before it counts as stalled.
READ_TIMEOUT_S: float = settings.LAWDESK_STAGE_READ_TIMEOUT_S
# The watch looks at a lease half a lease after it would have gone stale, so a live worker has renewed it by then.
WATCH_AFTER_LEASES = 1.5


def stage_queue(job: Job, stage: str, *, order: int, attempt: int = 1, section: str = "", enqueue: bool = True,
                retry_change: dict | None = None) -> StageRun:
    """Create a queued attempt of ``stage`` (a key of :data:`pipeline.stages.specs.STAGES`; KeyError otherwise)
    for ``job`` (of the plan's ``section``, for a stage run per section) and, with ``enqueue``, queue its task when
    the transaction commits. ``retry_change``: what this attempt changes in its server's sampling
    (:func:`pipeline.stages.degenerate.retry_change`). Returns the attempt."""
    spec = STAGES[stage]
    run = StageRun.objects.create(job=job, stage=stage, section=section, role=spec.role or "", order=order,
                                  attempt=attempt, retry_change=retry_change or {})
    Job.objects.filter(pk=job.pk).update(status=StageStatus.QUEUED, reason="", finished_at=None)
    if enqueue:
        transaction.on_commit(lambda: run_stage_task.enqueue(run.pk))
    live.job_changed(job)
    return run


def stage_run_later(run: StageRun, *, delay_s: float) -> None:
    """Queue ``run`` (waiting for its server) to be tried again ``delay_s`` seconds after the transaction commits."""
    transaction.on_commit(lambda: run_stage_task.using(
        run_after=timezone.now() + timedelta(seconds=delay_s)).enqueue(run.pk))


def stage_watch_schedule(run: StageRun) -> None:
    """Queue a check of ``run``'s lease for when it would have gone stale, so any worker recovers it if its own
    worker dies."""
    transaction.on_commit(lambda: watch_stage_task.using(
        run_after=timezone.now() + timedelta(seconds=LEASE_S * WATCH_AFTER_LEASES)).enqueue(run.pk))
