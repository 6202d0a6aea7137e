"""Run :mod:`matters.ingest.child` in a child process with an address-space limit and a wall-clock limit.

The worker calls :func:`run_child` and gets the child's events as they come; whatever the file does to the child
(exhausting memory, hanging, crashing the parser), the worker sees an :class:`ChildEvent` of kind ``error`` with
a reason, and goes on with the next file.
"""

import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from .child import Spec

BASE_DIR = Path(__file__).resolve().parents[2]


def _limit_memory(memory_mb: int):
    def apply() -> None:
        os.setsid()  # own process group, so a timeout kills Tesseract and LibreOffice children too
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _error(reason: str) -> dict:
    return {"event": "error", "status": "failed", "reason": reason}


def run_child(spec: Spec, *, memory_mb: int, timeout_s: int) -> Iterator[dict]:
    """Yield the child's events (dicts, see :mod:`matters.ingest.child`); the last one is ``done`` or ``error``.

    Limits: ``memory_mb`` of address space for the child and each program it starts (RLIMIT_AS), ``timeout_s``
    seconds of wall clock for the whole file. On either, the child's process group is killed.
    """
    command = [sys.executable, "-m", "matters.ingest.child", json.dumps(asdict(spec))]
    # stderr goes to a file, not a pipe: a chatty parser must not block on a pipe nobody reads.
    stderr_file = tempfile.TemporaryFile()
    process = subprocess.Popen(
        command,
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        preexec_fn=_limit_memory(memory_mb),
    )
    deadline = time.monotonic() + timeout_s
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    buffer = b""
    finished = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill(process)
                yield _error(
                    f"Processing took longer than the limit of {timeout_s} seconds and was stopped. "
                    "The file may be unusually large or built to stall a reader; other files are not affected."
                )
                return
            if not selector.select(timeout=min(remaining, 1.0)):
                continue
            chunk = os.read(process.stdout.fileno(), 1 << 20)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                event = json.loads(line)
                if event["event"] == "error" and event.get("reason") == "memory":
                    finished = True
                    yield _error(_memory_reason(memory_mb))
                    continue
                finished = finished or event["event"] in ("done", "error")
                yield event
        returncode = process.wait(timeout=30)
        if not finished:
            stderr_file.seek(0)
            stderr = stderr_file.read().decode("utf-8", "replace")
            yield _error(_crash_reason(returncode, stderr, memory_mb))
    finally:
        selector.close()
        if process.poll() is None:
            _kill(process)
        process.stdout.close()
        stderr_file.close()


def _memory_reason(memory_mb: int) -> str:
    return (
        f"Processing needed more than the memory limit of {memory_mb} MiB and was stopped. The file is probably "
        "a very large page or image; other files are not affected. An operator can raise LAWDESK_INGEST_MEMORY_MB."
    )


def _crash_reason(returncode: int, stderr: str, memory_mb: int) -> str:
    lowered = stderr.lower()
    out_of_memory = ("memoryerror", "cannot allocate", "out of memory", "malloc", "bad_alloc")
    if any(sign in lowered for sign in out_of_memory) or returncode in (
        -signal.SIGKILL,
        -signal.SIGSEGV,
        -signal.SIGABRT,
    ):
        return _memory_reason(memory_mb)
    last_line = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit status {returncode}"
    return f"The file could not be processed: the reader stopped unexpectedly ({last_line[:300]})."


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
