"""The order of the stage runs waiting for a model server: the rule itself, on plain values, so the queue
(:mod:`pipeline.stages.queue`) and the schedule bench (``bench/schedule.py``) sort by the same code.

The rule (docs/jobs.md, "The queue"):

1. A job an attorney moved to the front goes ahead of every other; of two moved, the one moved last goes first.
2. A job that has waited longer than the aging limit (``LAWDESK_QUEUE_AGING_S``, counted from its submission) goes
   ahead of every job that has not, oldest first: no job waits behind newer work for more than the limit plus the
   work of the jobs submitted before it, so none is starved by a stream of jobs with earlier deadlines.
3. Every other job: by its due time (``Job.due_at``, the filing deadline; a job without one comes after every job
   with one), then by submission.

Within one job, an earlier stage comes first (a job's stages run one after another, so two of one job rarely
wait together). Ties end on the job's id, so the order is total and the same in every worker.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

FRONT, AGED, BY_DUE = 0, 1, 2


@dataclass(frozen=True)
class Waiting:
    """One stage run waiting for its server. ``submitted_at``: when its job was started; ``due_at``: the job's
    deadline or None; ``front_at``: when the job was moved to the front, or None; ``job``: the job's id;
    ``step``: the stage's place in its job (``StageRun.order``). ``ref`` is the caller's own handle (a StageRun
    id; the bench's request) and takes no part in the order. Datetimes are aware."""

    submitted_at: datetime
    job: int
    due_at: datetime | None = None
    front_at: datetime | None = None
    step: int = 0
    ref: object = None


def is_aged(entry: Waiting, *, now: datetime, aging_s: float) -> bool:
    """Whether the entry's job has waited longer than ``aging_s`` seconds since its submission."""
    return (now - entry.submitted_at).total_seconds() > aging_s


def queue_key(entry: Waiting, *, now: datetime, aging_s: float) -> tuple:
    """The sort key of ``entry`` under the rule of this module's docstring (smaller goes first): a tuple of the
    tier (:data:`FRONT`, :data:`AGED`, :data:`BY_DUE`) and seconds since the epoch."""
    submitted = entry.submitted_at.timestamp()
    if entry.front_at is not None:
        return (FRONT, -entry.front_at.timestamp(), submitted, entry.job, entry.step)
    if is_aged(entry, now=now, aging_s=aging_s):
        return (AGED, submitted, submitted, entry.job, entry.step)
    due = entry.due_at.timestamp() if entry.due_at is not None else math.inf
    return (BY_DUE, due, submitted, entry.job, entry.step)


def in_queue_order(entries: Iterable[Waiting], *, now: datetime, aging_s: float) -> list[Waiting]:
    """``entries`` sorted first to last by :func:`queue_key`."""
    return sorted(entries, key=lambda entry: queue_key(entry, now=now, aging_s=aging_s))
