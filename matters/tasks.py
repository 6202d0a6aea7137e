"""Background tasks. Thin: each calls a service with ids (Django Tasks takes JSON arguments)."""

from django_tasks import task

from .processing import exhibit_process, exhibit_render_previews


@task(queue_name="documents")
def ingest_exhibit(exhibit_id: int) -> str:
    """Process one uploaded exhibit on the ``documents`` queue; return its final status."""
    return exhibit_process(exhibit_id=exhibit_id).status


@task(queue_name="documents", priority=-10)
def render_previews(exhibit_id: int) -> bool:
    """Make page images of a ready exhibit on the ``documents`` queue, after any waiting text extraction."""
    return exhibit_render_previews(exhibit_id=exhibit_id)


@task(queue_name="documents")
def run_production(production_id: int) -> str:
    """Stamp and pack one production on the ``documents`` queue; return its final status."""
    from .productions import production_run

    return production_run(production_id=production_id).status


@task(queue_name="documents")
def run_import(incoming_id: int) -> str:
    """Import a confirmed incoming production on the ``documents`` queue; return its final status."""
    from .imports import import_confirmed

    return import_confirmed(incoming_id=incoming_id).status


@task(queue_name="documents", priority=10)
def watch_lease(kind: str, pk: int) -> str:
    """Take over an exhibit (``kind`` "exhibit") or production ("production") whose worker stopped renewing its
    lease; look again later while it is live. Runs ahead of waiting files, so a takeover is never queued behind them."""
    from .recovery import lease_watch

    return lease_watch(kind, pk)
