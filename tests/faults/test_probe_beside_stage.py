"""The periodic probe while the only model worker runs a long stage: it runs on the ``probes`` worker that
``make run`` starts and reports the server up while the stage goes on; on the ``models`` queue it had waited for
the stage to end. (With every slot busy a probe checks health and leaves the speed unmeasured:
tests/pipeline/topology/test_topology_probe.py.)"""

import subprocess

import pytest

from lawdesk.run import worker_command
from pipeline.job_models import StageRun
from pipeline.models import ProbeResult
from pipeline.stages.control import job_start
from pipeline.topology.probe import probe_schedule
from tests.faults.conftest import wait_for
from tests.faults.test_model_server_killed import model_server
from tests.support.jobs import register
from tests.support.paths import BASE_DIR
from tests.support.processes import free_port

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def start(processes, queue: str, interval_s: float) -> subprocess.Popen:
    process = subprocess.Popen([*worker_command(queue, interval_s), "--no-startup-delay"], cwd=BASE_DIR,
                               env=processes.env())
    processes.children.append(process)
    return process


def test_the_probe_does_not_wait_behind_a_running_stage(matter, attorney, processes):
    port = free_port()
    server = model_server(port, pause_s=0.2)  # about 25 s of streaming
    try:
        record = register(f"http://127.0.0.1:{port}")
        start(processes, "models", 0.1)
        start(processes, "probes", 1.0)
        job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney)
        wait_for(lambda: StageRun.objects.filter(job=job, status="running").exclude(output="").exists(),
                 timeout_s=60, what="the stage to start streaming")
        probe_schedule(interval_s=0)
        result = wait_for(lambda: ProbeResult.objects.filter(server=record).first(), timeout_s=20,
                          what="the probe, beside the running stage")
        assert StageRun.objects.get(job=job).status == "running"  # the probe did not wait for it to end
        assert result.status == "up", result.error
    finally:
        server.kill()
        server.wait(timeout=10)
