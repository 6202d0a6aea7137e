"""The ingest pool: a child reads many files in turn; one that fails, breaches a limit or has read its share of
files is replaced, and the file after it is read by a fresh child as if nothing had happened."""

import itertools
import os
import signal
import subprocess
import sys
import time

import psutil
import pymupdf
import pytest

from lawdesk.settings import BASE_DIR
from matters.exhibits.ingest.child import usable_text
from matters.exhibits.ingest.pool import BATCH_PAGES, IngestPool, crash_reason
from matters.exhibits.ingest.spec import Spec

_outputs = itertools.count()


@pytest.fixture
def pool():
    started = IngestPool(idle_children=1, files_per_child=3)
    yield started
    started.shutdown()


def read(pool: IngestPool, path, tmp_path, *, memory_mb: int = 1536, timeout_s: int = 120) -> list[dict]:
    spec = Spec(source=str(path), kind="pdf", out_dir=str(tmp_path / f"out-{next(_outputs)}"), ocr_workers=1)
    return list(pool.run(spec, memory_mb=memory_mb, timeout_s=timeout_s))


def the_child(pool: IngestPool) -> int:
    """The one child waiting in a pool of one idle child."""
    (pid,) = pool.pids()
    return pid


def gone(pid: int, within_s: float = 15.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie waiting for its parent) within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_a_child_reads_several_files_in_turn(corpus, tmp_path):
    pool = IngestPool(idle_children=1, files_per_child=10)
    names = ["court/ca7_3.pdf", "court/ca2_1-1.pdf", "court/ca3_003112692106.pdf"]
    pids = []
    for name in names:
        path = corpus(name)
        events = read(pool, path, tmp_path)
        assert events[-1]["event"] == "done", events[-1]
        with pymupdf.open(path) as doc:
            expected = [usable_text(page.get_text()) for page in doc]
        assert [event["text"] for event in events if event["event"] == "page"] == expected
        pids.append(the_child(pool))
    pool.shutdown()
    assert pids[0] == pids[1] == pids[2]


def test_the_pages_of_a_long_file_arrive_once_each_in_order(pool, corpus, tmp_path):
    # More pages than a child sends together (pool.BATCH_PAGES): the events come in several lists.
    long_file = tmp_path / "long.pdf"
    with pymupdf.open() as combined:
        for name in ["nc-gift-surplus.pdf", "ca1_00117684624.pdf", "ca9_19.pdf", "ca5_00516242060.pdf"]:
            with pymupdf.open(corpus(f"court/{name}")) as source:
                combined.insert_pdf(source)
        combined.save(long_file)
        expected = [usable_text(page.get_text()) for page in combined]
    assert len(expected) > 2 * BATCH_PAGES
    events = read(pool, long_file, tmp_path)
    assert [event["event"] for event in events] == ["start"] + ["page"] * len(expected) + ["done"]
    assert [event["number"] for event in events[1:-1]] == list(range(1, len(expected) + 1))
    assert [event["text"] for event in events[1:-1]] == expected


def test_after_its_share_of_files_a_child_is_replaced(pool, corpus, tmp_path):
    path = corpus("court/ca7_3.pdf")
    pids = []
    for _ in range(3):
        assert read(pool, path, tmp_path)[-1]["event"] == "done"
        pids.append(pool.pids())
    assert pids[0] == pids[1] and pids[2] == []  # the third file was the child's last
    assert read(pool, path, tmp_path)[-1]["event"] == "done"
    assert the_child(pool) not in pids[0] and gone(pids[0][0])


def test_a_child_past_the_wall_clock_limit_is_replaced_and_the_next_file_is_read(pool, corpus, tmp_path):
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"
    first = the_child(pool)
    slow = read(pool, corpus("odd/cardinal.pdf"), tmp_path, timeout_s=1)  # four scanned pages: OCR takes longer
    assert slow[-1]["event"] == "error"
    assert "longer than the limit of 1 seconds" in slow[-1]["reason"]
    assert pool.pids() == [] and gone(first)
    after = read(pool, corpus("court/ca7_3.pdf"), tmp_path)
    assert after[-1]["event"] == "done" and the_child(pool) != first


@pytest.mark.ocr
def test_a_child_past_the_memory_limit_is_replaced_and_the_next_file_is_read(pool, corpus, tmp_path):
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path, memory_mb=400)[-1]["event"] == "done"
    first = the_child(pool)
    enormous = read(pool, corpus("odd/enormous.pdf"), tmp_path, memory_mb=400)
    assert enormous[-1]["event"] == "error" and "memory limit of 400 MiB" in enormous[-1]["reason"]
    assert pool.pids() == [] and gone(first)
    after = read(pool, corpus("court/ca7_3.pdf"), tmp_path, memory_mb=400)
    assert after[-1]["event"] == "done" and the_child(pool) != first


def test_a_child_that_crashes_mid_file_is_replaced_with_the_reason_of_a_crash(pool, corpus, tmp_path):
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"
    first = the_child(pool)
    spec = Spec(source=str(corpus("odd/cardinal.pdf")), kind="pdf", out_dir=str(tmp_path / "crash"), ocr_workers=1)
    events = []
    for event in pool.run(spec, memory_mb=1536, timeout_s=120):
        events.append(event)
        if event["event"] == "start":
            os.kill(first, signal.SIGSEGV)  # what a parser bug does to the child
    assert events[-1] == {"event": "error", "status": "failed", "reason": crash_reason(-signal.SIGSEGV, 1536)}
    assert pool.pids() == []
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"


def test_a_file_that_fails_is_the_last_its_child_reads(pool, corpus, tmp_path):
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"
    first = the_child(pool)
    invalid = read(pool, corpus("odd/invalid.pdf"), tmp_path)
    assert invalid[-1]["event"] == "error" and "damaged beyond repair" in invalid[-1]["reason"]
    assert pool.pids() == [] and gone(first)
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"


def test_an_idle_child_that_died_is_replaced_before_the_next_file(pool, corpus, tmp_path):
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"
    first = the_child(pool)
    os.kill(first, signal.SIGKILL)
    assert gone(first)
    after = read(pool, corpus("court/ca7_3.pdf"), tmp_path)
    assert after[-1]["event"] == "done", after[-1]
    assert the_child(pool) != first


def test_a_child_left_mid_file_by_its_reader_is_stopped_not_reused(pool, corpus, tmp_path):
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"
    first = the_child(pool)
    spec = Spec(source=str(corpus("odd/cardinal.pdf")), kind="pdf", out_dir=str(tmp_path / "left"), ocr_workers=1)
    events = pool.run(spec, memory_mb=1536, timeout_s=120)
    assert next(events)["event"] == "start"
    events.close()  # the worker stopped reading (an error of its own): the child is still busy with the file
    assert pool.pids() == [] and gone(first)


WORKER = """
import sys
from matters.exhibits.ingest.spec import Spec
from matters.exhibits.ingest.pool import shared_pool
from matters.exhibits.ingest.runner import run_child
def read(path, out):
    return run_child(Spec(source=path, kind="pdf", out_dir=out, ocr_workers=1), memory_mb=1536, timeout_s=300)
events = list(read(sys.argv[1], sys.argv[3] + "-1"))
assert events[-1]["event"] == "done", events[-1]
print(" ".join(map(str, shared_pool().pids())), flush=True)
if sys.argv[4] == "exit":
    sys.stdin.read()  # until the test closes it: then a normal exit
else:
    for event in read(sys.argv[2], sys.argv[3] + "-2"):  # killed while its child runs Tesseract on this file
        print(event["event"], flush=True)
"""


@pytest.mark.parametrize("end", ["exit", "kill -9"])
def test_the_pool_ends_with_the_worker(corpus, tmp_path, end):
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(corpus("court/ca7_3.pdf")), str(corpus("odd/cardinal.pdf")),
         str(tmp_path / "out"), end],
        cwd=BASE_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        children = [int(pid) for pid in worker.stdout.readline().split()]
        assert children, "the worker read its file in a pooled child"
        if end == "kill -9":
            assert worker.stdout.readline().strip() == "start"
            deadline = time.monotonic() + 60
            while not any(p.name() == "tesseract" for p in psutil.Process(worker.pid).children(recursive=True)):
                assert time.monotonic() < deadline, "no Tesseract process was seen"
                time.sleep(0.05)
        # Everything the worker started: the fork server, the pooled children, Tesseract.
        descendants = {process.pid: process.name() for process in psutil.Process(worker.pid).children(recursive=True)}
        assert set(children) <= set(descendants)
        if end == "kill -9":
            worker.kill()
        else:
            worker.stdin.close()
        assert worker.wait(timeout=60) in (0, -signal.SIGKILL)
        assert {pid: name for pid, name in descendants.items() if not gone(pid)} == {}
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


class _Payload:
    """What a child taken over by a hostile file could send: unpickling it runs ``touch MARKER``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _hostile_child(connection, taken, send: str, marker: str) -> None:
    connection.recv()
    taken.value += 1
    if send == "pickle":
        connection.send([_Payload(marker)])  # multiprocessing's default: pickled
    elif send == "json-not-events":
        connection.send_bytes(b'{"event": "done"}')
    else:
        connection.send_bytes(b"[" + b" " * 512 * 1024 + b"]")
    time.sleep(60)


@pytest.mark.parametrize("send", ["pickle", "json-not-events", "too-long"])
def test_what_a_taken_over_child_sends_is_read_as_data_and_never_run(pool, corpus, tmp_path, monkeypatch, send):
    """A child reads hostile files, so one may be taken over; what it sends the worker is JSON, read as data: a
    pickle that would run a command, a message that is not events or one over the limit fails that file alone,
    runs nothing, and the child is stopped; the next file is read by a fresh child."""
    import ctypes
    import multiprocessing

    from matters.exhibits.ingest import pool as pool_module

    monkeypatch.setattr(pool_module, "MESSAGE_MAX_BYTES", 256 * 1024)  # a 1-page filing's events fit
    marker = tmp_path / "ran"
    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe(duplex=True)
    taken = context.RawValue(ctypes.c_uint64, 0)
    process = context.Process(target=_hostile_child, args=(child_end, taken, send, str(marker)), daemon=True)
    process.start()
    child_end.close()
    pool._idle.append(pool_module._Child(process, parent_end, 1536, 3, taken))
    events = read(pool, corpus("court/ca7_3.pdf"), tmp_path)
    assert events == [{"event": "error", "status": "failed", "reason": pool_module.UNREADABLE_MESSAGE}]
    assert not marker.exists()
    assert gone(process.pid)
    assert read(pool, corpus("court/ca7_3.pdf"), tmp_path)[-1]["event"] == "done"
