"""Writes on jobs: start one, cancel it, retry a stage, continue past the gate, move it to the front of the
queue, recover interrupted stages.

Every action is recorded in the matter's audit chain. Permissions (:mod:`matters.permissions`): starting,
cancelling, retrying and moving to the front are ``start_jobs`` (attorneys and assistants of the matter);
continuing past a gate that found no grounds is an attorney's decision (``approve_draft``) with a written reason.
"""

import datetime as dt
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from matters.audit.services import audit_record
from matters.models import Deadline, Exhibit, Matter
from matters.permissions import may, require
from matters.selectors import evidence_exhibits
from matters.validation import clean_reason

from ..job_models import Job, JobKind, StageRun, StageStatus
from .kinds import Stage
from .registry import REGISTRY
from .retries import retry_plan
from .scheduling import stage_queue, stage_watch_schedule
from .specs import plan_for


def job_start(*, matter: Matter, instructions: str, kind: str = "", exhibits: list[int] | None = None,
              user=None, enqueue: bool = True, deadline: Deadline | None = None,
              due_at: dt.datetime | None = None) -> Job:
    """Start a job: its first stage is queued for a worker (the router when ``kind`` is blank). ``exhibits``
    restricts the evidence to those exhibit ids of the matter. Its due time (``Job.due_at``, by which the queue
    orders waiting stages) is the ``deadline``'s, one of the matter's saved deadlines, or ``due_at`` as entered
    (a naive time is read in the court's time zone, ``TIME_ZONE``); neither: no due time. Raises ValidationError
    for empty instructions, an unknown kind, exhibits that are not the matter's evidence, a deadline of another
    matter or both a deadline and a due time (keyed ``deadline``), a due time already passed (``due_at``);
    PermissionDenied for a user who may not."""
    require(user, "start_jobs", matter)
    due_at = _due_at(matter, deadline, due_at)
    instructions = (instructions or "").strip()
    if not instructions:
        raise ValidationError("Say in plain words what the job should do.")
    if kind and kind not in JobKind.values:
        raise ValidationError(f"Unknown job kind {kind!r}; choose motion, summary or extraction.")
    if due_at is not None and due_at <= timezone.now():
        # A deadline in the past would put the job ahead of every other: most likely a mistyped date.
        raise ValidationError({"due_at": f"The due time {due_at:%Y-%m-%d %H:%M} has already passed; give the "
                                         "filing deadline still ahead."})
    chosen = sorted({int(e) for e in exhibits or []})
    if chosen:
        # An id past the key's range names no exhibit; sent to the database it would overflow the query.
        low, high = connection.ops.integer_field_range(Exhibit._meta.pk.get_internal_type())
        possible = [e for e in chosen if (low is None or e >= low) and (high is None or e <= high)]
        evidence = set(evidence_exhibits(matter).filter(pk__in=possible).values_list("pk", flat=True))
        if missing := [e for e in chosen if e not in evidence]:
            raise ValidationError(f"Exhibit id(s) {missing} are not ready evidence of this matter.")
    with transaction.atomic():
        job = Job.objects.create(matter=matter, kind=kind, instructions=instructions, exhibits=chosen,
                                 created_by=user, due_at=due_at)
        stage_queue(job, plan_for(kind)[0], order=1, enqueue=enqueue)
        detail = {"kind": kind, "instructions": instructions, "exhibits": chosen}
        if due_at is not None:
            detail["due_at"] = due_at.isoformat()
            if deadline is not None:
                detail["deadline"] = deadline.pk
        audit_record(action="job.start", actor=user, matter=matter, obj=job, detail=detail)
    return job


def _due_at(matter: Matter, deadline: Deadline | None, due_at: dt.datetime | None) -> dt.datetime | None:
    """The job's due time from a saved deadline of ``matter`` or as entered (see :func:`job_start`)."""
    if deadline is not None and due_at is not None:
        raise ValidationError({"deadline": "Choose a saved deadline or enter a due time, not both."})
    if deadline is not None:
        if deadline.matter_id != matter.pk:
            raise ValidationError({"deadline": "That deadline is not one of this matter's."})
        return deadline.due_at
    if due_at is not None and timezone.is_naive(due_at):
        return timezone.make_aware(due_at, ZoneInfo(settings.TIME_ZONE))
    return due_at


def _has_work(job: Job) -> bool:
    """Whether ``job`` has a stage queued, waiting for its server or running (it has not ended)."""
    return StageRun.objects.filter(job=job, status__in=[StageStatus.QUEUED, StageStatus.WAITING_FOR_SERVER,
                                                        StageStatus.RUNNING]).exists()


def job_cancel(*, job: Job, user=None) -> Job:
    """Ask the job to stop: queued or waiting stages are cancelled now; a running stage stops between two tokens
    (its heartbeat sees the flag and closes the stream). Raises ValidationError for a job with no stage queued,
    waiting or running: one that has ended keeps its status (a done job is not made ``cancelled``)."""
    require(user, "start_jobs", job.matter)
    with transaction.atomic():
        if not _has_work(job):
            job.refresh_from_db()
            raise ValidationError(f"This job is {job.get_status_display().lower()}: it has no stage queued, waiting or "
                                  "running, so there is nothing to cancel.")
        Job.objects.filter(pk=job.pk).update(cancel_requested=True)
        StageRun.objects.filter(job=job, status__in=[StageStatus.QUEUED, StageStatus.WAITING_FOR_SERVER]).update(
            status=StageStatus.CANCELLED, error="Cancelled by a user.", finished_at=timezone.now())
        if not StageRun.objects.filter(job=job, status=StageStatus.RUNNING).exists():
            Job.objects.filter(pk=job.pk).update(status=StageStatus.CANCELLED, finished_at=timezone.now())
        audit_record(action="job.cancel", actor=user, matter=job.matter, obj=job)
    job.refresh_from_db()
    return job


def _latest(job: Job) -> StageRun:
    return job.stage_runs.order_by("-order", "-attempt").first()


# The ends of an attempt after which its stage may be run again (a new attempt).
RETRYABLE = (StageStatus.FAILED, StageStatus.CANCELLED, StageStatus.INTERRUPTED)


def _stopped_by(job: Job, last: StageRun | None) -> Stage | None:
    """The stage object that stopped the job at ``last`` (its latest attempt) when an attorney may continue past
    it (:attr:`Stage.continuable`, with a stage after it); None otherwise."""
    # A stage no longer in the registry (a record from an older plan) offers nothing, and the job page still shows.
    stage = REGISTRY.get(last.stage) if last is not None and last.status == StageStatus.STOPPED else None
    return stage if stage is not None and stage.continuable and stage.following(job) is not None else None


def _skippable(job: Job, last: StageRun | None) -> Stage | None:
    """The stage object of ``last`` (the job's latest attempt) when it failed and an attorney may go on without
    it (:attr:`Stage.skippable`: the job has a draft it would only have improved, and a stage after it); None
    otherwise."""
    stage = REGISTRY.get(last.stage) if last is not None and last.status == StageStatus.FAILED else None
    return stage if stage is not None and stage.may_skip(job, last) else None


@dataclass(frozen=True)
class JobActions:
    """What a job offers a user now; the job page and its live updates show these and nothing else, and the
    services below refuse the same cases. ``retry``: run its last stage again (``retry_change``: what that retry
    changes, :func:`retry_plan`); ``cancel`` and ``front``: it has work queued, waiting or running;
    ``continue_label``: the stopping stage's words (:attr:`Stage.stopped_label`) when the user may continue the
    job past it, '' otherwise; ``skip_label``: the failed stage's offer (:attr:`Stage.skip_label`) when the user
    may go on without it (:func:`stage_skip`), '' otherwise."""

    retry: bool = False
    retry_change: dict = field(default_factory=dict)
    cancel: bool = False
    front: bool = False
    continue_label: str = ""
    skip_label: str = ""

    @property
    def any(self) -> bool:
        return self.retry or self.cancel or self.front or bool(self.continue_label) or bool(self.skip_label)


def job_actions(job: Job, user) -> JobActions:
    """The actions ``user`` may take on ``job`` now: the rules of :func:`stage_retry`, :func:`job_cancel`,
    :func:`job_move_to_front` and :func:`job_continue`, with their permissions (:mod:`matters.permissions`)."""
    last = _latest(job)
    controls = may(user, "start_jobs", job.matter)
    working = controls and _has_work(job)
    retry = controls and last is not None and last.status in RETRYABLE
    approves = may(user, "approve_draft", job.matter)
    stopped = _stopped_by(job, last) if approves else None
    skippable = _skippable(job, last) if approves else None
    return JobActions(retry=retry, retry_change=retry_plan(last) if retry else {}, cancel=working, front=working,
                      continue_label=stopped.stopped_label if stopped is not None else "",
                      skip_label=skippable.skip_label if skippable is not None else "")


def stage_retry(*, job: Job, user=None, enqueue: bool = True) -> StageRun:
    """Run the job's last stage again, as a new attempt, after it failed, was cancelled or interrupted, with the
    sampling changes of :func:`retry_plan` (recorded on the attempt and in the audit entry)."""
    require(user, "start_jobs", job.matter)
    last = _latest(job)
    if last is None or last.status not in RETRYABLE:
        raise ValidationError("Only a failed, cancelled or interrupted stage can be run again.")
    change = retry_plan(last)
    with transaction.atomic():
        Job.objects.filter(pk=job.pk).update(cancel_requested=False)
        run = stage_queue(job, last.stage, order=last.order, attempt=last.attempt + 1, section=last.section,
                          enqueue=enqueue, retry_change=change)
        detail = {"stage": last.stage, "attempt": run.attempt}
        if change:
            detail["sampling_change"] = change["sampling"]
        audit_record(action="job.retry", actor=user, matter=job.matter, obj=job, detail=detail)
    return run


def job_continue(*, job: Job, user, reason: str, enqueue: bool = True) -> StageRun:
    """Go on past a gate that found no grounds, on an attorney's written reason (recorded)."""
    require(user, "approve_draft", job.matter)
    reason = clean_reason(reason, what="why the job should go on")
    last = _latest(job)
    stopped = _stopped_by(job, last)
    if stopped is None:
        raise ValidationError("Only a job stopped by its gate can be continued.")
    with transaction.atomic():
        Job.objects.filter(pk=job.pk).update(gate_override_reason=reason, gate_override_by=user)
        run = stage_queue(job, stopped.following(job), order=last.order + 1, enqueue=enqueue)
        audit_record(action="job.gate_override", actor=user, matter=job.matter, obj=job,
                     detail={"reason": reason, "gate_reasons": last.reason})
    return run


def stage_skip(*, job: Job, user, reason: str, enqueue: bool = True) -> StageRun:
    """Go on without the job's failed last stage (:func:`_skippable`: a revision whose every attempt looped, the
    draft before it standing; or a section the drafter could not write, left as a marked gap), on an attorney's
    written reason: a new attempt of that stage is recorded ``done`` with no model request and the reason, the
    stage records what going on leaves (:meth:`Stage.skip`), and what follows is queued (the next section, or
    the verifier, which then checks the draft as it stands). Returns the queued stage run. Raises ValidationError
    when the last stage cannot be gone on without or the reason is empty; PermissionDenied for a user who may not
    approve drafts."""
    require(user, "approve_draft", job.matter)
    reason = clean_reason(reason, what="why the job should go on without this stage")
    with transaction.atomic():
        last = _latest(job)
        stage = _skippable(job, last)
        if stage is None:
            raise ValidationError("Only a failed revision of a job that has a draft, or a failed section, can be "
                                  "gone on without.")
        by = user.get_full_name().strip() or user.get_username()
        skipped = StageRun.objects.create(
            job=job, stage=last.stage, section=last.section, role=last.role, order=last.order,
            attempt=last.attempt + 1, status=StageStatus.DONE, finished_at=timezone.now(),
            reason=f"Not run: {by} went on without it after attempt {last.attempt} failed, because: {reason}")
        stage.skip(skipped, by)
        following, section = stage.next_run(job, skipped)
        run = stage_queue(job, following, order=last.order + 1, section=section, enqueue=enqueue)
        audit_record(action="job.skip_stage", actor=user, matter=job.matter, obj=job,
                     detail={"stage": last.stage, "failed_attempt": last.attempt, "reason": reason,
                             "error": last.error})
    return run


def job_move_to_front(*, job: Job, user=None, reason: str) -> Job:
    """Put ``job`` ahead of every other job in the queue of stage runs (pipeline.stages.order, rule 1): its
    waiting stages, and every stage it queues later, go to a server before any other job's, the job moved last
    first. ``reason`` is written to the audit entry. Raises ValidationError for a job with nothing waiting or
    running (it has ended) or an empty reason; PermissionDenied for a user who may not control jobs."""
    require(user, "start_jobs", job.matter)
    reason = clean_reason(reason, what="why this job should go first")
    with transaction.atomic():
        if not _has_work(job):
            job.refresh_from_db()
            raise ValidationError(f"This job is {job.get_status_display().lower()}: it has no stage queued, "
                                  "waiting or running, so there is no queue to move it in.")
        now = timezone.now()
        Job.objects.filter(pk=job.pk).update(front_at=now, front_by=user)
        audit_record(action="job.front", actor=user, matter=job.matter, obj=job,
                     detail={"reason": reason, "due_at": job.due_at.isoformat() if job.due_at else None})
    job.refresh_from_db()
    return job


def stage_recover(*, run_id: int | None = None, enqueue: bool = True) -> list[StageRun]:
    """Mark running attempts whose lease has gone stale (their worker died, on any host) ``interrupted`` and
    queue a new attempt of each; a live attempt is never touched. ``run_id`` limits it to one attempt.
    Returns the new attempts."""
    stale = StageRun.objects.filter(status=StageStatus.RUNNING, lease_expires_at__lt=timezone.now())
    if run_id is not None:
        stale = stale.filter(pk=run_id)
    new = []
    for run in stale.select_related("job"):
        with transaction.atomic():
            took = StageRun.objects.filter(pk=run.pk, status=StageStatus.RUNNING,
                                           lease_expires_at__lt=timezone.now()).update(
                status=StageStatus.INTERRUPTED, finished_at=timezone.now(),
                error=f"Its worker ({run.lease_owner}) stopped renewing its lease; the stage was run again.")
            if not took:
                continue
            if run.job.cancel_requested:
                Job.objects.filter(pk=run.job_id).update(status=StageStatus.CANCELLED, finished_at=timezone.now())
                continue
            new.append(stage_queue(run.job, run.stage, order=run.order, attempt=run.attempt + 1,
                                   section=run.section, enqueue=enqueue, retry_change=run.retry_change))
            audit_record(action="stage.interrupted", matter=run.job.matter, obj=run.job,
                         detail={"stage": run.stage, "attempt": run.attempt, "worker": run.lease_owner})
    return new


def stage_watch(*, run_id: int) -> str:
    """Look at the lease of attempt ``run_id``: "settled" when it is gone or no longer running, "recovered" when
    its lease had gone stale and a new attempt was queued, else "live", with the next look queued."""
    run = StageRun.objects.filter(pk=run_id).first()
    if run is None or run.status != StageStatus.RUNNING:
        return "settled"
    if stage_recover(run_id=run_id):
        return "recovered"
    stage_watch_schedule(run)
    return "live"
