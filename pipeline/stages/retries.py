"""What a new attempt of a stage changes, and the one retry LawDesk makes on its own (the runner and the job
controls both build on this module, so neither imports the other).

A stage whose answer could not be used (degenerate, the prompt coming back, placeholders, empty:
:func:`pipeline.stages.results.answer_unusable`) brings the same answer back when asked again the same way, so a
retry changes the sampling (:func:`retry_plan`). The embedded model loops on most sections of a motion at the
default budget and writes them on a shorter, resampled retry; an attorney who started a motion had to come back
and press "Run the stage again" once per section. So after such a failure the runner queues up to
``LAWDESK_STAGE_AUTO_RETRIES`` (default 1) new attempts of that stage (of that section) itself
(:func:`automatic_retry`); a failure for any other reason (a server down past its waits, a broken schema twice,
an internal error) and a failure after them wait for the attorney as before.
"""

from django.conf import settings

from matters.audit.services import audit_record

from ..job_models import Job, StageRun, StageStatus
from .degenerate import retry_change
from .registry import REGISTRY
from .results import answer_unusable
from .scheduling import stage_queue


def retry_plan(last: StageRun) -> dict:
    """What a new attempt after ``last`` changes in its server's sampling: after an unusable answer (degenerate,
    the prompt coming back, placeholders), a new seed and a higher repeat penalty
    (:func:`pipeline.stages.degenerate.retry_change`), since the same request brings the same answer back; after
    any other end (a server down, a cancel, a lost worker), what ``last`` itself had changed, so a retry that was
    interrupted keeps its settings. {} when nothing changes."""
    if last.status == StageStatus.FAILED and answer_unusable(last.error):
        stage = REGISTRY.get(last.stage)
        return retry_change(last.error, last.sampling or {}, shorten=stage is not None and stage.retry_shortens)
    return last.retry_change or {}


def automatic_retry(run: StageRun, *, enqueue: bool) -> StageRun | None:
    """After ``run`` failed with an unusable answer, queue a new attempt of its stage and section with the changes
    of :func:`retry_plan`, marked ``"automatic": True`` in its ``retry_change`` (its note reads "Retried
    automatically with ...") and audited as ``job.retry`` with no user; None, queuing nothing, when ``run`` failed
    otherwise, its job was cancelled, or its stage and section already had ``LAWDESK_STAGE_AUTO_RETRIES``
    automatic attempts. Call inside the transaction that records ``run``'s end."""
    if run.status != StageStatus.FAILED or not answer_unusable(run.error):
        return None
    job = Job.objects.select_related("matter").get(pk=run.job_id)
    if job.cancel_requested:
        return None
    attempts = StageRun.objects.filter(job=job, stage=run.stage, section=run.section).values_list(
        "retry_change", flat=True)
    if sum(bool((change or {}).get("automatic")) for change in attempts) >= settings.LAWDESK_STAGE_AUTO_RETRIES:
        return None
    change = retry_plan(run)
    change = {**change, "automatic": True,
              "note": change["note"].replace("Retried with", "Retried automatically with", 1)}
    retry = stage_queue(job, run.stage, order=run.order, attempt=run.attempt + 1, section=run.section,
                        enqueue=enqueue, retry_change=change)
    audit_record(action="job.retry", matter=job.matter, obj=job,
                 detail={"stage": run.stage, "attempt": retry.attempt, "automatic": True,
                         "sampling_change": change["sampling"]})
    return retry
