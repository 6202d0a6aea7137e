"""Live notices for the job page. The page's consumer reads persisted state (no Redis needed: the worker saves
streamed text every ~100 ms); with a channel layer (``REDIS_URL``) the worker also pushes each new piece of text
and each status change, so pages on any host see tokens as they are generated."""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


def job_group(job_id: int) -> str:
    return f"job-{job_id}"


def _send(job_id: int, message: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(job_group(job_id), message)
    except Exception:  # a missed live notice is caught up by the page's next read of the database
        pass


def stage_text(run, delta: str, offset: int) -> None:
    """A piece of streamed text of ``run`` (a StageRun) that starts at character ``offset`` of its output."""
    if delta:
        _send(run.job_id, {"type": "stage.text", "run": run.pk, "delta": delta, "offset": offset})


def job_changed(job) -> None:
    """A stage of ``job`` changed status."""
    _send(job.pk, {"type": "job.changed"})
