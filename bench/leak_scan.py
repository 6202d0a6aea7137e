"""The production leak scan's cost beside the production's own time, in one run.

Run from the repository root as ``.venv/bin/python bench/leak_scan.py [--pages 10000]``.

A production of about ``--pages`` pages is made from the court filings in ``corpus/court``, repeated; each copy's
page content streams get a comment of their own (``% copy N``), so no two copies share a stream and the scan
cannot skip a repeated filing (a real production's documents are distinct; only the combined PDF repeats the
natives). The production step does what the worker does per document without Django: active content removed
(:mod:`matters.productions.bates.active`), stamped, checked and appended (:func:`stamp_and_append`), the native
written into a volume ZIP with its TEXT file, shared fonts and images merged as each is appended
(:class:`matters.productions.bates.dedup.ResourceMerger`), then the combined PDF saved (garbage=2, deflate), as
:mod:`matters.productions.stamping` does (without its database writes, which a real production also pays for).
Runs before this change saved with garbage=4, whose quadratic merge made the production slower at 10,000 pages
and the scan's share smaller. The scan then reads
every member of the ZIP and the combined PDF (:class:`matters.productions.bates.leaks.Scanner`) for 25 redacted
strings and one withheld filing's text (its 6-word runs), as a production with redactions and a withheld
document does, side by side: after the production, extracting every page's text; after the production, as a
production scans (the text ingest stored for each page the production left unchanged standing for its
extraction: ``IngestedPages``, by the key ingest stored with each page's text, worked out before the timed runs as
ingest does); and as the worker scans a production of 1,000 pages or more: the production made again with each
native handed to a child process as it is written (:class:`matters.productions.bates.leak_pool.NativeScan`), the
rest of the volume and the combined PDF scanned after it. All three are expected to find the same. Then once with
nothing to look for (a production without privilege: only the carriers a production never has are looked for),
and the production alone once more. Target: the time the scan adds to the production (the production with its
natives scanned beside it and the rest of the scan after it, against the production alone, the mean of its two
runs) under a quarter of the production's time. The scan's CPU time is printed beside it: scanned beside, the
natives take a second core's time while the stamping goes on.
"""

import argparse
import os
import resource
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.corpus import corpus_dir  # noqa: E402

CORPUS = corpus_dir() / "court"
REDACTED = ["Margaret Holloway", "4417-1234-5567", "123-45-6789", "Dana Whitfield", "Jonas Everly", "Ashford Trust",
            "Rivera Holdings LLC", "Beatrix Lindqvist", "Pemberton Street", "555-0199", "Oakhurst Clinic",
            "Tobias Renner", "DX-44127", "Quinlan Partners", "Elsworth Medical", "Harriet Voss", "Calder Bank",
            "Westbrook 2291", "Imogen Clarke", "Sorensen", "Fairweather", "Lockridge", "Nightingale Ward",
            "Account 0098812", "Policy PX-7781"]


def sources(pages: int, work: Path) -> list[Path]:
    import pymupdf

    originals = sorted(CORPUS.glob("*.pdf"))
    chosen, total = [], 0
    while total < pages:
        path = originals[len(chosen) % len(originals)]
        doc = pymupdf.open(path)
        for page in doc:
            for xref in page.get_contents():
                doc.update_stream(xref, f"% copy {len(chosen)}\n".encode() + (doc.xref_stream(xref) or b""))
        target = work / f"{len(chosen):05d}-{path.name}"
        doc.save(target, garbage=1, deflate=True)
        chosen.append(target)
        total += doc.page_count
    return chosen


def produce(files: list[Path], work: Path, natives=None) -> tuple[Path, Path, int]:
    """Make the production from ``files`` in ``work``; with ``natives`` (a :class:`NativeScan`), hand each native
    to it as it is written, as the worker does for a large production."""
    import pymupdf

    from matters.productions.bates.active import remove_active_content
    from matters.productions.bates.dedup import ResourceMerger
    from matters.productions.bates.pageobjects import pdf_of
    from matters.productions.bates.stamp import StampSpec, stamp_and_append

    spec, combined, toc, number = StampSpec(), pymupdf.open(), [], 1
    merger = ResourceMerger(pdf_of(combined))
    zip_path, pdf_path = work / "VOL001.zip", work / "combined.pdf"
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as volume:
        for path in files:
            source = pymupdf.open(path)
            remove_active_content(source)
            texts = [page.get_text() for page in source]
            bates = [f"SMITH{n:06d}" for n in range(number, number + source.page_count)]
            toc.append([1, path.stem, combined.page_count + 1])
            stamp_and_append(combined, source, bates, spec, merger=merger)
            native, native_bytes = f"VOL001/NATIVES/{bates[0]}.pdf", source.tobytes(garbage=2, deflate=True)
            volume.writestr(native, native_bytes)
            if natives is not None:
                natives.submit(native, native_bytes)
            volume.writestr(f"VOL001/TEXT/{bates[0]}.txt", "\f".join(texts).encode())
            number += source.page_count
            source.close()
    combined.set_toc(toc)
    combined.save(pdf_path, garbage=2, deflate=True)
    return zip_path, pdf_path, number - 1


def ingest_texts(files: list[Path]) -> list[tuple[bytes, str]]:
    """Each page's key and text as ingest stores them (read from the text layer, ahead of the production)."""
    import pymupdf

    from matters.productions.bates.page_key import page_keys

    stored = []
    for path in files:
        with pymupdf.open(path) as doc:
            stored += [(key, page.get_text().replace("\x00", "")) for key, page in zip(page_keys(doc), doc) if key]
    return stored


def _ingested(stored: list[tuple[bytes, str]] | None, secrets):
    from matters.productions.bates.leaks import IngestedPages

    if stored is None or not secrets:
        return None
    ingested = IngestedPages()
    for key, text in stored:
        ingested.add_key(key, text)
    return ingested


def scan(zip_path: Path, pdf_path: Path, secrets, stored: list[tuple[bytes, str]] | None = None, natives=None):
    """Scan the volume and the combined PDF as :func:`matters.productions.leak_scan.scan_production` does; with
    ``stored`` (ingest's keys and texts), an unchanged page's stored text stands for its extraction; with
    ``natives`` (the :class:`NativeScan` the natives were handed to as they were written), their findings are
    taken over and they are not read again. Returns (findings, pages extracted, pages whose stored text was
    used)."""
    from matters.productions.bates.leak_pool import scan_volume
    from matters.productions.bates.leaks import Scanner

    scanner = Scanner(secrets, ingested=_ingested(stored, secrets))
    scan_volume(scanner, zip_path, pdf_path, pdf_path.name, natives=natives)
    return scanner.findings, scanner.pages_extracted, scanner.pages_ingested


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended (the child that scanned natives beside)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def failing_files(findings) -> set[str]:
    """The files a production fails for (each finding's file, without the page or object)."""
    return {finding.where.split(",")[0] for finding in findings}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    args = parser.parse_args()
    import pymupdf

    from matters.productions.bates.leak_pool import NativeScan
    from matters.productions.bates.leaks import Secrets

    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="lawdesk-leaks-") as tmp:
        work = Path(tmp)
        files = sources(args.pages, work)
        withheld = sorted(CORPUS.glob("*.pdf"))[0]
        secrets = Secrets()
        for text in REDACTED:
            secrets.add(text, "redacted")
        with pymupdf.open(withheld) as doc:
            secrets.add_document("\n".join(page.get_text() for page in doc), "withheld")
        stored = ingest_texts(files)
        started = time.perf_counter()
        zip_path, pdf_path, pages = produce(files, work)
        produced_s = time.perf_counter() - started
        # Side by side: every page extracted (as before ingest's keys), then ingest's stored text for each
        # unchanged page, both after the production; then the production again with its natives scanned beside
        # it as they are written, and the rest of the scan after it, as the worker does for a large production.
        started = time.perf_counter()
        found_all, extracted_all, _ = scan(zip_path, pdf_path, secrets)
        all_s = time.perf_counter() - started
        started = time.perf_counter()
        found_after, _, _ = scan(zip_path, pdf_path, secrets, stored)
        after_s = time.perf_counter() - started
        beside_dir = work / "beside"
        beside_dir.mkdir()
        children_cpu = _children_cpu()
        started = time.perf_counter()
        with NativeScan(secrets, frozenset(key for key, _text in stored)) as natives:
            beside_zip, beside_pdf, _ = produce(files, beside_dir, natives)
            stamped_s = time.perf_counter() - started
            found, extracted, from_ingest = scan(beside_zip, beside_pdf, secrets, stored, natives)
        beside_s = time.perf_counter() - started
        child_cpu = _children_cpu() - children_cpu
        started = time.perf_counter()
        found_empty, _, _ = scan(zip_path, pdf_path, Secrets(), stored)
        empty_s = time.perf_counter() - started
        # The production alone once more: the time the scan adds is measured against both productions alone.
        again = work / "again"
        again.mkdir()
        started = time.perf_counter()
        produce(files, again)
        produced_again_s = time.perf_counter() - started
    print(f"load average at start: {', '.join(f'{v:.1f}' for v in load)}; {os.cpu_count()} cores; {pages} pages in "
          f"{len(files)} documents (no two share a stream); {secrets.count()} runs looked for")
    print(f"production: {produced_s:.1f} s, and {produced_again_s:.1f} s at the end of the run")
    produced_s = (produced_s + produced_again_s) / 2
    print(f"scan after it, extracting every page: {all_s:.1f} s ({len(found_all)} findings, {extracted_all} pages "
          f"extracted); / production: {all_s / produced_s:.2f}")
    print(f"scan after it, ingest's text for unchanged pages: {after_s:.1f} s ({len(found_after)} findings); "
          f"/ production: {after_s / produced_s:.2f}")
    added = beside_s - produced_s
    print(f"production with its natives scanned beside it: stamped in {stamped_s:.1f} s, the scan done "
          f"{beside_s - stamped_s:.1f} s after (its child process: {child_cpu:.1f} s of CPU); {len(found)} findings, "
          f"{extracted} pages extracted, {from_ingest} from ingest's text")
    same = failing_files(found) == failing_files(found_all) == failing_files(found_after)
    # Fewer findings: an unchanged page's content stream no longer repeats its text's finding as an object's.
    print(f"the same {len(failing_files(found))} files found by every scan: {same}")
    print(f"scan with nothing to look for: {empty_s:.2f} s ({len(found_empty)} findings); / production: "
          f"{empty_s / produced_s:.3f}")
    ratio = added / produced_s
    print(f"time the scan adds to the production (scanned beside, against the production alone): {added:.1f} s, "
          f"{ratio:.2f} (target < 0.25)  {'met' if ratio < 0.25 else 'NOT MET'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
