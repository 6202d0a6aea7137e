"""Helpers of the fault suite: waiting on persisted state, finding the worker that holds a lease, hashing files."""

import hashlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create
from matters.models import Exhibit

# Short leases keep each takeover to seconds; the watch runs 1.5 leases after a claim.
LEASE_ENV = {"LAWDESK_DOCUMENT_LEASE_S": "2", "LAWDESK_STAGE_LEASE_S": "2"}
# OCR one page at a time, at a resolution that reads a court scan: a kill after the first page lands mid-file, and
# the file is read again in seconds.
OCR_ENV = {"LAWDESK_OCR_WORKERS": "1", "LAWDESK_OCR_DPI": "200"}


def wait_for(check: Callable[[], object], *, timeout_s: float, what: str, every_s: float = 0.05):
    """Return ``check()``'s first truthy value, polling every ``every_s``; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(every_s)
    pytest.fail(f"timed out after {timeout_s} s waiting for {what}")


def lease_pid(lease_owner: str) -> int:
    """The process id inside a lease owner name (``host:pid:random``)."""
    return int(lease_owner.split(":")[1])


def kill_worker(workers: list[subprocess.Popen], lease_owner: str) -> subprocess.Popen:
    """kill -9 the worker process holding ``lease_owner``'s lease and return it (reaped)."""
    pid = lease_pid(lease_owner)
    victim = next(w for w in workers if w.pid == pid)
    os.kill(pid, signal.SIGKILL)
    victim.wait(timeout=10)
    return victim


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def two_workers(processes) -> list[subprocess.Popen]:
    """Two documents-and-models workers with short leases, as two hosts would run them."""
    return [processes.worker(**LEASE_ENV, **OCR_ENV), processes.worker(**LEASE_ENV, **OCR_ENV)]


def ready_exhibits(matter, user, paths: list[Path]) -> list[Exhibit]:
    """Upload ``paths`` and read their text here, without page images (a production needs none)."""
    exhibits = []
    for path in paths:
        with open(path, "rb") as stream:
            exhibit = exhibit_create(matter=matter, stream=stream, original_name=path.name, origin="client",
                                     uploaded_by=user, enqueue=False)
        exhibits.append(exhibit_process(exhibit_id=exhibit.pk, previews="skip"))
    return exhibits
