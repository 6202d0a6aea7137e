"""``manage.py db_worker``: django-tasks-db's worker, which also outlives the database going away for a while.

The library's worker exits on the first database error that is not SQLite's "database is locked": a PostgreSQL
restart (or a network cut between a worker host and the database) would stop every worker for good. This one
closes its connections, waits (1 s, doubling up to ``MAX_BACKOFF_S``) and starts polling again, so it reconnects
as soon as the database answers. A task that was running when the database went away stays as it was in the
queue; the documents and stage leases (:mod:`matters.leases`) put its work back once the lease expires.
"""

import logging
import time

from django.db import InterfaceError, OperationalError, connections
from django_tasks_db.management.commands import db_worker

logger = logging.getLogger("django_tasks_db")

MAX_BACKOFF_S = 30.0


class ReconnectingWorker(db_worker.Worker):
    """A :class:`django_tasks_db` worker whose polling loop survives a lost or refused database connection."""

    def run(self) -> None:
        backoff_s = 1.0
        while self.running:
            started = time.monotonic()
            try:
                return super().run()
            except (OperationalError, InterfaceError) as error:
                if not self.running:
                    raise
                if time.monotonic() - started > MAX_BACKOFF_S:
                    backoff_s = 1.0  # it worked for a while: this is a new outage
                logger.warning("The database did not answer (%s); trying again in %.0f s.", error, backoff_s)
                connections.close_all()
                time.sleep(backoff_s)
                backoff_s = min(backoff_s * 2, MAX_BACKOFF_S)
                self.startup_delay = False


class Command(db_worker.Command):
    help = db_worker.Command.help + ", reconnecting when the database goes away"

    def handle(self, *args, **options) -> None:
        original, db_worker.Worker = db_worker.Worker, ReconnectingWorker
        try:
            super().handle(*args, **options)
        finally:
            db_worker.Worker = original
