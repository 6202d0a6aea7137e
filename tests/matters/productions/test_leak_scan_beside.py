"""A large production's natives are scanned in a child process beside the stamping (bates/leak_pool.py): what the
worker takes over from it is what it would have found reading them itself, the combined PDF still skips what a
native held, and a native the child cannot read fails the scan as it would in the worker."""

import pymupdf
import pytest

from matters.models import Production
from matters.productions import leak_scan
from matters.productions.bates.leak_pool import NativeScan
from matters.productions.bates.leaks import IngestedPages, Scanner, Secrets
from matters.productions.bates.stamp import StampSpec, stamp_and_append

NAME = "Margaret Holloway"


def secrets() -> Secrets:
    found = Secrets()
    found.add(NAME, "redacted on Exhibit 1, page 1")
    return found


def production() -> tuple[list[tuple[str, bytes]], bytes, IngestedPages]:
    """Three natives stamped as a production stamps them, the combined PDF holding their pages, and the pages
    ingest read: a plain letter; one whose information dictionary names her; one unchanged page whose stored text
    (what ingest read, standing for its extraction) names her."""
    combined, natives, ingested = pymupdf.open(), [], IngestedPages()
    for number, (line, title, stored) in enumerate([
            ("Closing paragraph with nothing privileged in it.", "", None),
            ("Settlement letter to the claims adjuster.", f"{NAME} file", None),
            ("Beneficiary under the policy.", "", f"Beneficiary {NAME} under the policy.")], start=1):
        doc = pymupdf.open()
        doc.new_page().insert_text((72, 200), line, fontsize=11)
        if title:
            doc.set_metadata({"title": title})
        doc = pymupdf.open("pdf", doc.tobytes())
        if stored:
            ingested.add(doc, {0: stored})
        bates = f"SMITH{number:06d}"
        stamp_and_append(combined, doc, [bates], StampSpec())
        natives.append((f"VOL001/NATIVES/{bates}.pdf", doc.tobytes(garbage=2, deflate=True)))
    return natives, combined.tobytes(garbage=2, deflate=True), ingested


def scanned_in_the_worker(natives, combined, ingested) -> Scanner:
    scanner = Scanner(secrets(), ingested=ingested)
    for name, data in natives:
        scanner.scan_file(data, name)
    scanner.scan_pdf(combined, "the combined PDF")
    return scanner


def scanned_beside(natives, combined, ingested) -> Scanner:
    scanner = Scanner(secrets(), ingested=ingested)
    with NativeScan(secrets(), frozenset(ingested.texts)) as child:
        for name, data in natives:
            child.submit(name, data)
        child.absorb_into(scanner)
    scanner.scan_pdf(combined, "the combined PDF")
    return scanner


def test_the_natives_scanned_beside_find_what_the_worker_finds_and_the_combined_pdf_skips_them():
    natives, combined, ingested = production()
    alone, beside = scanned_in_the_worker(natives, combined, ingested), scanned_beside(natives, combined, ingested)
    found = [(f.where, f.text, f.what) for f in beside.findings]
    assert found == [(f.where, f.text, f.what) for f in alone.findings]
    places = {where.split(",")[0] for where, _, _ in found}
    # Her name in the second native's information dictionary, and in the third's stored text (looked in by the
    # worker: the child had only the page's key); the combined PDF repeats both pages and is not found again.
    assert places == {"VOL001/NATIVES/SMITH000002.pdf", "VOL001/NATIVES/SMITH000003.pdf"}
    assert any(where == "VOL001/NATIVES/SMITH000003.pdf, page 1" for where, _, _ in found)
    assert (beside.pages_extracted, beside.pages_ingested) == (alone.pages_extracted, alone.pages_ingested)
    assert beside.pages_ingested == 2  # the third page, in its native and in the combined PDF


def test_a_native_the_child_cannot_read_fails_the_scan_with_the_reason_the_worker_would_give():
    broken = ("VOL001/NATIVES/SMITH000001.pdf", b"%PDF-1.7\nnot a PDF at all")
    with pytest.raises(Exception) as in_the_worker:
        Scanner(secrets()).scan_file(broken[1], broken[0])
    natives, _combined, ingested = production()
    with NativeScan(secrets(), frozenset()) as child, pytest.raises(RuntimeError) as beside:
        child.submit(*natives[0])
        child.submit(*broken)
        child.absorb_into(Scanner(secrets()))
    assert str(in_the_worker.value) in str(beside.value) and broken[0] in str(beside.value)


def test_what_the_child_sends_is_read_as_data_and_anything_else_fails_the_scan():
    from matters.productions.bates.leak_pool import BadAnswer, _answer

    assert _answer(b'{"findings": [["VOL001/NATIVES/A.pdf, object 4", "holloway", "redacted"]], "unread": []}\n')
    for line in (b"\x80\x05\x95 a pickle\n", b'["not", "an", "object"]\n', b'{"findings": [[1, 2, 3]], "unread": []}\n',
                 b'{"read": {"streams": ["zz"], "objects": [], "pages": [], "pages_extracted": 0, '
                 b'"pages_ingested": 0}}\n', b'{"findings": [], "unread": [["x", "not hex"]]}\n', b'{"what": 1}\n',
                 b'{"findings": []'):
        with pytest.raises(BadAnswer):
            _answer(line)


@pytest.mark.django_db
def test_a_production_scanned_beside_fails_for_a_leak_and_passes_when_clean(matter, attorney, ingest, tmp_path,
                                                                         monkeypatch):
    from tests.matters.productions.test_production_leaks import _bypass_scrubbing, produce, redacted_exhibit

    monkeypatch.setattr(leak_scan, "BESIDE_MIN_PAGES", 1)
    started = []
    monkeypatch.setattr(NativeScan, "submit", lambda self, name, data, submit=NativeScan.submit: (
        started.append(name), submit(self, name, data)))
    exhibit, options = redacted_exhibit(matter, attorney, ingest, tmp_path, "outline")
    clean = produce(matter, [exhibit], attorney, **options)
    assert clean.status == Production.Status.DONE, clean.reason
    assert started == [f"{clean.volume}/NATIVES/{clean.first}.pdf"]
    _bypass_scrubbing(monkeypatch)
    leaking = produce(matter, [exhibit], attorney, **options)
    assert leaking.status == Production.Status.FAILED
    assert f"NATIVES/{leaking.first}.pdf" in leaking.reason
    assert any(word in leaking.reason.lower() for word in ("margaret", "holloway")), leaking.reason
    assert len(started) == 2


def test_a_child_that_dies_fails_the_scan_rather_than_dropping_what_it_had_not_read():
    natives, _combined, ingested = production()
    with NativeScan(secrets(), frozenset(ingested.texts)) as child:
        child.submit(*natives[0])
        child._child.kill()  # as the kernel's out-of-memory killer would
        child.submit(*natives[1])
        with pytest.raises(RuntimeError, match="child process stopped"):
            child.absorb_into(Scanner(secrets(), ingested=ingested))


def test_a_child_that_answers_with_a_pickle_fails_the_scan_and_is_stopped(monkeypatch):
    import pickle
    import sys

    from matters.productions.bates import leak_pool

    # What a child taken over by a hostile PDF might send: a pickle that would run code where it is unpickled.
    hostile = pickle.dumps({"findings": [], "unread": []})
    script = ("import sys, time; sys.stdin.buffer.read(1); "
              f"sys.stdout.buffer.write({hostile!r} + b'\\n'); sys.stdout.buffer.flush(); time.sleep(600)")
    monkeypatch.setattr(leak_pool, "_child_command", lambda: [sys.executable, "-c", script])
    natives, _combined, ingested = production()
    with NativeScan(secrets(), frozenset()) as child:
        child.submit(*natives[0])
        with pytest.raises(RuntimeError, match="not an answer"):
            child.absorb_into(Scanner(secrets(), ingested=ingested))
        assert child._child.poll() is not None


def test_an_unchanged_page_the_worker_already_read_is_not_looked_in_again_when_the_child_reports_it():
    natives, _combined, ingested = production()
    scanner = Scanner(secrets(), ingested=ingested)
    scanner.scan_file(natives[2][1], natives[2][0])  # the page whose stored text names her, read in the worker
    with NativeScan(secrets(), frozenset(ingested.texts)) as child:
        child.submit("VOL001/NATIVES/SMITH000009.pdf", natives[2][1])  # the same page again, in the child
        child.absorb_into(scanner)
    assert [f.where for f in scanner.findings] == ["VOL001/NATIVES/SMITH000003.pdf, page 1"]
