"""Bates stamping throughput and bundle size: our production path against the no-stamp floor, a full duplicate
merge at save and the ways scripts usually stamp, side by side in one run.

Run from the repository root as ``.venv/bin/python bench/bates.py [--quick] [--large]``.

Productions of 2,000 and 10,000 pages (500 and 2,500 with ``--quick``) are made by repeating the court filings in
``corpus/court`` (copied to a temporary directory). Each measurement runs in its own process, so its peak memory
(ru_maxrss) is its own:
- ours: each source document flattened (annotations and form fields baked in), stamped on its own (base-14
  Helvetica, upright on the displayed page), every stamp checked (:mod:`matters.productions.bates.check`), then
  appended to the combined PDF with its large shared resources (font files, images, ICC profiles, form XObjects)
  pointed at the copy an earlier document brought (:class:`matters.productions.bates.dedup.ResourceMerger`), bookmarks
  set, saved with ``garbage=2`` and compression: no duplicate merge at save, so the time stays linear in the pages
  (:func:`matters.productions.bates.stamp.stamp_and_append`, as a production does);
- garbage4: the same, appended without the merge and saved with ``garbage=4`` (MuPDF's duplicate-object merge at
  save, which grows with the square of the objects): the bundle size ours must match, at both sizes and on a
  production of distinct documents that share fonts (each copy's page streams made its own);
- floor: the same documents combined by PyMuPDF's ``insert_pdf`` and saved with ``garbage=4``, no stamp: what
  combining alone costs;
- qpdf: the script many offices use: a PDF of numbered stamp pages made once (before the clock starts), laid on
  the combined documents by Debian's ``qpdf --empty --pages ... --overlay``;
- naive: the documents combined first, then ``page.insert_text`` on every page of the combined document; pypdf: a
  one-page stamp overlay per page (made with PyMuPDF), ``merge_page`` onto each source page, written by
  ``PdfWriter`` (both printed for reference, at the smaller size only);
- unchecked: ours without the stamp check, to show the check's cost;
- huge (``--large`` only): ours on a production of 100,000 pages, the filings repeated with a stamp of its own on
  every page (one pass: minutes).
Ours (at both sizes), the floor, qpdf and the unchecked run take turns ROUNDS times and each keeps its median time
(the load of a shared machine moves within a run). Targets, each printed met or NOT MET: at the smaller size ours at
least 0.6 of the floor's pages per second and at least 2 times qpdf's; the larger size at most 5.5 times the time of
the smaller; each bundle within 5% of the garbage=4 save of the same production; peak memory under 1 GiB at the
larger size; with ``--large``, 100,000 pages in at most 11 times the time of the larger size and under 1.5 GiB.
The combined PDF's size is also printed against the sum of its unique inputs (each distinct source file counted
once): the repeated filings share their fonts and images.
"""

import argparse
import hashlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.corpus import corpus_dir  # noqa: E402

CORPUS = corpus_dir() / "court"
ROUNDS = 3
HUGE = 100_000  # pages of --large: the court filings repeated, each page its own stamp


def sources_for(pages: int, work: Path, distinct: bool = False) -> list[Path]:
    """Copies of the court filings, repeated in order until they hold at least ``pages`` pages. ``distinct``:
    each copy's page content streams begin with a comment of their own (``% copy N``), so that no two copies
    share a page's content, only what the filings share among themselves and with their other copies: fonts,
    images, resource dictionaries (a production of distinct documents from the same few offices)."""
    import pymupdf

    originals = sorted(CORPUS.glob("*.pdf"))
    counts = {path: pymupdf.open(path).page_count for path in originals}
    chosen, total, index = [], 0, 0
    while total < pages:
        path = originals[index % len(originals)]
        target = work / f"{len(chosen):05d}-{path.name}"
        if distinct:
            doc = pymupdf.open(path)
            for page in doc:
                for xref in page.get_contents():
                    doc.update_stream(xref, f"% copy {len(chosen)}\n".encode() + (doc.xref_stream(xref) or b""))
            doc.save(target, garbage=1, deflate=True)
        else:
            shutil.copyfile(path, target)
        chosen.append(target)
        total += counts[path]
        index += 1
    return chosen


def run_ours(files: list[Path], out: Path, check: bool = True, merge: bool = True) -> int:
    """As a production: stamped, checked, appended with shared resources merged, saved with garbage=2.
    ``merge=False``: appended as they are and saved with garbage=4 (MuPDF's merge of duplicates at save)."""
    import pymupdf

    from matters.productions.bates.dedup import ResourceMerger
    from matters.productions.bates.pageobjects import pdf_of
    from matters.productions.bates.stamp import StampSpec, stamp_and_append

    spec, combined, toc, number = StampSpec(), pymupdf.open(), [], 1
    merger = ResourceMerger(pdf_of(combined)) if merge else None
    for path in files:
        source = pymupdf.open(path)
        toc.append([1, path.stem, combined.page_count + 1])
        stamp_and_append(combined, source, [f"SMITH{n:06d}" for n in range(number, number + source.page_count)], spec,
                         check=check, merger=merger)
        number += source.page_count
        source.close()
    combined.set_toc(toc)
    combined.save(out, garbage=2 if merge else 4, deflate=True)
    return number - 1


def run_floor(files: list[Path], out: Path) -> int:
    import pymupdf

    combined = pymupdf.open()
    for path in files:
        source = pymupdf.open(path)
        combined.insert_pdf(source)
        source.close()
    combined.save(out, garbage=4, deflate=True)
    return combined.page_count


def qpdf_overlay(files: list[Path], out: Path) -> Path:
    """The numbered stamp pages an overlay script lays on: one Letter page per source page, made once."""
    import pymupdf

    pages = sum(pymupdf.open(path).page_count for path in files)
    overlay = pymupdf.open()
    for number in range(1, pages + 1):
        overlay.new_page(width=612, height=792).insert_text((612 - 80, 792 - 18), f"SMITH{number:06d}",
                                                             fontname="helv", fontsize=9)
    path = out.with_name("overlay.pdf")
    overlay.save(path, garbage=4, deflate=True)
    return path


def run_qpdf(files: list[Path], out: Path, overlay: Path) -> int:
    import pymupdf

    # --warning-exit-0: the court filings' own cross-reference quirks make qpdf warn, not fail.
    subprocess.run(["qpdf", "--warning-exit-0", "--empty", "--pages", *map(str, files), "--",
                    "--overlay", str(overlay), "--", str(out)], check=True, capture_output=True)
    return pymupdf.open(out).page_count


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


def one(method: str, pages: int, distinct: bool = False) -> None:
    """Child process: build the sources, time one method, print a JSON line."""
    with tempfile.TemporaryDirectory(prefix="lawdesk-bates-") as tmp:
        work = Path(tmp)
        files = sources_for(pages, work, distinct)
        overlay = qpdf_overlay(files, work / "out.pdf") if method == "qpdf" else None
        started = time.perf_counter()
        run = {"ours": run_ours, "unchecked": lambda f, o: run_ours(f, o, check=False),
               "garbage4": lambda f, o: run_ours(f, o, merge=False), "naive": run_naive,
               "pypdf": run_pypdf, "floor": run_floor, "qpdf": lambda f, o: run_qpdf(f, o, overlay)}[method]
        produced = run(files, work / "out.pdf")
        seconds = time.perf_counter() - started
        peak_mib = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        peak_mib /= 1024
        unique = {hashlib.sha256(path.read_bytes()).hexdigest(): path.stat().st_size for path in files}
        label = method + ("/distinct" if distinct else "")
        print(json.dumps({"method": label, "pages": produced, "seconds": seconds, "peak_mib": peak_mib,
                          "bytes": (work / "out.pdf").stat().st_size, "unique_input_bytes": sum(unique.values()),
                          "input_bytes": sum(path.stat().st_size for path in files)}))


def measure(method: str, pages: int, distinct: bool = False) -> dict:
    command = [sys.executable, __file__, "--one", method, "--pages", str(pages)] + (["--distinct"] if distinct else [])
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def median_run(runs: list[dict]) -> dict:
    """The run of median time among ``runs`` (its own pages, peak memory and size kept with it)."""
    return sorted(runs, key=lambda run: run["seconds"])[len(runs) // 2]


def main() -> int:
    load_at_start = os.getloadavg()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 and 2,500 pages instead of 2,000 and 10,000")
    parser.add_argument("--large", action="store_true",
                        help=f"also a production of {HUGE:,} pages (ours, one pass: minutes)")
    parser.add_argument("--one")
    parser.add_argument("--pages", type=int)
    parser.add_argument("--distinct", action="store_true")
    args = parser.parse_args()
    if args.one:
        one(args.one, args.pages, args.distinct)
        return 0
    small, large = (500, 2500) if args.quick else (2000, 10000)
    # Each measure is a few seconds in a process of its own; on a shared machine the load moves between them, so
    # the methods the targets compare run in turn ROUNDS times and each keeps its median time.
    rounds: dict[str, list[dict]] = {}
    for _ in range(ROUNDS):
        for method in ("ours", "floor", "qpdf", "unchecked"):
            rounds.setdefault(f"{method}_small", []).append(measure(method, small))
        rounds.setdefault("ours_large", []).append(measure("ours", large))
    results = {key: median_run(runs) for key, runs in rounds.items()}
    results["garbage4_small"] = measure("garbage4", small)
    results["garbage4_large"] = measure("garbage4", large)
    results["ours_distinct"] = measure("ours", small, distinct=True)
    results["garbage4_distinct"] = measure("garbage4", small, distinct=True)
    results["naive_small"] = measure("naive", small)
    results["pypdf_small"] = measure("pypdf", small)
    order = ["ours_small", "floor_small", "qpdf_small", "unchecked_small", "garbage4_small", "naive_small",
             "pypdf_small", "ours_distinct", "garbage4_distinct", "ours_large", "garbage4_large"]
    if args.large:
        results["ours_huge"] = measure("ours", HUGE)
        order.append("ours_huge")
    results = {key: results[key] for key in order}
    print(f"load average at start (1, 5, 15 min): {', '.join(f'{load:.1f}' for load in load_at_start)}; "
          f"ours, floor, qpdf and unchecked: median of {ROUNDS} rounds")
    print(f"{'method':<19}{'pages':>7}{'seconds':>10}{'pages/s':>10}{'peak MiB':>10}{'MB out':>8}")
    for result in results.values():
        print(f"{result['method']:<19}{result['pages']:>7}{result['seconds']:>10.2f}"
              f"{result['pages'] / result['seconds']:>10.1f}{result['peak_mib']:>10.0f}{result['bytes'] / 1e6:>8.1f}")
    speed = {k: r["pages"] / r["seconds"] for k, r in results.items()}

    def target(label: str, value: float, goal: str, met: bool) -> None:
        print(f"{label}: {value:.2f} (target {goal})  {'met' if met else 'NOT MET'}")

    vs_floor = speed["ours_small"] / speed["floor_small"]
    target(f"ours / no-stamp floor at {small} pages", vs_floor, ">= 0.6", vs_floor >= 0.6)
    vs_qpdf = speed["ours_small"] / speed["qpdf_small"]
    target(f"ours / qpdf overlay at {small} pages", vs_qpdf, ">= 2", vs_qpdf >= 2)
    scaling = results["ours_large"]["seconds"] / results["ours_small"]["seconds"]
    page_ratio = results["ours_large"]["pages"] / results["ours_small"]["pages"]
    target(f"time at {large} / time at {small} pages ({page_ratio:.1f}x the pages)", scaling, "<= 5.5",
           scaling <= 5.5)
    for ours, full, what in (("ours_small", "garbage4_small", f"the bench's documents, {small} pages"),
                             ("ours_large", "garbage4_large", f"the bench's documents, {large} pages"),
                             ("ours_distinct", "garbage4_distinct", f"distinct documents, {small} pages")):
        size = results[ours]["bytes"] / results[full]["bytes"]
        target(f"bundle / the same production saved with garbage=4 ({what})", size, "<= 1.05", size <= 1.05)
    print(f"garbage=4 save instead (no merge as documents come in): {results['garbage4_large']['seconds']:.2f} s at "
          f"{large} pages, {results['garbage4_small']['seconds']:.2f} s at {small} (one pass each)")
    for key in ("naive", "pypdf"):
        print(f"ours / {key} at {small} pages: {speed['ours_small'] / speed[key + '_small']:.2f} (for reference)")
    check_cost = results["ours_small"]["seconds"] / results["unchecked_small"]["seconds"]
    print(f"stamp check: ours takes {check_cost:.2f} times the time of the same run unchecked ({small} pages)")
    for key in ("ours_small", "ours_large"):
        result = results[key]
        unique = result["unique_input_bytes"]
        print(f"bundle at {result['pages']} pages: {result['bytes'] / 1e6:.1f} MB against {unique / 1e6:.1f} "
              f"MB of unique inputs ({result['bytes'] / unique:.2f}x) and "
              f"{result['input_bytes'] / 1e6:.1f} MB of inputs with repeats")
    peak = results["ours_large"]["peak_mib"]
    target(f"peak memory at {large} pages, MiB", peak, "< 1024", peak < 1024)
    if args.large:
        huge = results["ours_huge"]
        ratio = huge["seconds"] / results["ours_large"]["seconds"]
        target(f"time at {huge['pages']} / time at {results['ours_large']['pages']} pages", ratio, "<= 11",
               ratio <= 11)
        target(f"peak memory at {huge['pages']} pages, MiB", huge["peak_mib"], "< 1536", huge["peak_mib"] < 1536)
    return 0


if __name__ == "__main__":
    sys.exit(main())
