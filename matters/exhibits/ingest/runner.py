"""Run :mod:`matters.exhibits.ingest.child` jobs in child processes with an address-space limit and a wall-clock limit.

Children are forked from a multiprocessing fork server that has imported the child module (PyMuPDF 2 and its
dependencies take about half a second to import), so each file starts in milliseconds and still gets a fresh
process of its own. Whatever a file does to its child (exhausting memory, hanging, crashing the parser), the
worker sees an ``error`` event with a reason and goes on with the next file.
"""

import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import asdict
from functools import cache

from .child import run_limited
from .spec import Spec


@cache
def _context() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["matters.exhibits.ingest.child"])
    return context


def _error(reason: str) -> dict:
    return {"event": "error", "status": "failed", "reason": reason}


def run_child(spec: Spec, *, memory_mb: int, timeout_s: int, job: str = "ingest") -> Iterator[dict]:
    """Yield the events of ``job`` ("ingest", "previews", "assemble" or "stamps") on ``spec``; the last one is a
    final event (``done``, ``previews``, ``assembled``, ``stamps`` or ``error``).

    Limits: ``memory_mb`` of address space for the child and each program it starts (RLIMIT_AS), ``timeout_s``
    seconds of wall clock for the whole job. On either, the child's process group is killed.
    """
    context = _context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=run_limited, args=(asdict(spec), job, sender, memory_mb), daemon=True)
    process.start()
    sender.close()  # the child holds the only sending end, so its death closes the pipe
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                yield _error(
                    f"Processing took longer than the limit of {timeout_s} seconds and was stopped. "
                    "The file may be unusually large or built to stall a reader; other files are not affected."
                )
                return
            if not receiver.poll(min(remaining, 1.0)):
                continue
            try:
                event = receiver.recv()
            except EOFError:
                break
            if event["event"] == "error" and event.get("reason") == "memory":
                event = _error(_memory_reason(memory_mb))
            yield event
            if event["event"] in ("done", "previews", "assembled", "stamps", "error"):
                # Everything the job makes is written before its final event; the child's own exit adds nothing
                # but time, so the finally clause ends its process group now.
                return
        process.join(timeout=30)
        yield _error(_crash_reason(process.exitcode, memory_mb))
    finally:
        receiver.close()
        _kill_group(process)


def _memory_reason(memory_mb: int) -> str:
    return (
        f"Processing needed more than the memory limit of {memory_mb} MiB and was stopped. The file is probably "
        "a very large page or image; other files are not affected. An operator can raise LAWDESK_INGEST_MEMORY_MB."
    )


def _crash_reason(exitcode: int | None, memory_mb: int) -> str:
    if exitcode in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS):
        # Under an address-space limit, a native library that cannot allocate usually aborts or crashes.
        return _memory_reason(memory_mb)
    return f"The file could not be processed: the reader stopped unexpectedly (exit status {exitcode})."


def _kill_group(process: multiprocessing.Process) -> None:
    if process.pid is None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the child made itself a group leader (os.setsid)
    except (ProcessLookupError, PermissionError):
        pass
    process.join(timeout=5)
