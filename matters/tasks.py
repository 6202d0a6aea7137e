"""Background tasks. Thin: each calls a service with ids (Django Tasks takes JSON arguments).

This module imports nothing of the app at module level: each task imports its service in its body, so a service
can import its task at the top and enqueue it on commit. The dotted paths of these functions
(``matters.tasks.ingest_exhibit``) are stored with every queued task in the database; keep them.
"""

from django_tasks import task


@task(queue_name="documents")
def ingest_exhibit(exhibit_id: int) -> str:
    """Process one uploaded exhibit on the ``documents`` queue; return its final status."""
    from matters.exhibits.processing import exhibit_process

    return exhibit_process(exhibit_id=exhibit_id).status


@task(queue_name="documents", priority=-10)
def render_previews(exhibit_id: int) -> bool:
    """Make page images of a ready exhibit on the ``documents`` queue, after any waiting text extraction."""
    from matters.exhibits.processing import exhibit_render_previews

    return exhibit_render_previews(exhibit_id=exhibit_id)


@task(queue_name="documents")
def run_production(production_id: int) -> str:
    """Stamp and pack one production on the ``documents`` queue; return its final status."""
    from matters.productions.stamping import production_run

    return production_run(production_id=production_id).status


@task(queue_name="documents")
def run_import(incoming_id: int) -> str:
    """Import a confirmed incoming production on the ``documents`` queue; return its final status."""
    from matters.incoming.services import import_confirmed

    return import_confirmed(incoming_id=incoming_id).status


@task(queue_name="documents", priority=10)
def watch_lease(kind: str, pk: int) -> str:
    """Take over an exhibit (``kind`` "exhibit"), production ("production") or import ("import") whose worker
    stopped renewing its lease; look again later while it is live. Runs ahead of waiting files, so a takeover is
    never queued behind them."""
    from matters.recovery import lease_watch

    return lease_watch(kind, pk)


@task(queue_name="documents", priority=10)
def sweep_documents(interval_s: float = 0) -> dict[str, list[int]]:
    """Take back every piece of documents-queue work whose worker stopped, or that waits with no task to run it
    (:func:`matters.recovery.documents_recover`); with ``interval_s``, queue the next sweep that many seconds
    later. Returns the ids taken back by kind."""
    from matters.recovery import documents_recover, documents_sweep_schedule

    taken = documents_recover()
    if interval_s:
        documents_sweep_schedule(interval_s=interval_s)
    return taken
