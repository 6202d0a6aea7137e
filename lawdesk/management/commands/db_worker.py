"""``manage.py db_worker``: django-tasks-db's worker, which also outlives the database going away for a while.

The library's worker exits on the first database error that is not SQLite's "database is locked": a PostgreSQL
restart (or a network cut between a worker host and the database) would stop every worker for good. This one
closes its connections, waits (1 s, doubling up to ``MAX_BACKOFF_S``) and starts polling again, so it reconnects
as soon as the database answers. A task that was running when the database went away stays as it was in the
queue; the documents and stage leases (:mod:`matters.leases`) put its work back once the lease expires.

It also stops quietly. ``make run``'s Ctrl-C reaches every process of the terminal's group (SIGINT), and
:mod:`lawdesk.run` then sends each worker SIGTERM: the library took that second signal for "press Ctrl+C again to
force" and raised ``SystemExit`` wherever the worker was, inside an ``atexit`` callback or inside a task, which it
then recorded as ``FAILED`` with a traceback on the terminal. Here a stop while idle leaves at once and ignores
any later signal; a stop during a task ends the process on the spot, as a kill would, so the task is neither
marked failed nor finished halfway through Python's unwinding: its lease runs out and the next worker takes the
work over (:func:`pipeline.stages.control.stage_recover`, :mod:`matters.recovery`).
"""

import logging
import os
import signal
import sys
import time
from types import FrameType

from django.db import InterfaceError, OperationalError, connections
from django_tasks_db.management.commands import db_worker

logger = logging.getLogger("django_tasks_db")

MAX_BACKOFF_S = 30.0


class ReconnectingWorker(db_worker.Worker):
    """A :class:`django_tasks_db` worker whose polling loop survives a lost or refused database connection, and
    which stops on SIGINT, SIGTERM or SIGQUIT without a traceback and without marking the task it ran failed."""

    def shutdown(self, signum: int, frame: FrameType | None) -> None:
        """Stop for signal ``signum``: at once when no task runs, by ending the process when one does (its lease
        then expires and the work is taken over). A signal after the first is ignored: the worker is leaving
        already, perhaps inside an ``atexit`` callback (the ingest pool's), where an exit would print a traceback."""
        if self.running_task:
            logger.info("Received %s during a task - leaving it to its lease.", signal.strsignal(signum))
            _flush_logs()
            # os._exit, not SystemExit: the library's run_task catches BaseException and records the task FAILED.
            os._exit(0)
        if not self.running:
            return
        logger.info("Received %s - stopping.", signal.strsignal(signum))
        self.running = False
        # Ignored at the OS, not merely by this handler: Python's finalisation puts every signal with a Python
        # handler back to SIG_DFL, so make run's SIGTERM arriving while the interpreter shuts down killed the
        # worker (exit -15) on a loaded machine. An ignored signal stays ignored; lawdesk.run kills a worker that
        # has not left 20 s after its SIGTERM. A signal that arrived just before the switch is then reported by
        # Python as "ignored due to race condition", with a traceback on make run's terminal: it is the ignoring
        # asked for here, so that one report is dropped.
        sys.unraisablehook = _quiet_about_ignored_signals
        for stop_signal in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop_signal, signal.SIG_IGN)
        sys.exit(0)

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


def _quiet_about_ignored_signals(unraisable) -> None:
    """``sys.unraisablehook`` for a worker that is leaving: CPython's "Signal N ignored due to race condition"
    (``_PyErr_CheckSignalsTstate``, a signal caught just before its handler became SIG_IGN) is dropped; anything
    else goes to the default hook."""
    if isinstance(unraisable.exc_value, OSError) and "ignored due to race condition" in str(unraisable.exc_value):
        return
    sys.__unraisablehook__(unraisable)


def _flush_logs() -> None:
    for handler in logging.getLogger("django_tasks_db").handlers:
        try:
            handler.flush()
        except Exception:  # the log file's disk full must not keep a stopping worker alive
            pass


class Command(db_worker.Command):
    help = db_worker.Command.help + ", reconnecting when the database goes away"

    def handle(self, *args, **options) -> None:
        original, db_worker.Worker = db_worker.Worker, ReconnectingWorker
        try:
            super().handle(*args, **options)
        finally:
            db_worker.Worker = original
