"""Bates stamping throughput: our production path against the two ways scripts usually do it, side by side.

Run from the repository root as ``.venv/bin/python bench/bates.py [--quick]``.

Productions of 2,000 and 10,000 pages are made by repeating the court filings in ``corpus/court`` (copied to a
temporary directory). Each measurement runs in its own process, so its peak memory (ru_maxrss) is its own:
- ours: each source document flattened (annotations and form fields baked in), stamped on its own (base-14
  Helvetica, upright on the displayed page), every stamp render-checked for ink, then appended to the combined
  PDF, bookmarks set, saved with garbage collection and duplicate objects and streams merged (PyMuPDF's
  garbage=4: a font embedded by several documents is kept once) and compression
  (:func:`matters.productions.bates.stamp.stamp_and_append`, as a production does);
- naive: the documents combined first, then ``page.insert_text`` on every page of the combined document, saved
  the same way (2,000 pages only: it is the slow one);
- pypdf: a one-page stamp overlay per page (made with PyMuPDF), ``merge_page`` onto each source page, written
  by ``PdfWriter`` (2,000 pages only).
"unchecked" is ours without the render check, to show the check's cost side by side.
Targets: at 2,000 pages ours at least 5 times pypdf and 20 times naive; 10,000 pages at most 6 times the time
of 2,000; peak memory under 1 GB at 10,000 pages. The combined PDF's size is printed against the sum of its
unique inputs (each distinct source file counted once): the repeated filings share their fonts and images.
"""

import argparse
import hashlib
import io
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = REPO.parent / "shared" / "corpus" / "court"


def sources_for(pages: int, work: Path) -> list[Path]:
    """Copies of the court filings, repeated in order until they hold at least ``pages`` pages."""
    import pymupdf

    originals = sorted(CORPUS.glob("*.pdf"))
    counts = {path: pymupdf.open(path).page_count for path in originals}
    chosen, total, index = [], 0, 0
    while total < pages:
        path = originals[index % len(originals)]
        target = work / f"{len(chosen):05d}-{path.name}"
        shutil.copyfile(path, target)
        chosen.append(target)
        total += counts[path]
        index += 1
    return chosen


def run_ours(files: list[Path], out: Path, check: bool = True) -> int:
    import pymupdf

    from matters.productions.bates.stamp import StampSpec, stamp_and_append

    spec, combined, toc, number = StampSpec(), pymupdf.open(), [], 1
    for path in files:
        source = pymupdf.open(path)
        toc.append([1, path.stem, combined.page_count + 1])
        stamp_and_append(combined, source, [f"SMITH{n:06d}" for n in range(number, number + source.page_count)], spec,
                         check=check)
        number += source.page_count
        source.close()
    combined.set_toc(toc)
    combined.save(out, garbage=4, deflate=True)
    return number - 1


def run_naive(files: list[Path], out: Path) -> int:
    import pymupdf

    combined = pymupdf.open()
    for path in files:
        combined.insert_pdf(pymupdf.open(path))
    for number, page in enumerate(combined, start=1):
        point = pymupdf.Point(page.rect.x1 - 80, page.rect.y1 - 18) * page.derotation_matrix
        page.insert_text(point, f"SMITH{number:06d}", fontname="helv", fontsize=9, rotate=page.rotation)
    combined.save(out, garbage=2, deflate=True)
    return combined.page_count


def run_pypdf(files: list[Path], out: Path) -> int:
    import pymupdf
    from pypdf import PdfReader, PdfWriter

    writer, number = PdfWriter(), 0
    for path in files:
        for page in PdfReader(path).pages:
            number += 1
            width, height = float(page.mediabox.width), float(page.mediabox.height)
            overlay = pymupdf.open()
            overlay.new_page(width=width, height=height).insert_text(
                (width - 80, height - 18), f"SMITH{number:06d}", fontname="helv", fontsize=9)
            # pypdf 7 merges only onto a page that belongs to a writer.
            writer.add_page(page).merge_page(PdfReader(io.BytesIO(overlay.tobytes())).pages[0])
    with open(out, "wb") as handle:
        writer.write(handle)
    return number


def one(method: str, pages: int) -> None:
    """Child process: build the sources, time one method, print a JSON line."""
    with tempfile.TemporaryDirectory(prefix="lawdesk-bates-") as tmp:
        work = Path(tmp)
        files = sources_for(pages, work)
        started = time.perf_counter()
        run = {"ours": run_ours, "unchecked": lambda f, o: run_ours(f, o, check=False), "naive": run_naive,
               "pypdf": run_pypdf}[method]
        produced = run(files, work / "out.pdf")
        seconds = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        unique = {hashlib.sha256(path.read_bytes()).hexdigest(): path.stat().st_size for path in files}
        print(json.dumps({"method": method, "pages": produced, "seconds": seconds, "peak_mib": peak_mib,
                          "bytes": (work / "out.pdf").stat().st_size, "unique_input_bytes": sum(unique.values()),
                          "input_bytes": sum(path.stat().st_size for path in files)}))


def measure(method: str, pages: int) -> dict:
    output = subprocess.run([sys.executable, __file__, "--one", method, "--pages", str(pages)], check=True,
                            capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 and 2,500 pages instead of 2,000 and 10,000")
    parser.add_argument("--one")
    parser.add_argument("--pages", type=int)
    args = parser.parse_args()
    if args.one:
        one(args.one, args.pages)
        return 0
    small, large = (500, 2500) if args.quick else (2000, 10000)
    results = {
        "ours_small": measure("ours", small), "naive_small": measure("naive", small),
        "pypdf_small": measure("pypdf", small), "ours_large": measure("ours", large),
        "unchecked_small": measure("unchecked", small),
    }
    print(f"{'method':<10}{'pages':>7}{'seconds':>10}{'pages/s':>10}{'peak MiB':>10}{'MB out':>8}")
    for result in results.values():
        print(f"{result['method']:<10}{result['pages']:>7}{result['seconds']:>10.2f}"
              f"{result['pages'] / result['seconds']:>10.1f}{result['peak_mib']:>10.0f}{result['bytes'] / 1e6:>8.1f}")
    speed = {k: r["pages"] / r["seconds"] for k, r in results.items()}
    vs_pypdf = speed["ours_small"] / speed["pypdf_small"]
    vs_naive = speed["ours_small"] / speed["naive_small"]
    scaling = results["ours_large"]["seconds"] / results["ours_small"]["seconds"]
    page_ratio = results["ours_large"]["pages"] / results["ours_small"]["pages"]
    print(f"\nours / pypdf at {small} pages: {vs_pypdf:.1f}x (target >= 5)  {'met' if vs_pypdf >= 5 else 'NOT MET'}")
    print(f"ours / naive at {small} pages: {vs_naive:.1f}x (target >= 20)  {'met' if vs_naive >= 20 else 'NOT MET'}")
    print(f"time at {large} / time at {small} pages: {scaling:.2f} for {page_ratio:.1f}x the pages "
          f"(target <= 6)  {'met' if scaling <= 6 else 'NOT MET'}")
    for key in ("ours_small", "ours_large"):
        result = results[key]
        unique = result["unique_input_bytes"]
        print(f"bundle at {result['pages']} pages: {result['bytes'] / 1e6:.1f} MB against {unique / 1e6:.1f} "
              f"MB of unique inputs ({result['bytes'] / unique:.2f}x) and "
              f"{result['input_bytes'] / 1e6:.1f} MB of inputs with repeats")
    check_cost = results["ours_small"]["seconds"] / results["unchecked_small"]["seconds"]
    print(f"render check of every stamp: {check_cost:.2f} times the time of the same run unchecked ({small} pages)")
    peak = results["ours_large"]["peak_mib"]
    print(f"peak memory at {large} pages: {peak:.0f} MiB (target < 1024)  {'met' if peak < 1024 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
