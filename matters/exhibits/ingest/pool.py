"""A small pool of long-lived, limited ingest children that each read many files in turn.

Forking a child per file cost about 27 ms on a 7-page filing, several times the reading itself. A pooled child
keeps the per-file limits of a fresh one: it runs in its own process group under the same address-space limit
(RLIMIT_AS, fixed when it starts, so a pool hands a file only to a child started with the limit asked for), and
the parent stops it at the file's wall-clock limit. A child is never given another file after a failure of any
kind, a limit breach (memory, wall clock, a crash), or ``files_per_child`` files: it is stopped and the next file
goes to a fresh child, so a hostile file still fails alone with the reason a child of its own would give.

Why not ``concurrent.futures.ProcessPoolExecutor(max_tasks_per_child=...)``: a worker that dies there breaks the
whole executor (``BrokenProcessPool``) and fails every file queued behind it, it has no per-task wall-clock kill,
and it returns a task's result at the end where ingest streams one event per page. So each child here has its own
pipe, over which it receives ``(spec, job)`` and sends the events of :func:`matters.exhibits.ingest.child.run`, and
a shared counter of the files it has taken: a child found dead before it took a file is replaced and the file given
to a fresh one, while one that died on the file reports the crash.

Children are started from the multiprocessing fork server that has imported PyMuPDF once (see
:mod:`matters.exhibits.ingest.runner`). They end with the process that owns the pool: on a normal exit through
:meth:`IngestPool.shutdown` (registered with ``atexit`` for the shared pool), and when it is killed because each
child watches its owner and then kills its whole process group, Tesseract and LibreOffice included.
"""

import atexit
import ctypes
import gc
import json
import logging
import multiprocessing
import os
import select
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from . import reader_sandbox, sandbox
from .child import _share_one_malloc_arena, limit_process, run
from .sandbox import SandboxUnavailable
from .spec import Spec

logger = logging.getLogger(__name__)

FINAL_EVENTS = ("done", "previews", "assembled", "stamps", "error")
# Files a child reads before it is replaced: a bound on what one child's heap can gather from files that did not
# fail (fragmentation, caches), so a long-lived child's headroom under its address-space limit stays near a fresh
# one's. The fork that replaces it costs about one 7-page filing's reading, once per this many files.
FILES_PER_CHILD = 100
# Growth of a child's address space past its size at start that is given back after a file (_release_memory): a
# bound on the headroom under its limit that a long-lived child lacks against a fresh one.
RELEASE_AFTER_MIB = 64
# Events a child sends together, and for how long after its last send it may hold them (_EventBatch).
BATCH_PAGES = 32
BATCH_S = 0.1
# The largest message a worker reads from a child: 32 pages of text with their bounds are a few MiB at most.
MESSAGE_MAX_BYTES = 64 * 1024 * 1024
# How long a new child has to say who it is (reader_sandbox.say_pid) before it counts as not started.
HELLO_TIMEOUT_S = 60

# The fork server is one per process, so whether children are sandboxed is decided once, by the first file read.
_mode: dict[str, bool] = {}
_mode_lock = threading.Lock()


@cache
def _context() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context("forkserver")
    # fork_server first: the server is undumpable before it reads anything more.
    context.set_forkserver_preload(["matters.exhibits.ingest.fork_server", "matters.exhibits.ingest.child",
                                    "matters.exhibits.ingest.pool"])
    return context


def sandbox_problem(*, sandboxed: bool, data_dir: str) -> str:
    """'' when this process's children may read a file with ``sandboxed`` (False: the operator's explicit
    LAWDESK_READERS_UNSANDBOXED) and the data directory ``data_dir``; else the reason, for an attorney. The first
    call fixes the mode: the fork server, inside the sandbox or not, serves the whole process."""
    with _mode_lock:
        if "sandboxed" not in _mode:
            if sandboxed:
                try:
                    reader_sandbox.prepare(_context(), hidden=(data_dir,) if data_dir else ())
                except SandboxUnavailable as exc:
                    return sandbox_reason(str(exc))
            _mode["sandboxed"] = sandboxed
        if _mode["sandboxed"] != sandboxed:
            return ("The file could not be processed: this worker reads files "
                    f"{'inside' if _mode['sandboxed'] else 'outside'} the readers' sandbox and was asked otherwise; "
                    "restart the worker after changing LAWDESK_READERS_UNSANDBOXED.")
    if sandboxed and data_dir:
        resolved = Path(data_dir).resolve()
        for root in reader_sandbox.readonly_roots():
            if resolved == root or root in resolved.parents:
                return sandbox_reason(f"the data directory {data_dir} lies inside {root}, which the sandbox shares "
                                      "read-only; move it elsewhere")
    return ""


def sandbox_reason(problem: str) -> str:
    """The reason of a file not read because the readers' sandbox cannot start (``problem``: why)."""
    return (f"The file was not read: PDFs, images and OCR are read only inside a sandbox that keeps the readers away "
            f"from other matters' files and the network, and {problem}. Ask the operator to fix this (or to set "
            "LAWDESK_READERS_UNSANDBOXED=1, which reads files without it: docs/security.md), then reprocess.")


def _error(reason: str) -> dict:
    return {"event": "error", "status": "failed", "reason": reason}


UNREADABLE_MESSAGE = ("The file could not be processed: the process reading it sent something other than its "
                      "events and was stopped.")


class NotEvents(ValueError):
    """What a child sent is not a list of events."""


def decode_events(data: bytes) -> list[dict]:
    """The events a child sent (a JSON list of objects, each with a string ``event``). Raises NotEvents otherwise.

    A child reads hostile files: one that a file has taken over could send anything. JSON is only data, where
    multiprocessing's default, pickle, runs code named in the message in the process that reads it (the worker,
    which holds the database and the secrets); so children send JSON and the worker reads nothing else."""
    try:
        events = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotEvents(str(exc)) from None
    if not isinstance(events, list) or not all(
            isinstance(event, dict) and isinstance(event.get("event"), str) for event in events):
        raise NotEvents("not a list of events")
    return events


def timeout_reason(timeout_s: int) -> str:
    """The reason of a file stopped at its wall-clock limit of ``timeout_s`` seconds, for an attorney."""
    return (
        f"Processing took longer than the limit of {timeout_s} seconds and was stopped. "
        "The file may be unusually large or built to stall a reader; other files are not affected."
    )


def memory_reason(memory_mb: int) -> str:
    """The reason of a file stopped at its address-space limit of ``memory_mb`` MiB, for an attorney."""
    return (
        f"Processing needed more than the memory limit of {memory_mb} MiB and was stopped. The file is probably "
        "a very large page or image; other files are not affected. An operator can raise LAWDESK_INGEST_MEMORY_MB."
    )


def crash_reason(exitcode: int | None, memory_mb: int) -> str:
    """The reason of a file whose child ended with ``exitcode`` (negative: the signal) before its final event."""
    if exitcode in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS):
        # Under an address-space limit, a native library that cannot allocate usually aborts or crashes.
        return memory_reason(memory_mb)
    return f"The file could not be processed: the reader stopped unexpectedly (exit status {exitcode})."


def _end_with_owner(owner_pid: int) -> None:
    """Kill this child's whole process group (Tesseract and LibreOffice included) as soon as the process that owns
    the pool exits, however it exits: a thread waits on a pidfd of the owner (Linux 5.3), or looks once a second.

    The owner's death alone does not reach a busy child: the pipe's end is seen only at its next event, after the
    page OCR is working on, and the fork server, the child's parent, stays up as long as any child it started
    does (each holds its liveness pipe), so ``PR_SET_PDEATHSIG`` would not fire either."""

    def watch() -> None:
        try:
            pidfd = os.pidfd_open(owner_pid)
        except ProcessLookupError:
            pass  # gone already
        except (AttributeError, OSError):
            while _alive(owner_pid):
                time.sleep(1.0)
        else:
            select.select([pidfd], [], [])
        try:
            os.killpg(os.getpid(), signal.SIGKILL)  # the group this child leads; never its parent's
        except ProcessLookupError:
            pass  # not a group leader yet
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="lawdesk-ingest-owner", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _address_space_bytes() -> int:
    """This process's address space now (what RLIMIT_AS counts), from ``/proc/self/statm``; 0 where unreadable."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _release_memory(started_bytes: int) -> None:
    """Give back what the last files left once the child's address space is RELEASE_AFTER_MIB over
    ``started_bytes`` (its size when it started): MuPDF's resource store (fonts, images: up to 256 MiB), Python's
    cycles and glibc's free pages, which all count against the next file's address space (RLIMIT_AS).

    Below that, only Python's cycles are collected: emptying the store and trimming the heap after every file cost
    about a fifth of reading a 7-page filing, most of it in the next file reloading what the store had kept."""
    import pymupdf

    gc.collect()
    if _address_space_bytes() - started_bytes < RELEASE_AFTER_MIB * 1024 * 1024:
        return
    pymupdf.TOOLS.store_shrink(100)
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc


class _EventBatch:
    """The child's end of a file's event stream: events are held and sent together as one list, at most
    BATCH_PAGES of them and while less than BATCH_S has passed since the last send; a final event is sent at once,
    with those before it.

    One message per event cost a pickling, a pipe write and a wake-up of the reading worker each, about a tenth of
    what reading a born-digital page costs; a 7-page filing now goes to the worker as one message. An event made
    after BATCH_S goes out at once (an OCR page takes seconds, so each OCR page is sent as it is read)."""

    def __init__(self, connection) -> None:
        self.connection = connection
        self.events: list[dict] = []
        self.sent_at = time.monotonic()

    def __call__(self, event: dict) -> None:
        self.events.append(event)
        if (event.get("event") in FINAL_EVENTS or len(self.events) >= BATCH_PAGES
                or time.monotonic() - self.sent_at >= BATCH_S):
            self.flush()

    def flush(self) -> None:
        """Send the events held, if any."""
        if self.events:
            # JSON, never pickle: the worker must not run what a child sends (decode_events).
            self.connection.send_bytes(json.dumps(self.events, separators=(",", ":")).encode())
            self.events = []
        self.sent_at = time.monotonic()


def serve(connection, memory_mb: int, owner_pid: int, taken) -> None:
    """Entry point of a pooled child: say who it is, limit itself once, then run each ``(spec, job, fields)``
    received on ``connection`` (the files of ``fields`` arriving as descriptors: reader_sandbox) and send its events
    there, until ``None``, the pool's end closes or ``owner_pid`` exits (0: inside the readers' sandbox, which ends
    with the owner). ``taken`` (a shared unsigned integer) counts the files it has taken, each counted before it is
    read."""
    reader_sandbox.say_pid(connection)
    reader_sandbox.make_undumpable()
    # The watching thread starts before the address-space limit, which a child of a low limit has almost reached
    # with PyMuPDF loaded (no thread could start under 700 MiB), and shares the one malloc arena and small stacks
    # that limit_process sets, so its reservation stays small.
    _share_one_malloc_arena()
    threading.stack_size(1024 * 1024)
    if owner_pid:
        _end_with_owner(owner_pid)
    else:
        sandbox.enter_reader_sandbox()  # converters and OCR run here as they are, not in a sandbox of their own
    limit_process(memory_mb)
    # What the fork server imported (PyMuPDF's bindings: tens of thousands of objects) lives as long as the child;
    # frozen, it is left out of every collection, and a full one after each file costs well under a millisecond
    # instead of 50-100 ms.
    gc.freeze()
    started_bytes = _address_space_bytes()
    try:
        while True:
            try:
                task = connection.recv()
            except (EOFError, OSError):
                return
            if task is None:
                return
            spec, job, fields = task
            spec, fds = reader_sandbox.receive_spec(connection, spec, fields)
            # Shared memory, not a message: a message woke the worker once more per file, for nothing but this.
            taken.value += 1
            batch = _EventBatch(connection)
            try:
                run(spec, job, batch)
                batch.flush()
            finally:
                for fd in fds:
                    os.close(fd)
            _release_memory(started_bytes)
    finally:
        # However it ends (told to, its parent gone, an event that could not be sent), nothing it started may
        # outlive it: Tesseract or LibreOffice still running for a file nobody waits for.
        connection.close()
        os.killpg(0, signal.SIGKILL)


@dataclass(eq=False)
class _Child:
    process: multiprocessing.Process
    connection: object
    memory_mb: int
    files_left: int
    taken: object  # the child's count of files taken (serve); compared with files_sent
    files_sent: int = field(default=0)
    stopped: bool = field(default=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """Kill the child's process group (it made itself a group leader) and reap it."""
        if self.stopped:
            return
        self.stopped = True
        # The group, for what it started; the child itself too, in case it left its group (one a hostile file
        # took over could).
        for kill in (os.killpg, os.kill):
            try:
                kill(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.connection.close()
        self.process.join(timeout=5)


class IngestPool:
    """Long-lived ingest children, handed out one file at a time.

    ``idle_children``: how many children may wait for work between files (one per file read at once is enough: a
    worker of the ``documents`` queue reads one file at a time); more are started when more files are read at
    once, and stopped when they come back to a full pool. ``files_per_child``: files a child reads before it is
    replaced. Thread-safe. Raises nothing from :meth:`run`: every problem becomes an ``error`` event.
    """

    def __init__(self, *, idle_children: int = 2, files_per_child: int = FILES_PER_CHILD) -> None:
        self.idle_children = max(0, idle_children)
        self.files_per_child = max(1, files_per_child)
        self._idle: list[_Child] = []
        self._busy: set[_Child] = set()
        self._lock = threading.Lock()
        self._closed = False

    def pids(self) -> list[int]:
        """Process ids of the children alive now, idle or busy."""
        with self._lock:
            return [child.pid for child in [*self._idle, *self._busy] if not child.stopped]

    def run(self, spec: Spec, *, memory_mb: int, timeout_s: int, job: str = "ingest",
            sandboxed: bool = True) -> Iterator[dict]:
        """Yield the events of ``job`` on ``spec`` from a pooled child; the last is a final event (``done``,
        ``previews``, ``assembled``, ``stamps`` or ``error``). Limits: ``memory_mb`` MiB of address space (RLIMIT_AS,
        for the child and every program it starts), ``timeout_s`` seconds of wall clock for this file. The child
        runs in the readers' sandbox (:mod:`.reader_sandbox`) unless ``sandboxed`` is False, which the operator
        asks for explicitly; a file the sandbox cannot take fails with the reason."""
        if problem := sandbox_problem(sandboxed=sandboxed, data_dir=spec.data_dir):
            yield _error(problem)
            return
        made_out_dir = not os.path.isdir(spec.out_dir)
        try:
            # In the sandbox the child writes in a staging folder of its own, never in the output folder.
            staged = reader_sandbox.stage(spec) if sandboxed else None
            fields, fds = reader_sandbox.open_files(spec, staged=staged is not None)
        except reader_sandbox.StagingMissing as exc:
            yield _error(str(exc))
            return
        except OSError as exc:
            yield _error(f"The file could not be processed: the stored file or its output folder could not be opened "
                         f"({exc.strerror}).")
            return
        child_spec = replace(spec, out_dir=staged.inside) if staged else spec
        try:
            for event in self._run(child_spec, job, (fields, fds), memory_mb, timeout_s):
                if staged and event.get("event") in FINAL_EVENTS:
                    left = reader_sandbox.collect(staged, spec.out_dir)
                    if left:
                        logger.warning("reader child left %s in its output folder; not taken", left[:20])
                yield event
        finally:
            for fd in fds:
                os.close(fd)
            if staged:
                shutil.rmtree(staged.host, ignore_errors=True)
            if made_out_dir:
                try:
                    os.rmdir(spec.out_dir)  # nothing was written there (most PDFs): no empty folder left
                except OSError:
                    pass

    def _run(self, spec: Spec, job: str, files: tuple[list[str], list[int]], memory_mb: int,
             timeout_s: int) -> Iterator[dict]:
        deadline = time.monotonic() + timeout_s
        for attempt in range(2):
            child = self._checkout(spec, job, files, memory_mb)
            if child is None:
                yield _error("The file could not be processed: no reader process could be started.")
                return
            reusable = False
            try:
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        yield _error(timeout_reason(timeout_s))
                        return
                    try:
                        if not child.connection.poll(min(remaining, 1.0)):
                            continue
                        message = decode_events(child.connection.recv_bytes(MESSAGE_MAX_BYTES))
                    except (EOFError, OSError, NotEvents):
                        # A child that died closes its end: given a moment to be reaped, it is a crash.
                        child.process.join(timeout=1)
                        if child.process.exitcode is not None:
                            break
                        # Alive, it sent an over-long message or one that is not events: it is stopped, never
                        # trusted again, and the file fails alone.
                        child.stop()
                        yield _error(UNREADABLE_MESSAGE)
                        return
                    for event in message:  # a file's events come in lists (_EventBatch)
                        if event["event"] == "error" and event.get("reason") == "memory":
                            event = _error(memory_reason(memory_mb))
                        final = event["event"] in FINAL_EVENTS
                        reusable = final and event["event"] != "error"
                        yield event
                        if final:
                            return
                if child.taken.value < child.files_sent and attempt == 0:
                    continue  # an idle child that had died (killed by hand, say) before it took the file: a fresh one
                child.process.join(timeout=30)
                yield _error(crash_reason(child.process.exitcode, memory_mb))
                return
            finally:
                # Also reached when the caller stops reading mid-file: that child is still busy, never reused.
                self._checkin(child, reusable)

    def _checkout(self, spec: Spec, job: str, files: tuple[list[str], list[int]], memory_mb: int) -> _Child | None:
        fields, fds = files
        task = (spec, job, fields)
        for _ in range(2):  # an idle child may have died since its last file
            with self._lock:
                child = next((c for c in self._idle if c.memory_mb == memory_mb), None)
                if child is not None:
                    self._idle.remove(child)
            if child is None:
                child = self._start(memory_mb)
                if child is None:
                    continue
            try:
                child.connection.send(task)
                reader_sandbox.send_fds(child.connection, fds)
            except (OSError, ValueError):
                child.stop()
                continue
            child.files_sent += 1
            with self._lock:
                self._busy.add(child)
            return child
        return None

    def _start(self, memory_mb: int) -> _Child | None:
        context = _context()
        parent_end, child_end = context.Pipe(duplex=True)
        reader_sandbox.listen_for_pid(parent_end)
        taken = context.RawValue(ctypes.c_uint64, 0)
        owner_pid = 0 if _mode.get("sandboxed") else os.getpid()  # a sandboxed child cannot see its owner
        process = reader_sandbox.SandboxProcess(target=serve, args=(child_end, memory_mb, owner_pid, taken),
                                                daemon=True)
        process.start()
        child_end.close()  # the child holds the only other end, so its death closes the pipe
        try:
            host_pid = reader_sandbox.hear_pid(parent_end, HELLO_TIMEOUT_S)
        except OSError:
            host_pid = None
        if host_pid is None:
            # Its id is unknown here (the fork server reports the one inside the sandbox): nothing may be killed by
            # it, not even by multiprocessing's own clean-up at exit. It ends with the sandbox, with this process.
            parent_end.close()
            multiprocessing.process._children.discard(process)
            return None
        # Every kill of this child (stop(), multiprocessing's clean-up at exit) goes by process.pid: the id the fork
        # server reported is the one inside the sandbox, which names another process here.
        process._popen.pid = host_pid
        return _Child(process, parent_end, memory_mb, self.files_per_child, taken)

    def _checkin(self, child: _Child, reusable: bool) -> None:
        child.files_left -= 1
        with self._lock:
            self._busy.discard(child)
            keep = reusable and child.files_left > 0 and not self._closed and len(self._idle) < self.idle_children
            if keep:
                self._idle.append(child)
        if not keep:
            child.stop()

    def shutdown(self) -> None:
        """Stop every child, idle or busy; the pool starts no more."""
        with self._lock:
            self._closed = True
            children, self._idle = [*self._idle, *self._busy], []
        for child in children:
            child.stop()


_shared: tuple[int, IngestPool] | None = None
_shared_lock = threading.Lock()


def shared_pool() -> IngestPool:
    """The pool of this process (one per process: a forked copy of another process's pool is not used)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared[0] != os.getpid():
            pool = IngestPool(idle_children=os.cpu_count() or 1)
            atexit.register(pool.shutdown)
            _shared = (os.getpid(), pool)
        return _shared[1]
