"""Background tasks of the pipeline, on the ``models`` queue. Thin: each calls a service with ids (Django Tasks
takes JSON arguments)."""

import os
from datetime import timedelta

from django.utils import timezone
from django_tasks import task

# How often the periodic probe runs, in seconds.
PROBE_INTERVAL_S = int(os.environ.get("LAWDESK_PROBE_INTERVAL_S", "300"))


@task(queue_name="models")
def probe_servers(interval_s: int = 0) -> list[dict]:
    """Probe every enabled server and record the results; with ``interval_s``, queue the next run that many
    seconds later (unless one is already queued). Returns the topology_probe lines."""
    from .topology.probe import probe_line, servers_probe

    lines = [probe_line(result) for result in servers_probe()]
    if interval_s:
        probe_schedule(interval_s=interval_s)
    return lines


def probe_schedule(*, interval_s: int = PROBE_INTERVAL_S) -> bool:
    """Queue the periodic probe to run ``interval_s`` seconds from now, unless a run is already waiting in the
    queue; return True if one was queued. The task queues its own next run, so one call starts the cycle."""
    from django_tasks_db.models import DBTaskResult

    waiting = DBTaskResult.objects.filter(task_path=probe_servers.module_path, status="READY").exists()
    if waiting:
        return False
    probe_servers.using(run_after=timezone.now() + timedelta(seconds=interval_s)).enqueue(interval_s=interval_s)
    return True


@task(queue_name="models")
def run_stage(run_id: int) -> dict | None:
    """Run one stage attempt (a StageRun id); returns its run_job line."""
    from .stages.runner import stage_execute

    run = stage_execute(run_id)
    return run.as_json() if run is not None else None


@task(queue_name="models")
def watch_stage(run_id: int) -> str:
    """Recover a stage attempt whose worker stopped renewing its lease; look again later while it is live."""
    from .job_models import StageRun, StageStatus
    from .stages.control import stage_recover, stage_watch_schedule

    run = StageRun.objects.filter(pk=run_id).first()
    if run is None or run.status != StageStatus.RUNNING:
        return "settled"
    if stage_recover(run_id=run_id):
        return "recovered"
    stage_watch_schedule(run)
    return "live"
