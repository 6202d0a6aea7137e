"""Ctrl-C of ``make run`` in the middle of a model stage: the worker gets SIGINT from the terminal and SIGTERM
from lawdesk.run. It leaves without a traceback, the stage is not marked failed (neither its record nor its
queued task), and once its lease has run out the stage is taken over like that of a worker that died."""

import signal
import subprocess
import sys
import time

import pytest
from django_tasks_db.models import DBTaskResult

from pipeline.job_models import StageRun
from pipeline.stages.control import job_start, stage_recover
from pipeline.tasks import watch_stage
from tests.faults.conftest import LEASE_ENV, wait_for
from tests.faults.test_model_server_killed import model_server
from tests.support.jobs import register
from tests.support.paths import BASE_DIR
from tests.support.processes import free_port

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def worker(processes, log) -> subprocess.Popen:
    command = [sys.executable, "manage.py", "db_worker", "--queue-name", "*", "--no-reload", "--interval", "0.2",
               "--no-startup-delay"]
    process = subprocess.Popen(command, cwd=BASE_DIR, env=processes.env(**LEASE_ENV), stdout=log,
                               stderr=subprocess.STDOUT)
    processes.children.append(process)
    return process


def stop_as_make_run_does(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGINT)  # the terminal's Ctrl-C reaches the whole group
    process.send_signal(signal.SIGTERM)  # then lawdesk.run stops each child
    return process.wait(timeout=30)


def test_a_worker_stopped_mid_stage_leaves_quietly_and_the_stage_is_taken_over(matter, attorney, processes,
                                                                                tmp_path):
    port = free_port()
    server = model_server(port, pause_s=0.2)  # about 25 s of streaming: stopped well before the end
    log_path = tmp_path / "worker.log"
    try:
        register(f"http://127.0.0.1:{port}")
        with log_path.open("wb") as log:
            process = worker(processes, log)
            job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney)
            wait_for(lambda: StageRun.objects.filter(job=job, status="running").exclude(output="").exists(),
                     timeout_s=60, what="the answer to start streaming")
            stop_as_make_run_does(process)
        output = log_path.read_text()
        assert "Traceback" not in output and "FAILED" not in output, output
        first = StageRun.objects.get(job=job)
        assert first.status == "running" and first.lease_expires_at is not None
        assert not DBTaskResult.objects.filter(status="FAILED").exists()

        wait_for(lambda: stage_recover(run_id=first.pk, enqueue=False), timeout_s=30,
                 what="the stopped worker's lease to run out and the stage to be taken over")
        first.refresh_from_db()
        assert first.status == "interrupted"
        assert StageRun.objects.get(job=job, attempt=2).status == "queued"
    finally:
        server.kill()
        server.wait(timeout=10)


def stop_over_and_over(process: subprocess.Popen) -> int:
    """SIGINT, then SIGTERM again and again until the worker is gone, so that some arrive while the interpreter
    shuts down: Python has by then put back the default action of every signal it handled, which kills the
    process (-15) unless the worker ignored the signal at the OS when it began to leave."""
    process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        try:
            process.send_signal(signal.SIGTERM)
        except ProcessLookupError:  # gone between poll and kill
            break
        time.sleep(0.0005)
    return process.wait(timeout=30)


@pytest.mark.parametrize("stop", [stop_as_make_run_does, stop_over_and_over])
def test_an_idle_worker_stopped_twice_or_more_leaves_quietly(processes, tmp_path, stop):
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        process = worker(processes, log)
        # A task that ends at once (there is no attempt 0 to watch): once it is done, the worker is idle.
        done = watch_stage.enqueue(0)
        wait_for(lambda: DBTaskResult.objects.filter(pk=done.id, status="SUCCESSFUL").exists(), timeout_s=60,
                 what="the worker to run a task")
        assert stop(process) == 0
    output = log_path.read_text()
    assert "Traceback" not in output and "Exception ignored" not in output, output


RACE = """
import signal, sys, threading, types
import django
django.setup()
from lawdesk.management.commands.db_worker import ReconnectingWorker

worker = types.SimpleNamespace(running=True, running_task=False)
for stop_signal in (signal.SIGINT, signal.SIGTERM):
    signal.signal(stop_signal, lambda signum, frame: ReconnectingWorker.shutdown(worker, signum, frame))
# Both stops pending at once, as Ctrl-C's SIGINT and lawdesk.run's SIGTERM arrive: the first handler switches
# SIGTERM to SIG_IGN while SIGTERM is already caught. Sent to this thread, not the process: a signal sent to the
# process goes to any thread that does not block it (django.setup may have started one), which caught it at once
# and had the handler end the script before its try.
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
signal.pthread_kill(threading.get_ident(), signal.SIGINT)
signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
try:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    for _ in range(10_000_000):  # idle: the stop's SystemExit ends this
        pass
finally:
    # Python running on the way out (the worker's logging and closing connections), where make run's terminal
    # showed the traceback: a call that writes lets the interpreter look at the pending SIGTERM.
    print("leaving", file=sys.stderr, flush=True)
"""


def test_a_stop_caught_as_the_worker_begins_to_leave_prints_no_traceback(processes):
    # The newcomer's Ctrl-C of make run printed "OSError: Signal 15 ignored due to race condition" with a traceback.
    done = subprocess.run([sys.executable, "-c", RACE], cwd=BASE_DIR, env=processes.env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "leaving", done.stderr
