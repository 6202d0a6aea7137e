"""The readers' sandbox: a process forked where the ingest pool's children are forked (what a file that took one
over would run as) cannot open a file of the data directory or reach a socket; where bubblewrap cannot start,
files fail with the reason instead of being read unsandboxed."""

import os
import shlex
import socket
import subprocess
import sys

from matters.exhibits.ingest import pool as pool_module
from matters.exhibits.ingest import reader_sandbox, sandbox
from matters.exhibits.ingest.pool import IngestPool, sandbox_problem
from matters.exhibits.ingest.spec import Spec

COULD_NOT = 3  # the exit status of a probe whose attempt failed with OSError


def in_a_reader(code: str) -> int:
    """Run Python ``code`` in a process forked inside the readers' sandbox, as the pool's children are; return its
    exit status (COULD_NOT when the code raised OSError)."""
    wrapped = f"import sys\ntry:\n{''.join('    ' + line + chr(10) for line in code.splitlines())}" \
              f"except OSError:\n    sys.exit({COULD_NOT})\n"
    process = reader_sandbox.SandboxProcess(target=os.execv, args=(sys.executable, [sys.executable, "-c", wrapped]))
    process.start()
    process.join(timeout=60)
    return process.exitcode


def test_a_reader_cannot_open_the_data_directory_or_a_socket(data_dir, tmp_path):
    assert sandbox_problem(sandboxed=True, data_dir=str(data_dir)) == ""
    secret = data_dir / "blobs" / "ab" / "another-matters-file.pdf"
    secret.parent.mkdir(parents=True)
    secret.write_bytes(b"%PDF-1.7 privileged")
    listener = socket.create_server(("127.0.0.1", 0))
    unix_path = tmp_path / "worker.sock"
    unix_listener = socket.socket(socket.AF_UNIX)
    unix_listener.bind(str(unix_path))
    unix_listener.listen()
    try:
        # What the reader needs is there: its own code, read-only.
        assert in_a_reader(f"open({reader_sandbox.__file__!r}).read()") == 0
        assert in_a_reader(f"open({reader_sandbox.__file__!r}, 'a')") == COULD_NOT
        # The data directory is not.
        assert in_a_reader(f"open({str(secret)!r}, 'rb').read()") == COULD_NOT
        assert in_a_reader(f"import os; os.listdir({str(data_dir)!r})") == COULD_NOT
        # Nor the network (a listener on the host's loopback) or a local socket of the host.
        port = listener.getsockname()[1]
        assert in_a_reader(f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)") == COULD_NOT
        assert in_a_reader("import socket; socket.create_connection(('1.1.1.1', 443), timeout=5)") == COULD_NOT
        assert in_a_reader(f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(unix_path)!r})") \
            == COULD_NOT
    finally:
        listener.close()
        unix_listener.close()


def test_a_pooled_child_reads_its_file_and_writes_its_folder_only_through_what_it_was_given(data_dir, tmp_path):
    """The file's path never reaches the child: it reads the original and writes its output through descriptors."""
    import pymupdf

    source = data_dir / "blobs" / "original.pdf"
    source.parent.mkdir(parents=True)
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 72), "Deposition of the records custodian, taken March 3, 2021.")
        doc.save(source)
    out_dir = data_dir / "derived" / "7"
    pool = IngestPool(idle_children=1)
    try:
        spec = Spec(source=str(source), kind="pdf", out_dir=str(out_dir), data_dir=str(data_dir))
        events = list(pool.run(spec, memory_mb=1536, timeout_s=120))
        assert events[-1]["event"] == "done", events[-1]
        assert "records custodian" in events[1]["text"]
        assert not out_dir.exists()  # nothing written there: the folder made for the child is not left behind
        previews = list(pool.run(spec, memory_mb=1536, timeout_s=120, job="previews"))
        assert previews[-1]["event"] == "previews", previews[-1]
        assert (out_dir / "pages" / "0001.jpg").is_file()
    finally:
        pool.shutdown()


def test_without_bubblewrap_a_file_fails_with_the_reason(monkeypatch, data_dir, tmp_path):
    monkeypatch.setattr(pool_module, "_mode", {})  # as in a worker that has read nothing yet
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    pool = IngestPool(idle_children=0)
    spec = Spec(source=str(tmp_path / "any.pdf"), kind="pdf", out_dir=str(tmp_path / "out"), data_dir=str(data_dir))
    [event] = list(pool.run(spec, memory_mb=1536, timeout_s=60))
    assert event["event"] == "error" and event["status"] == "failed"
    assert "read only inside a sandbox" in event["reason"]
    assert "bubblewrap (bwrap) is not installed" in event["reason"]
    assert "LAWDESK_READERS_UNSANDBOXED=1" in event["reason"]
    assert pool.pids() == []


def test_a_data_directory_inside_what_the_sandbox_shares_is_refused(data_dir):
    assert sandbox_problem(sandboxed=True, data_dir=str(data_dir)) == ""
    inside = reader_sandbox.readonly_roots()[0] / "var"
    assert "lies inside" in sandbox_problem(sandboxed=True, data_dir=str(inside))


def test_a_worker_does_not_mix_sandboxed_and_unsandboxed_reading(data_dir):
    assert sandbox_problem(sandboxed=True, data_dir=str(data_dir)) == ""
    assert "restart the worker" in sandbox_problem(sandboxed=False, data_dir=str(data_dir))


READ_UNSANDBOXED = """
import json, sys
from matters.exhibits.ingest.runner import run_child
from matters.exhibits.ingest.spec import Spec
spec = Spec(source=sys.argv[1], kind="pdf", out_dir=sys.argv[2], readers_unsandboxed=True)
print(json.dumps(list(run_child(spec, memory_mb=1536, timeout_s=120))[-1]))
"""


def test_reading_without_the_sandbox_is_explicit_and_said_on_every_file(tmp_path):
    """LAWDESK_READERS_UNSANDBOXED (Spec.readers_unsandboxed) is the one way to read outside the sandbox, in a
    worker of its own (the mode is fixed by the first file), and each file read so carries the note."""
    import json
    import subprocess

    import pymupdf

    from lawdesk.settings import BASE_DIR

    source = tmp_path / "memo.pdf"
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 72), "Memorandum to file regarding the custodian interviews of May 2021.")
        doc.save(source)
    output = subprocess.run([sys.executable, "-c", READ_UNSANDBOXED, str(source), str(tmp_path / "out")],
                            cwd=BASE_DIR, capture_output=True, text=True, timeout=120, check=True)
    done = json.loads(output.stdout.strip().splitlines()[-1])
    assert done["event"] == "done"
    assert done["notes"] == ["This file was read without the readers' sandbox: the operator set "
                             "LAWDESK_READERS_UNSANDBOXED (docs/security.md)."]


FORK_SERVER_FIRST = """
import json, multiprocessing, sys
from matters.exhibits.ingest.pool import _context
from matters.exhibits.ingest.runner import run_child
from matters.exhibits.ingest.spec import Spec
_context()  # the pool's own fork-server context, started by other code before any file is read
multiprocessing.forkserver.ensure_running()
spec = Spec(source=sys.argv[1], kind="pdf", out_dir=sys.argv[2])
print(json.dumps(list(run_child(spec, memory_mb=1536, timeout_s=120))[-1]))
"""


def test_a_fork_server_started_outside_the_sandbox_is_not_used_unsandboxed(tmp_path):
    import json
    import subprocess

    from lawdesk.settings import BASE_DIR

    source = tmp_path / "memo.pdf"
    source.write_bytes(b"%PDF-1.7")
    output = subprocess.run([sys.executable, "-c", FORK_SERVER_FIRST, str(source), str(tmp_path / "out")],
                            cwd=BASE_DIR, capture_output=True, text=True, timeout=120, check=True)
    final = json.loads(output.stdout.strip().splitlines()[-1])
    assert final["event"] == "error" and "runs outside bubblewrap" in final["reason"]


def test_the_fork_servers_program_is_read_once_the_wrapper_shell_has_execd_it(tmp_path):
    # multiprocessing returns while the wrapper script's shell may not yet have exec'd bubblewrap: read at once,
    # the fork server looked like "sh" and the first file of a worker failed as read outside the sandbox.
    started = subprocess.Popen(["/bin/sh", "-c", f"sleep 0.3; exec {shlex.quote(sys.executable)} -c "
                                "'import time; time.sleep(5)'"])
    try:
        assert reader_sandbox._started_program(started.pid) == os.path.basename(os.path.realpath(sys.executable))
    finally:
        started.kill()
        started.wait()
    assert reader_sandbox._started_program(None) == ""


def test_the_fork_server_is_undumpable_to_the_readers_it_forks(data_dir):
    """A reader (a file that took a child over) shares the fork server's user in the sandbox: were the server
    dumpable, it could read the server's memory, environment and descriptors through ``/proc``."""
    assert sandbox_problem(sandboxed=True, data_dir=str(data_dir)) == ""
    # The probe's parent is the fork server it was forked from; its own /proc entries stay readable.
    assert in_a_reader("open('/proc/self/environ', 'rb').read()") == 0
    assert in_a_reader("import os, sys; sys.exit(b'forkserver' not in open(f'/proc/{os.getppid()}/cmdline', 'rb')"
                       ".read())") == 0
    assert in_a_reader("import os; open(f'/proc/{os.getppid()}/environ', 'rb').read()") == COULD_NOT
    assert in_a_reader("import os; fds = f'/proc/{os.getppid()}/fd'; os.readlink(f'{fds}/{os.listdir(fds)[0]}')") \
        == COULD_NOT


def test_a_readers_output_folder_leads_nowhere_on_the_host(data_dir):
    """A child writes in its staging folder, a bind mount: ``..`` from it is the sandbox's root, so a reader taken
    over by a file cannot climb from where it writes to the data directory (a descriptor of the exhibit's output
    folder, handed over before, led out through ``/proc/self/fd/N/../..``)."""
    assert sandbox_problem(sandboxed=True, data_dir=str(data_dir)) == ""
    secret = data_dir / "blobs" / "cd" / "privileged-memo.pdf"
    secret.parent.mkdir(parents=True)
    secret.write_bytes(b"%PDF-1.7 privileged")
    climb = "/".join([".."] * 12)
    assert in_a_reader(f"open('{sandbox.OUTPUTS}/{climb}{secret}', 'rb').read()") == COULD_NOT
    assert in_a_reader(f"import os; os.listdir('{sandbox.OUTPUTS}/{climb}{data_dir}')") == COULD_NOT
    # What it may do there: write, for the worker to collect.
    assert in_a_reader(f"open('{sandbox.OUTPUTS}/probe.txt', 'w').write('x')") == 0


def test_only_a_readers_own_outputs_are_collected_and_never_through_a_link(tmp_path):
    """What a child leaves in its staging folder reaches the exhibit's folder only as regular files of the names a
    reader writes: a link to a host file (for the worker to follow later), a file of another name, a folder where
    a page image should be are left behind and named."""
    host_file = tmp_path / "settings.py"
    host_file.write_text("SECRET_KEY = 'x'")
    staged = reader_sandbox.Staged(tmp_path / "staged", "/outputs/staged")
    (staged.host / "pages").mkdir(parents=True)
    (staged.host / "thumbs").mkdir()
    (staged.host / "display.pdf").write_bytes(b"%PDF-1.7 display")
    (staged.host / "pages" / "0001.jpg").write_bytes(b"\xff\xd8 page")
    (staged.host / "thumbs" / "0001.jpg").symlink_to(host_file)
    (staged.host / "pages" / "0002.jpg").mkdir()
    (staged.host / "assembled.pdf").symlink_to(host_file)
    (staged.host / "notes.txt").write_text("left by the child")
    out_dir = tmp_path / "derived" / "9"
    left = reader_sandbox.collect(staged, str(out_dir))
    assert (out_dir / "display.pdf").read_bytes() == b"%PDF-1.7 display"
    assert (out_dir / "pages" / "0001.jpg").read_bytes() == b"\xff\xd8 page"
    assert not (out_dir / "thumbs" / "0001.jpg").exists() and not (out_dir / "thumbs" / "0001.jpg").is_symlink()
    assert not (out_dir / "assembled.pdf").exists() and not (out_dir / "assembled.pdf").is_symlink()
    assert not (out_dir / "notes.txt").exists()
    assert set(left) == {"thumbs/0001.jpg", "assembled.pdf", "notes.txt"}
    assert host_file.read_text() == "SECRET_KEY = 'x'"


def test_a_staging_folder_removed_under_a_worker_fails_each_file_with_the_reason(monkeypatch, data_dir, tmp_path):
    """The sandbox shows the staging folder it started with; if that folder goes (its disk unmounted), a folder made
    again in its place is not the one the children write in, so files fail saying why, instead of being read."""
    assert sandbox_problem(sandboxed=True, data_dir=str(data_dir)) == ""
    monkeypatch.setattr(reader_sandbox, "_staging", [tmp_path / "unmounted" / "reader-staging"])
    source = tmp_path / "memo.pdf"
    source.write_bytes(b"%PDF-1.7")
    pool = IngestPool(idle_children=1)
    try:
        events = list(pool.run(Spec(source=str(source), kind="pdf", out_dir=str(tmp_path / "out"),
                                    data_dir=str(data_dir)), memory_mb=1536, timeout_s=60))
    finally:
        pool.shutdown()
    assert events[-1]["event"] == "error" and "restart the worker" in events[-1]["reason"]
    assert not (tmp_path / "unmounted").exists()
