"""Run a program that parses an untrusted file inside a bubblewrap sandbox.

The sandbox sees the system's programs and libraries read-only (``/usr`` and the few files under ``/etc`` that
fonts and the dynamic linker need), its one input file read-only, and one empty output folder it may write; its
home and ``/tmp`` are empty in-memory folders; it has no network (a new network namespace holds only loopback), no
view of other processes, and no data directory. bubblewrap (``bwrap``, Debian package ``bubblewrap``) is the tool
Flatpak uses for the same purpose: a small setuid-free program that builds the sandbox from Linux namespaces, needs
no daemon and no root, and exits with the program it runs. docs/security.md says why it was chosen.

This module imports nothing from Django: the ingest child calls it.
"""

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SANDBOX_HOME = "/home/sandbox"
SANDBOX_INPUT_DIR = "/sandbox/in"
SANDBOX_OUTPUT_DIR = "/sandbox/out"
# What programs and libraries need under /etc; the rest of /etc (passwords, keys, host configuration) stays out.
_ETC_ENTRIES = ("fonts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "libreoffice",
                "localtime", "mime.types", "nsswitch.conf", "passwd", "group")
_PROBE_TIMEOUT_S = 20


class SandboxUnavailable(Exception):
    """The sandbox cannot start on this machine; the message says why and what an operator can do."""


@dataclass(frozen=True)
class Mounts:
    """The one input file (read-only at ``/sandbox/in/<name>``) and the one empty output folder (``/sandbox/out``),
    both host paths."""

    input_file: Path
    output_dir: Path

    @property
    def sandbox_input(self) -> str:
        return f"{SANDBOX_INPUT_DIR}/{self.input_file.name}"


def bwrap_path() -> str | None:
    """Return the bubblewrap executable's path, or None when it is not installed."""
    return shutil.which("bwrap")


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/", top)
        if path.is_symlink():  # merged /usr (Debian 12): /lib -> usr/lib
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for entry in _ETC_ENTRIES:
        path = Path("/etc", entry)
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _base_args(bwrap: str) -> list[str]:
    return [
        bwrap,
        "--unshare-all",  # user, IPC, PID, network, UTS and cgroup namespaces: no network, no other processes
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into the worker's terminal
        "--cap-drop", "ALL",
        "--clearenv",
        "--setenv", "HOME", SANDBOX_HOME,
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "OMP_THREAD_LIMIT", "1",
        *_system_binds(),
        "--proc", "/proc",
        "--dev", "/dev",
        "--tmpfs", "/tmp",
        "--tmpfs", "/home",
        "--dir", SANDBOX_HOME,
    ]


def sandboxed(command: Sequence[str], mounts: Mounts, *, hidden: Sequence[str] = ()) -> list[str]:
    """Return the argv that runs ``command`` (its paths as seen inside: ``mounts.sandbox_input``,
    ``/sandbox/out``) in the sandbox, working in ``/sandbox/out``.

    ``hidden``: host folders (the data directory) that must not be visible; raises SandboxUnavailable if one lies
    inside a folder the sandbox shares (``/usr``, parts of ``/etc``), since it would then be readable.
    """
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxUnavailable(
            "the sandbox program bubblewrap (bwrap) is not installed; install the Debian package bubblewrap "
            "(scripts/setup.sh does)"
        )
    args = _base_args(bwrap)
    _refuse_hidden_inside(args, hidden, "the sandbox")
    return [
        *args,
        "--ro-bind", str(mounts.input_file), mounts.sandbox_input,
        "--bind", str(mounts.output_dir), SANDBOX_OUTPUT_DIR,
        "--chdir", SANDBOX_OUTPUT_DIR,
        "--",
        *command,
    ]


# Whether this process runs inside the readers' sandbox (a pooled ingest child: reader_sandbox). A sandbox
# cannot be started inside it (bubblewrap cannot mount a process filesystem under the one it made), and a program
# it runs is already as walled in as a sandbox of its own would make it, bar a private /tmp.
_inside = False


def enter_reader_sandbox() -> None:
    """Mark this process as one running inside the readers' sandbox."""
    global _inside
    _inside = True


def inside() -> bool:
    """Whether this process runs inside the readers' sandbox."""
    return _inside


def inside_command(command: Sequence[str], mounts: Mounts) -> list[str]:
    """``command`` as :func:`sandboxed` would run it, for a process already inside the readers' sandbox: the
    paths it names as seen in a sandbox of its own (``mounts.sandbox_input``, ``/sandbox/out``, the sandbox's
    home) become the real ones, and the home a folder beside the output, private to this command."""
    home = mounts.output_dir.parent / "home"
    home.mkdir(exist_ok=True)
    real = {mounts.sandbox_input: str(mounts.input_file), SANDBOX_OUTPUT_DIR: str(mounts.output_dir)}
    argv = []
    for arg in command:
        for seen, path in real.items():
            arg = arg.replace(seen, path)
        argv.append(arg.replace(SANDBOX_HOME, str(home)))
    return ["env", f"HOME={home}", *argv]


# Where the readers' sandbox shows its writable staging folder (reader_argv's ``outputs``).
OUTPUTS = "/outputs"


def reader_argv(readonly: Sequence[Path], *, hidden: Sequence[str] = (),
                aliases: Sequence[tuple[Path, Path]] = (), outputs: Path | None = None) -> list[str]:
    """Return the start of an argv that runs a program in the readers' sandbox
    (:mod:`matters.exhibits.ingest.reader_sandbox`): the system as for a conversion, plus the folders ``readonly``
    (the Python environment, LawDesk's ``matters`` package) read-only at their own paths, and no input or output
    folder: files come as descriptors. The program's argv follows. ``hidden``: host folders (the data directory)
    that must not be visible; raises SandboxUnavailable if one lies inside a folder the sandbox shares.
    ``aliases``: (folder, path) pairs, a folder of ``readonly`` shown again at another path (the virtual
    environment as the interpreter names it, through a link). ``outputs``: the host folder shown writable at
    :data:`OUTPUTS` (the worker's staging folder, :func:`matters.exhibits.ingest.reader_sandbox.stage`): a bind
    mount, whose parent inside is the sandbox's own root, so ``..`` from it leads nowhere on the host."""
    bwrap = bwrap_path()
    if bwrap is None:
        sandboxed(["true"], Mounts(Path("/dev/null"), Path("/tmp")))  # raises with the install advice
    args = _base_args(bwrap)
    for folder in readonly:
        args += ["--ro-bind", str(folder), str(folder)]
    for folder, path in aliases:
        args += ["--ro-bind", str(folder), str(path)]
    _refuse_hidden_inside(args, hidden, "the readers' sandbox")
    if outputs is not None:
        args += ["--bind", str(outputs), OUTPUTS]
    return [*args, "--chdir", "/", "--"]


def _refuse_hidden_inside(args: list[str], hidden: Sequence[str], sandbox_name: str) -> None:
    """Raise SandboxUnavailable when a folder of ``hidden`` lies inside a folder ``args`` bind read-only."""
    shared = [Path(args[i + 1]).resolve() for i, arg in enumerate(args) if arg == "--ro-bind"]
    for folder in hidden:
        resolved = Path(folder).resolve()
        if any(resolved == root or root in resolved.parents for root in shared):
            raise SandboxUnavailable(f"the data directory {folder} lies inside {', '.join(map(str, shared))}, "
                                     f"which {sandbox_name} shares read-only; move it elsewhere")


def probe() -> None:
    """Start an empty sandbox once; raise SandboxUnavailable with bubblewrap's own words if it cannot start
    (no bwrap, user namespaces disabled by the kernel or a container's seccomp policy)."""
    bwrap = bwrap_path()
    if bwrap is None:
        sandboxed(["true"], Mounts(Path("/dev/null"), Path("/tmp")))  # raises with the install advice
    try:
        result = subprocess.run([*_base_args(bwrap), "--", "true"], capture_output=True, timeout=_PROBE_TIMEOUT_S,
                                check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"the sandbox (bubblewrap) did not start: {exc}") from exc
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()[:300] or f"exit status {result.returncode}"
        raise SandboxUnavailable(
            f"the sandbox (bubblewrap) could not start on this server ({message}); it needs unprivileged user "
            "namespaces (kernel.unprivileged_userns_clone=1, or a container that allows them)"
        )
