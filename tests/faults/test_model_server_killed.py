"""kill -9 of the model server in the middle of a streamed answer: the stage fails with its reason (the connection
broke, the part received kept for the record), and once the server is back a retry runs it to its end. (kill -9
of the model worker mid-stage: tests/pipeline/stages/test_jobs_live.py.)"""

import signal
import subprocess
import sys

import pytest

from pipeline.job_models import StageRun
from pipeline.stages.control import job_start, stage_retry
from tests.faults.conftest import LEASE_ENV, wait_for
from tests.support.jobs import register
from tests.support.model_server import EXTRACTION
from tests.support.paths import BASE_DIR
from tests.support.processes import free_port

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def model_server(port: int, pause_s: float) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "tests.support.model_server", str(port), str(pause_s)],
                               cwd=BASE_DIR, stdout=subprocess.PIPE, text=True)
    assert "listening" in process.stdout.readline()
    return process


def test_a_model_server_killed_mid_stream_fails_the_stage_with_its_reason_and_a_retry_completes(
        matter, attorney, processes):
    port = free_port()
    server = model_server(port, pause_s=0.2)  # about 25 s of streaming: killed well before the end
    try:
        register(f"http://127.0.0.1:{port}")
        processes.worker(**LEASE_ENV)
        job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney)
        wait_for(lambda: StageRun.objects.filter(job=job, status="running").exclude(output="").exists(),
                 timeout_s=60, what="the answer to start streaming")
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        job = wait_for(lambda: type(job).objects.filter(pk=job.pk, status="failed").first(), timeout_s=60,
                       what="the stage to fail")
        first = StageRun.objects.get(job=job)
        assert "broke during the generation" in first.error or "ended before" in first.error, first.error
        assert first.output and EXTRACTION.startswith(first.output)  # the part received is kept for the record
        assert first.lease_owner and first.lease_expires_at is None

        server = model_server(port, pause_s=0.001)
        stage_retry(job=job, user=attorney)
        job = wait_for(lambda: type(job).objects.filter(pk=job.pk, status="done").first(), timeout_s=60,
                       what="the retried stage")
        attempts = [(run.attempt, run.status) for run in StageRun.objects.filter(job=job).order_by("attempt")]
        assert attempts == [(1, "failed"), (2, "done")]
        assert StageRun.objects.get(job=job, attempt=2).parsed["items"][0]["value"] == "$1,250.00"
    finally:
        server.kill()
        server.wait(timeout=10)
