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
document does: once extracting every page's text, then as a production scans (the text ingest stored for each
page the production left unchanged standing for its extraction: ``IngestedPages``, by the key ingest stored with
each page's text, worked out before the timed scan as ingest does), both expected to find the same; and once more
with nothing to look for (a production without privilege: only the carriers a production never has are looked
for). Target: the scan under a quarter of the production's time.
"""

import argparse
import os
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


def produce(files: list[Path], work: Path) -> tuple[Path, Path, int]:
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
            volume.writestr(f"VOL001/NATIVES/{bates[0]}.pdf", source.tobytes(garbage=2, deflate=True))
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


def scan(zip_path: Path, pdf_path: Path, secrets, stored: list[tuple[bytes, str]] | None = None):
    """Scan the volume and the combined PDF; with ``stored`` (ingest's keys and texts), an unchanged page's stored
    text stands for its extraction. Returns (findings, pages extracted, pages whose stored text was used)."""
    from matters.productions.bates.leaks import IngestedPages, Scanner

    ingested = None
    if stored is not None and secrets:
        ingested = IngestedPages()
        for key, text in stored:
            ingested.add_key(key, text)
    scanner = Scanner(secrets, ingested=ingested)
    with zipfile.ZipFile(zip_path) as volume:
        for name in volume.namelist():
            scanner.scan_file(volume.read(name), name)
    scanner.scan_pdf(pdf_path.read_bytes(), pdf_path.name)
    return scanner.findings, scanner.pages_extracted, scanner.pages_ingested


def failing_files(findings) -> set[str]:
    """The files a production fails for (each finding's file, without the page or object)."""
    return {finding.where.split(",")[0] for finding in findings}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    args = parser.parse_args()
    import pymupdf

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
        started = time.perf_counter()
        zip_path, pdf_path, pages = produce(files, work)
        produced_s = time.perf_counter() - started
        stored = ingest_texts(files)
        # Side by side: every page extracted (as before), then ingest's stored text for each unchanged page.
        started = time.perf_counter()
        found_all, extracted_all, _ = scan(zip_path, pdf_path, secrets)
        all_s = time.perf_counter() - started
        started = time.perf_counter()
        found, extracted, from_ingest = scan(zip_path, pdf_path, secrets, stored)
        scan_s = time.perf_counter() - started
        started = time.perf_counter()
        found_empty, _, _ = scan(zip_path, pdf_path, Secrets(), stored)
        empty_s = time.perf_counter() - started
    print(f"load average at start: {', '.join(f'{v:.1f}' for v in load)}; {pages} pages in {len(files)} documents "
          f"(no two share a stream); {secrets.count()} runs looked for")
    print(f"production: {produced_s:.1f} s")
    print(f"scan extracting every page: {all_s:.1f} s ({len(found_all)} findings, {extracted_all} pages extracted); "
          f"/ production: {all_s / produced_s:.2f}")
    same = failing_files(found) == failing_files(found_all)
    # Fewer findings: an unchanged page's content stream no longer repeats its text's finding as an object's.
    print(f"scan with ingest's text for unchanged pages: {scan_s:.1f} s ({len(found)} findings, {extracted} pages "
          f"extracted, {from_ingest} from ingest's text); the same {len(failing_files(found))} files found: {same}")
    print(f"scan with nothing to look for: {empty_s:.2f} s ({len(found_empty)} findings)")
    ratio = scan_s / produced_s
    print(f"scan / production: {ratio:.2f} (target < 0.25)  {'met' if ratio < 0.25 else 'NOT MET'}")
    print(f"scan with nothing to look for / production: {empty_s / produced_s:.3f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
