"""The readers' sandbox: the pool's children (PyMuPDF, Pillow, Tesseract and LibreOffice under them) run inside one
bubblewrap sandbox, and each file reaches a child as open file descriptors, never as a path it could walk from.

The multiprocessing fork server that the pool's children are forked from (:mod:`matters.exhibits.ingest.pool`) is
started through bubblewrap (:func:`matters.exhibits.ingest.sandbox.reader_argv`): it and every child it forks see
the system's programs and libraries, LawDesk's Python environment and its ``matters`` package read-only, a fresh
in-memory ``/tmp`` and home, their own process namespace, and no network (only loopback, in a namespace of their
own) and no data directory. Forking inside the sandbox keeps the pool's speed: a child still starts in tens of
milliseconds from a process that has imported PyMuPDF once.

A file is handed to a child as descriptors passed over its socket (``SCM_RIGHTS``): the stored original, a
password file and a display PDF made earlier, opened read-only, which the child reads through
``/proc/self/fd/N``. It writes into a fresh folder of the worker's staging folder, the one host folder the
sandbox shows writable (at :data:`matters.exhibits.ingest.sandbox.OUTPUTS`, a bind mount: ``..`` from it is the
sandbox's own root); once the child's last event arrives, the worker takes from there the files a reader makes
(:func:`collect`: regular files of the expected names only) into the exhibit's output folder. A descriptor of the
output folder itself was handed over before, and a directory descriptor of a host folder leads out of any sandbox
(``/proc/self/fd/N/../..``). A child is made undumpable
(``PR_SET_DUMPABLE`` 0), and so is the fork server (:mod:`.fork_server`), so the other children in the sandbox
cannot read its memory or its descriptors through ``/proc``. The pool learns each child's process id as the host
sees it from the kernel (``SCM_CREDENTIALS``): the ids inside the sandbox mean nothing outside it.

Where bubblewrap is missing or cannot create its namespaces, files are not read: each fails with the reason,
unless the operator set ``LAWDESK_READERS_UNSANDBOXED=1`` (docs/security.md), and then each exhibit read says so.
Django-free.
"""

import atexit
import ctypes
import errno
import io
import multiprocessing
import os
import re
import shlex
import shutil
import socket
import stat
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from functools import cache
from multiprocessing import context, forkserver, popen_forkserver, reduction, resource_tracker, spawn, util
from pathlib import Path

from . import sandbox
from .spec import Spec

FD_BATCH = 200  # descriptors per message: the kernel takes at most 253 (SCM_MAX_FD)
PROC_FD = "/proc/self/fd"
_PR_SET_DUMPABLE = 4
# Fields of a Spec that name a file the child reads or the folder it writes; the rest are values.
_FILE_FIELDS = ("source", "password_file")


def readonly_roots() -> list[Path]:
    """What the sandbox shares read-only beyond the system: the Python environment and the ``matters`` package."""
    roots = [Path(__file__).resolve().parents[2]]  # .../matters
    # The virtual environment and the interpreter it was made from (pyenv's, say), unless the system's own.
    for prefix in dict.fromkeys(Path(p).resolve() for p in (sys.prefix, sys.base_prefix)):
        if prefix != Path("/usr") and Path("/usr") not in prefix.parents:
            roots.append(prefix)
    return roots


def _prefix_aliases() -> list[tuple[Path, Path]]:
    """The virtual environment at the path the interpreter knows it by, where that path runs through a link (a
    ``.venv`` linked into a working folder): Python finds its environment from ``sys.executable``'s own path, and
    inside the sandbox that path must lead to it too."""
    named = Path(sys.prefix).absolute()
    resolved = named.resolve()
    return [(resolved, named)] if named != resolved else []


@cache
def _wrapper(hidden: tuple[str, ...], outputs: Path) -> str:
    """A small executable that runs Python inside the readers' sandbox: multiprocessing starts its fork server
    through it (``set_executable``). Made once per process, in a private folder."""
    argv = sandbox.reader_argv(readonly_roots(), hidden=hidden, aliases=_prefix_aliases(), outputs=outputs)
    # The fork server imports its preload (fork_server, child, pool) before any child tells it sys.path, and
    # Python 3.11's forkserver.main ignores the sys_path it is given: without the folder holding ``matters`` on its
    # path, each import failed in silence, the server stayed dumpable and every child imported PyMuPDF itself.
    argv[-1:-1] = ["--setenv", "PYTHONPATH", str(readonly_roots()[0].parent)]
    folder = Path(tempfile.mkdtemp(prefix="lawdesk-sandbox-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    script = folder / "python"
    script.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(arg) for arg in argv) + " "
                      + shlex.quote(sys.executable) + ' "$@"\n')
    script.chmod(0o700)
    return str(script)


def prepare(context, hidden: tuple[str, ...]) -> None:
    """Make ``context`` (a forkserver context) start its fork server inside the sandbox, from a thread that lives as
    long as this process: bubblewrap's ``--die-with-parent`` ends the sandbox, and every child in it, when the
    thread that started it ends. Raises SandboxUnavailable when the sandbox cannot start."""
    sandbox.probe()
    # multiprocessing starts its resource tracker with the same executable; it only removes what this process
    # leaves behind, so it starts first, outside, where those things are.
    resource_tracker.ensure_running()
    outputs = _staging_folder(hidden)
    context.set_executable(_wrapper(hidden, outputs))
    started = threading.Event()
    failure: list[BaseException] = []

    def keeper() -> None:
        try:
            from multiprocessing import forkserver

            forkserver.ensure_running()
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
        started.set()
        threading.Event().wait()  # never set: the thread, and with it the sandbox, lives as long as the process

    threading.Thread(target=keeper, name="lawdesk-reader-sandbox", daemon=True).start()
    started.wait()
    if failure:
        raise sandbox.SandboxUnavailable(f"the readers' sandbox did not start ({failure[0]})")
    # A fork server started earlier in this process, outside, would be reused as it is: children would be forked
    # unsandboxed without a word. The process multiprocessing started must be bubblewrap.
    server_pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if _started_program(server_pid) != "bwrap":
        raise sandbox.SandboxUnavailable(
            "the fork server the readers are forked from runs outside bubblewrap (it was started before the first "
            "file was read, by other code of this process)")
    _staging[:] = [outputs]


# The worker's staging folder, once its sandbox is prepared: children write their outputs in folders of it.
_staging: list[Path] = []
# What a reader writes in its output folder (matters.exhibits.ingest.child, .document, .assemble): anything else a
# child leaves there is not taken.
_OUTPUT_NAMES = re.compile(r"(?:display\.pdf|assembled\.pdf|(?:pages|thumbs)/\d{4,6}\.jpg)")


def _staging_folder(hidden: tuple[str, ...]) -> Path:
    """A private folder for this worker's children to write in: under the data directory (the first of ``hidden``)
    so their files move to the exhibit's folder without a copy, else under the system's temporary folder. Removed
    when the worker exits."""
    base = Path(hidden[0]) / "reader-staging" if hidden else Path(tempfile.gettempdir())
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"worker-{os.getpid()}-", dir=base))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


class StagingMissing(Exception):
    """The worker's staging folder is gone; the message says so, for an attorney and the operator."""


@dataclass(frozen=True)
class Staged:
    """A child's output folder: ``host`` as the worker sees it, ``inside`` as the child does."""

    host: Path
    inside: str


def stage(spec: Spec) -> Staged | None:
    """A fresh output folder for the child that reads ``spec`` in the sandbox (None when this worker reads
    unsandboxed: the child then writes in ``spec.out_dir`` itself). What a reader reads from its output folder is
    put there first: the OCR texts of a stamps run (``ocr_texts.json``), copied, never linked."""
    if not _staging:
        return None
    if not _staging[0].is_dir():
        # The sandbox shows this very folder at OUTPUTS; one made again in its place would not be the one it shows.
        raise StagingMissing(f"The file could not be processed: the readers' staging folder {_staging[0]} was "
                             "removed while this worker ran (its data directory moved or unmounted); restart the "
                             "worker.")
    host = Path(tempfile.mkdtemp(prefix="out-", dir=_staging[0]))
    texts = Path(spec.out_dir) / "ocr_texts.json"
    if texts.is_file():
        shutil.copyfile(texts, host / texts.name)
    return Staged(host, f"{sandbox.OUTPUTS}/{host.name}")


def collect(staged: Staged, out_dir: str) -> list[str]:
    """Move what the child wrote in ``staged`` into ``out_dir`` (made if anything is moved): regular files whose
    names a reader writes (:data:`_OUTPUT_NAMES`), and nothing else: no link, device or folder of another name,
    and nothing through a link (a child taken over may have left one to a host file for the worker to follow).
    Returns the relative names left behind. A file is moved, then looked at again where it landed, beyond the
    child's reach: one swapped for a link between the two is removed."""
    left: list[str] = []
    for root, folders, files in os.walk(staged.host, followlinks=False):
        for name in [*files, *(f for f in folders if os.path.islink(os.path.join(root, f)))]:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, staged.host)
            info = os.lstat(path)
            if not _OUTPUT_NAMES.fullmatch(relative) or not stat.S_ISREG(info.st_mode):
                if relative != "ocr_texts.json":
                    left.append(relative)
                continue
            target = Path(out_dir) / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.replace(path, target)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                shutil.copyfile(path, target, follow_symlinks=False)
            if not stat.S_ISREG(os.lstat(target).st_mode):
                os.unlink(target)
                left.append(relative)
    return left


# Shells the wrapper script (:func:`_wrapper`) runs in until it execs bubblewrap, and how long that may take.
_SHELLS = frozenset({"sh", "dash", "bash"})
_EXEC_WAIT_S = 10.0


def _started_program(pid) -> str:
    """The name of the program process ``pid`` runs once the wrapper script has exec'd it ('' when unknown).
    multiprocessing returns as soon as it has started the fork server's process, which is first the shell of the
    wrapper script: read at once, it can still be ``sh`` (and was, now and then, on a loaded machine)."""
    deadline = time.monotonic() + _EXEC_WAIT_S
    while True:
        try:
            name = Path(os.readlink(f"/proc/{int(pid)}/exe")).name
        except (OSError, TypeError, ValueError):
            return ""
        if name not in _SHELLS or time.monotonic() >= deadline:
            return name
        time.sleep(0.005)


# What a forked child is told to do before it runs its target, less what the sandbox cannot show it: the main
# script of the process that owns the pool (manage.py, a test runner), run again as ``__mp_main__``, and that
# process's working folder. The pool's child needs neither: its target lives in this package.
_NOT_IN_SANDBOX = ("init_main_from_path", "init_main_from_name", "dir")


class _Popen(popen_forkserver.Popen):
    """multiprocessing's fork-server start (``popen_forkserver.Popen._launch`` of Python 3.11, unchanged but for
    the preparation data)."""

    def _launch(self, process_obj) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        for key in _NOT_IN_SANDBOX:
            prep_data.pop(key, None)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as stream:
            stream.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class SandboxProcess(multiprocessing.get_context("forkserver").Process):
    """A process forked by the fork server (in the sandbox or not) that does not run the owner's main script."""

    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


def listen_for_pid(connection) -> None:
    """Ask the kernel to attach the sender's credentials to what arrives on the pool's end of ``connection``."""
    with socket.socket(fileno=os.dup(connection.fileno())) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)


def say_pid(connection) -> None:
    """The child's first message: one byte, with its credentials attached by the kernel (its process id as the
    receiving process's namespace sees it)."""
    with socket.socket(fileno=os.dup(connection.fileno())) as sock:
        creds = struct.pack("3i", os.getpid(), os.getuid(), os.getgid())
        sock.sendmsg([b"p"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])


def hear_pid(connection, timeout_s: float) -> int | None:
    """The host's process id of the child on the other end of ``connection``, from its first message; None when it
    sent none within ``timeout_s`` seconds."""
    if not connection.poll(timeout_s):
        return None
    with socket.socket(fileno=os.dup(connection.fileno())) as sock:
        data, ancillary, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(struct.calcsize("3i")))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and data == b"p":
            return struct.unpack("3i", payload[:12])[0]
    return None


def make_undumpable() -> None:
    """No other process of the same user (another child in the sandbox) may read this one's memory or descriptors
    through ``/proc`` or ptrace."""
    try:
        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def open_files(spec: Spec, staged: bool = False) -> tuple[list[str], list[int]]:
    """Open what the child of ``spec`` may touch: its input files read-only and, unless its outputs are ``staged``
    (:func:`stage`), its output folder (made here); with them staged, the display PDF an earlier run made, if any,
    read-only instead. Return the field each descriptor stands for and the descriptors. Raises OSError when one
    cannot be opened."""
    fields: list[str] = []
    fds: list[int] = []
    try:
        for name in _FILE_FIELDS:
            if getattr(spec, name):
                fds.append(os.open(getattr(spec, name), os.O_RDONLY | os.O_CLOEXEC))
                fields.append(name)
        for image in dict.fromkeys(spec.images):  # one descriptor a file, however many of its pages are named
            fds.append(os.open(image, os.O_RDONLY | os.O_CLOEXEC))
            fields.append(f"image:{image}")
        display = os.path.join(spec.out_dir, "display.pdf")
        if staged and os.path.isfile(display):
            fds.append(os.open(display, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW))
            fields.append("display")
        elif not staged:
            os.makedirs(spec.out_dir, exist_ok=True)
            fds.append(os.open(spec.out_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
            fields.append("out_dir")
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    return fields, fds


def send_fds(connection, fds: list[int]) -> None:
    with socket.socket(fileno=os.dup(connection.fileno())) as sock:
        for start in range(0, len(fds), FD_BATCH):
            socket.send_fds(sock, [b"f"], fds[start:start + FD_BATCH])


def receive_spec(connection, spec: Spec, fields: list[str]) -> tuple[Spec, list[int]]:
    """Receive the descriptors for ``fields`` and return ``spec`` with each file named by its ``/proc/self/fd``
    path (the images' own paths kept in ``image_sources``, for names in messages and keys in events), and the
    descriptors (to close once the file is read)."""
    fds: list[int] = []
    with socket.socket(fileno=os.dup(connection.fileno())) as sock:
        while len(fds) < len(fields):
            _, received, _, _ = socket.recv_fds(sock, 1, min(FD_BATCH, len(fields) - len(fds)))
            if not received:
                raise EOFError("the pool sent fewer descriptors than files")
            fds += received
    paths = {field: f"{PROC_FD}/{fd}" for field, fd in zip(fields, fds)}
    images = tuple(paths[f"image:{image}"] for image in spec.images)
    changes = {name: paths[name] for name in (*_FILE_FIELDS, "out_dir", "display") if name in paths}
    return replace(spec, images=images, image_sources=spec.images, **changes), fds
