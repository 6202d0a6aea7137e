"""Background tasks of the pipeline, on the ``models`` queue. Thin: each calls a service with ids (Django Tasks
takes JSON arguments).

The rule for tasks: this module imports nothing of its app at module level and imports the service inside the
task body, since services import their task here at the top to enqueue it on commit. Queued tasks are stored by
dotted path (``pipeline.tasks.run_stage``), so these names stay.
"""

import logging

from django_tasks import task

# pipeline.stages.scheduling.MODELS_QUEUE, written out by the rule above.
_QUEUE = "models"
# The periodic probe has a queue and a worker of its own: on ``models`` it waited behind whatever stage the model
# workers ran (a 15-minute draft), and the page said "not probed". It needs no model worker: with every slot busy
# it checks health and skips the speed measure (pipeline.topology.probe).
PROBES_QUEUE = "probes"

logger = logging.getLogger(__name__)


@task(queue_name=PROBES_QUEUE)
def probe_servers(interval_s: int = 0) -> list[dict]:
    """Probe every enabled server and record the results; with ``interval_s``, queue the next run that many
    seconds later (unless one is already queued). Returns the topology_probe lines."""
    from pipeline.retrieval.embedding import embedding_schedule
    from pipeline.topology.probe import probe_line, probe_schedule, servers_probe

    lines = [probe_line(result) for result in servers_probe()]
    # The probe's period is the embedding sweep's too: pages made ready since the last one get their vectors.
    embedding_schedule()
    if interval_s:
        probe_schedule(interval_s=interval_s)
    return lines


@task(queue_name=_QUEUE)
def run_stage(run_id: int) -> dict | None:
    """Run one stage attempt: the first in the queue's order whose server has a slot free, which is ``run_id`` (a
    StageRun id) when it comes first (pipeline.stages.runner.stage_dispatch). Returns the run_job line of the
    attempt run, whose ``status`` is the stage's; None when nothing was waiting."""
    from pipeline.stages.runner import stage_dispatch

    run = stage_dispatch(run_id)
    if run is None:
        return None
    # Django Tasks logs this task "state=SUCCESSFUL" whenever it returns, a failed stage included (the task did its
    # work: it recorded the failure). This line, just before, names the stage's own status.
    logger.info("Stage attempt id=%s job=%s stage=%s attempt=%s status=%s", run.pk, run.job_id, run.stage,
                run.attempt, run.status)
    return run.as_json()


@task(queue_name=_QUEUE)
def watch_stage(run_id: int) -> str:
    """Recover a stage attempt whose worker stopped renewing its lease; look again later while it is live.
    Returns "settled", "recovered" or "live"."""
    from pipeline.stages.control import stage_watch

    return stage_watch(run_id=run_id)


@task(queue_name="documents", priority=-20)
def embed_matter(matter_id: int) -> int:
    """Embed a matter's pages still missing their vectors (on the ``documents`` queue, after ingest and previews);
    returns how many pages were embedded."""
    from pipeline.retrieval.embedding import matter_embed

    return matter_embed(matter_id=matter_id)


@task(queue_name="documents", priority=-20)
def sweep_embeddings(interval_s: int = 0) -> int:
    """Queue the embedding of every matter with pages still missing their vectors; with ``interval_s``, queue the
    next sweep that many seconds later. Returns how many matters were queued."""
    from pipeline.retrieval.embedding import embedding_schedule, embedding_sweep_schedule

    queued = embedding_schedule()
    if interval_s:
        embedding_sweep_schedule(interval_s=interval_s)
    return queued


# Below the stages of jobs: an attorney waiting on a draft comes before the background digests.
@task(queue_name=_QUEUE, priority=-10)
def digest_exhibit(exhibit_id: int) -> str | None:
    """Make the digest of one exhibit (the summarizer role); returns the digest's status."""
    from pipeline.digests.services import digest_make

    row = digest_make(exhibit_id=exhibit_id)
    return row.status if row is not None else None


@task(queue_name="documents", priority=-20)
def sweep_digests(interval_s: int = 0) -> int:
    """Queue the digest of every ready evidence exhibit without one; with ``interval_s``, queue the next sweep
    that many seconds later. Returns how many digests were queued."""
    from pipeline.digests.services import digests_schedule, digests_sweep_schedule

    queued = digests_schedule()
    if interval_s:
        digests_sweep_schedule(interval_s=interval_s)
    return queued
