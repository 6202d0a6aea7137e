"""Ingest throughput benchmark: our child-process ingest path against bare baselines, measured side by side.

Run from the repository root as ``.venv/bin/python bench/ingest.py`` (``--quick`` for a smaller run,
``--digital-only`` for part 1 alone).
Corpus files (``LAWDESK_CORPUS``, bench/corpus.py) are copied to a temporary directory first; nothing is written
into the corpus.

1. Born-digital PDFs (the PDFs in ``corpus/court`` whose every page has a usable text layer): pages per second
   through :func:`matters.exhibits.ingest.runner.run_child` (a pooled child process that reads file after file, each
   under the memory and time limits, with the ECF-header and improper-redaction checks and the event stream the
   worker consumes; :mod:`matters.exhibits.ingest.pool`), one file at a time, against a bare PyMuPDF loop calling
   ``page.get_text()`` on every page of the same files.
   Target: ours / bare >= 0.8, the median of ROUNDS rounds that each run both sides in turn. The page images for
   viewers are made by a separate, later job; its pages per second are printed too, without a target.
2. OCR (scanned PDFs from ``corpus/odd``, about 10 pages): pages per second through ``run_child``, timed end to
   end (rendering included), with as many files at once as ``make run`` starts workers (one per core) and one
   Tesseract process per core in each, against the ``tesseract`` command with ``--psm 1 --dpi 300`` run on the
   same pages, pre-rendered at 300 dpi grayscale (rendering not timed), one process per core with
   ``OMP_THREAD_LIMIT=1``. Target: ours / bare >= 0.9.
3. The one-off cost of ``import pymupdf`` in a fresh interpreter, paid once per worker by the fork server.

``--sandbox-compare`` measures what the readers' sandbox costs (matters.exhibits.ingest.reader_sandbox): it runs
parts 1 and 2 (``--quick`` sizes) in fresh processes, in turns, with the pool's children in the sandbox and without
it (``LAWDESK_READERS_UNSANDBOXED``'s path, ``--unsandboxed``), ROUNDS_SANDBOX times each, and prints our pages
per second of each side and their ratio (the fork server serves one process, so each side needs its own), and the
CPU seconds part 2 took in the pooled children and their Tesseracts, which move far less with a shared machine's
load than the wall clock. Target: sandboxed / unsandboxed >= 0.9 for both parts.

Each side gets one untimed warm-up on one file so that neither pays for a cold disk cache alone (ours: it also
starts the fork server and the first pooled child, as a worker does once). The load average is printed first:
on a machine shared with other work, every figure is slower and the ratios move with the load.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pymupdf  # noqa: E402

from bench.corpus import corpus_dir  # noqa: E402
from matters.exhibits.ingest.child import usable_text  # noqa: E402
from matters.exhibits.ingest.pool import shared_pool  # noqa: E402
from matters.exhibits.ingest.runner import run_child  # noqa: E402
from matters.exhibits.ingest.spec import Spec  # noqa: E402

CORPUS = corpus_dir()
OCR_FILES = ["scan-1p.pdf", "scan-2p.pdf", "linn.pdf", "cardinal.pdf", "skew.pdf", "c02-22.pdf"]  # 10 pages
QUICK_OCR_FILES = ["scan-1p.pdf", "linn.pdf", "skew.pdf"]  # 3 pages
QUICK_COURT_FILES = 6
TARGET_DIGITAL = 0.8
TARGET_OCR = 0.9
ROUNDS = 5  # born-digital rounds, each side in turn; the medians are compared
CORES = os.cpu_count() or 1
ROUNDS_SANDBOX = 5
TARGET_SANDBOX = 0.9
UNSANDBOXED = "--unsandboxed" in sys.argv  # read before the first file: the pool's mode is fixed by it


def copy_files(sources: list[Path], dest: Path) -> list[Path]:
    """Copy ``sources`` into ``dest`` (prefixing an index so repeated files stay distinct); return the copies."""
    dest.mkdir(parents=True, exist_ok=True)
    copies = []
    for index, source in enumerate(sources):
        target = dest / f"{index:03d}-{source.name}"
        shutil.copyfile(source, target)
        copies.append(target)
    return copies


def run_ours(
    files: list[Path], out_root: Path, ocr_workers: int, workers: int = 1, job: str = "ingest"
) -> tuple[int, float, dict[str, int]]:
    """Run ``job`` on each file through ``run_child``, ``workers`` files at a time as that many worker processes
    would; return (pages, seconds, pages per text source)."""

    def one(index_path: tuple[int, Path]) -> list[dict]:
        index, path = index_path
        spec = Spec(source=str(path), kind="pdf", out_dir=str(out_root / f"{index:03d}"), ocr_workers=ocr_workers,
                    readers_unsandboxed=UNSANDBOXED)
        events = list(run_child(spec, memory_mb=2048, timeout_s=600, job=job))
        if events[-1]["event"] == "error":
            raise RuntimeError(f"{path.name}: {events[-1]['reason']}")
        return events

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(one, enumerate(files)))
    seconds = time.perf_counter() - start
    pages, sources = 0, {}
    for events in results:
        for event in events:
            if event["event"] == "page":
                pages += 1
                sources[event["source"]] = sources.get(event["source"], 0) + 1
            elif event["event"] == "previews":
                pages += event["pages"]
                sources["image"] = sources.get("image", 0) + event["pages"]
    return pages, seconds, sources


def children_cpu_s() -> tuple[frozenset[int], float]:
    """The pooled children alive now and the CPU seconds they have used, all their threads together (from
    ``/proc/PID/task/*/schedstat``, nanoseconds; a child that has exited is not counted)."""
    pids = frozenset(shared_pool().pids())
    total_ns = 0
    for pid in pids:
        for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            try:
                total_ns += int(stat.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return pids, total_ns / 1e9


def fully_born_digital(path: Path) -> bool:
    """True when every page of the PDF has a usable text layer (so no page would be OCR'd)."""
    with pymupdf.open(path) as doc:
        return all(usable_text(page.get_text()) for page in doc)


def run_bare_text(files: list[Path]) -> tuple[int, float]:
    """Extract the text of every page with a bare PyMuPDF loop; return (pages, seconds)."""
    pages = 0
    start = time.perf_counter()
    for path in files:
        doc = pymupdf.open(path)
        for page in doc:
            page.get_text()
            pages += 1
        doc.close()
    return pages, time.perf_counter() - start


def render_pages(files: list[Path], dest: Path) -> list[Path]:
    """Render every page at 300 dpi grayscale to PGM files in ``dest`` (untimed preparation for the baseline)."""
    dest.mkdir(parents=True, exist_ok=True)
    images = []
    for file_index, path in enumerate(files):
        with pymupdf.open(path) as doc:
            for page in doc:
                image = dest / f"{file_index:03d}-{page.number + 1:04d}.pgm"
                page.get_pixmap(dpi=300, colorspace=pymupdf.csGRAY, alpha=False).save(image)
                images.append(image)
    return images


def run_bare_tesseract(images: list[Path], out_dir: Path) -> tuple[int, float]:
    """OCR the images with ``tesseract --psm 1``, one process per core at a time; return (pages, seconds)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}

    def ocr(image: Path) -> None:
        command = ["tesseract", str(image), str(out_dir / image.stem), "--psm", "1", "--dpi", "300", "txt"]
        subprocess.run(command, env=env, check=True, capture_output=True)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        list(pool.map(ocr, images))
    return len(images), time.perf_counter() - start


def import_pymupdf_seconds(runs: int = 3) -> list[float]:
    """Time ``import pymupdf`` in ``runs`` fresh interpreters; return the seconds of each."""
    code = "import time;t=time.perf_counter();import pymupdf;print(time.perf_counter()-t)"
    return [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(runs)]


def bench_digital(files: list[Path], work: Path) -> tuple[float, float]:
    """Run part 1; print its figures and return (median ratio, ours pages/s, bare pages/s), medians of the rounds."""
    skipped = [path.name for path in files if not fully_born_digital(path)]
    files = [path for path in files if fully_born_digital(path)]
    run_ours(files[:1], work / "warmup-digital", ocr_workers=2)
    run_bare_text(files[:1])
    # A fraction of a second each: on a shared machine one round swings by a factor of two, so both sides run in
    # turn ROUNDS times and the medians are compared.
    bare_speeds, ours_speeds, ratios = [], [], []
    bare_cpu, ours_cpu = [], []  # CPU seconds per round: the bare loop; this process and the pooled child
    for round_number in range(ROUNDS):
        started_cpu = time.process_time()
        bare_pages, bare_s = run_bare_text(files)
        bare_cpu.append(time.process_time() - started_cpu)
        children_before, started_children = children_cpu_s()
        started_cpu = time.process_time()
        ours_pages, ours_s, sources = run_ours(files, work / f"out-digital-{round_number}", ocr_workers=2)
        children_after, ended_children = children_cpu_s()
        if children_before == children_after:  # else a child was replaced mid-round and its time is lost
            ours_cpu.append(time.process_time() - started_cpu + ended_children - started_children)
        bare_speeds.append(bare_pages / bare_s)
        ours_speeds.append(ours_pages / ours_s)
        ratios.append(ours_speeds[-1] / bare_speeds[-1])
    image_pages, image_s, _ = run_ours(files, work / "out-digital-0", ocr_workers=2, job="previews")
    assert ours_pages == bare_pages == image_pages, (ours_pages, bare_pages, image_pages)
    print(f"[born-digital] {len(files)} files, {ours_pages} pages; text source in ours: {sources}")
    print(f"  left out (pages without a text layer, which ours would OCR): {', '.join(skipped) or 'none'}")
    print(f"  {ROUNDS} rounds, each bare then ours; ratio per round: {', '.join(f'{r:.2f}' for r in ratios)}")
    print(f"  ours: {statistics.median(ours_speeds):7.2f} pages/s (median)")
    print(f"  bare: {statistics.median(bare_speeds):7.2f} pages/s (median)")
    # CPU time moves far less with the load than the wall clock does.
    print(f"  CPU ms per round, bare: {', '.join(f'{s * 1000:.0f}' for s in bare_cpu)}; ours (this process and "
          f"the pooled child): {', '.join(f'{s * 1000:.0f}' for s in ours_cpu) or 'not measured'}")
    if ours_cpu:
        print(f"  CPU ratio (bare / ours, medians): {statistics.median(bare_cpu) / statistics.median(ours_cpu):.2f}")
    print(f"  page images (separate later job): {image_s:7.2f} s  {image_pages / image_s:7.2f} pages/s")
    # The same pages as one document: what isolation costs per file, against what extraction costs per page.
    merged = work / "merged-born-digital.pdf"
    with pymupdf.open() as combined:
        for path in files:
            with pymupdf.open(path) as source:
                combined.insert_pdf(source)
        combined.save(merged)
    run_ours([merged], work / "warmup-merged", ocr_workers=2)
    one_pages, one_s, _ = run_ours([merged], work / "out-merged", ocr_workers=2)
    bare_one_pages, bare_one_s = run_bare_text([merged])
    ratio = (one_pages / one_s) / (bare_one_pages / bare_one_s)
    print(f"  the same {one_pages} pages as one file: ours {one_pages / one_s:7.2f} pages/s, bare "
          f"{bare_one_pages / bare_one_s:7.2f} pages/s, ratio {ratio:.2f}")
    return statistics.median(ratios), statistics.median(ours_speeds), statistics.median(bare_speeds)


def bench_ocr(files: list[Path], work: Path) -> tuple[float, float]:
    """Run part 2; print its figures and return (ours pages/s, bare pages/s)."""
    images = render_pages(files, work / "pgm")
    run_bare_tesseract(images[:1], work / "warmup-tess")
    bare_pages, bare_s = run_bare_tesseract(images, work / "out-tess")
    cpu_before = pool_cpu_s()
    ours_pages, ours_s, sources = run_ours(files, work / "out-ocr", ocr_workers=CORES, workers=CORES)
    OCR_CPU_S.append(sum(pool_cpu_s().get(pid, 0.0) - cpu_before.get(pid, 0.0) for pid in pool_cpu_s()))
    assert ours_pages == bare_pages, (ours_pages, bare_pages)
    print(f"[ocr] {len(files)} files, {ours_pages} pages, {CORES} cores; text source in ours: {sources}")
    print(f"  ours: {ours_s:7.2f} s  {ours_pages / ours_s:7.2f} pages/s")
    print(f"  bare: {bare_s:7.2f} s  {bare_pages / bare_s:7.2f} pages/s")
    return ours_pages / ours_s, bare_pages / bare_s


OCR_CPU_S: list[float] = []  # CPU seconds of the pooled children and their Tesseracts in part 2's run


def pool_cpu_s() -> dict[int, float]:
    """CPU seconds of each pooled child alive now, with its finished children (Tesseract, LibreOffice): utime,
    stime, cutime and cstime of ``/proc/PID/stat``, in clock ticks."""
    found = {}
    for pid in shared_pool().pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        found[pid] = sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return found


def compare_sandbox() -> int:
    """Run ``--quick`` in fresh processes, sandboxed and not, in turns; print each side's pages/s and the ratios."""
    speeds: dict[str, dict[str, list[float]]] = {"sandboxed": {}, "unsandboxed": {}}
    for round_number in range(ROUNDS_SANDBOX):
        for side in ("unsandboxed", "sandboxed") if round_number % 2 == 0 else ("sandboxed", "unsandboxed"):
            command = [sys.executable, str(Path(__file__).resolve()), "--quick", "--json"]
            if side == "unsandboxed":
                command.append("--unsandboxed")
            result = json.loads(subprocess.check_output(command, text=True).strip().splitlines()[-1])
            for part, value in result.items():
                speeds[side].setdefault(part, []).append(value)
            print(f"  round {round_number + 1} {side:<12} digital {result['digital']:7.2f} pages/s, "
                  f"OCR {result['ocr']:6.2f} pages/s, OCR CPU {result['ocr_cpu_s']:6.2f} s", flush=True)
    print()
    print(f"{'part':<12}{'sandboxed':>11}{'unsandboxed':>13}{'ratio':>8}{'target':>8}  met  "
          "(medians: pages/s; ocr_cpu_s: CPU seconds)")
    for part in ("digital", "ocr", "ocr_cpu_s"):
        sandboxed = statistics.median(speeds["sandboxed"][part])
        unsandboxed = statistics.median(speeds["unsandboxed"][part])
        # Seconds of CPU: the ratio is turned so that, as for pages/s, under 1 means the sandbox costs more.
        ratio = sandboxed / unsandboxed if part != "ocr_cpu_s" else unsandboxed / sandboxed
        print(f"{part:<12}{sandboxed:>11.2f}{unsandboxed:>13.2f}{ratio:>8.2f}{TARGET_SANDBOX:>8.2f}  "
              f"{'met' if ratio >= TARGET_SANDBOX else 'NOT MET'}")
    return 0


def main() -> int:
    """Parse arguments, run the three measurements and print the summary table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer files, for a smoke run")
    parser.add_argument("--digital-only", action="store_true", help="part 1 alone (born-digital PDFs)")
    parser.add_argument("--sandbox-compare", action="store_true", help="the readers' sandbox against none")
    parser.add_argument("--unsandboxed", action="store_true", help="pool children outside the readers' sandbox")
    parser.add_argument("--json", action="store_true", help="end with our pages/s of parts 1 and 2 as JSON")
    args = parser.parse_args()
    if args.sandbox_compare:
        return compare_sandbox()

    court = sorted((CORPUS / "court").glob("*.pdf"))
    if args.quick:
        court = court[:QUICK_COURT_FILES]
    ocr_names = QUICK_OCR_FILES if args.quick else OCR_FILES
    print(f"load average at start (1, 5, 15 min): {', '.join(f'{load:.1f}' for load in os.getloadavg())} "
          f"on {CORES} cores")
    with tempfile.TemporaryDirectory(prefix="lawdesk-bench-") as tmp:
        work = Path(tmp)
        court_files = copy_files(court, work / "court")
        digital = bench_digital(court_files, work)
        if args.digital_only:
            print(f"load average at the end (1, 5, 15 min): {', '.join(f'{load:.1f}' for load in os.getloadavg())}")
            return 0
        ocr_files = copy_files([CORPUS / "odd" / name for name in ocr_names], work / "odd")
        ocr = bench_ocr(ocr_files, work)
    if args.json:
        print(json.dumps({"digital": digital[1], "ocr": ocr[0], "ocr_cpu_s": OCR_CPU_S[-1]}))
        return 0
    imports = import_pymupdf_seconds()
    print(f"[import pymupdf] fresh interpreter: {', '.join(f'{s * 1000:.0f} ms' for s in imports)}")

    print()
    print(f"{'measure':<22}{'ours p/s':>10}{'bare p/s':>10}{'ratio':>8}{'target':>8}  met")
    ocr_ratio = ocr[0] / ocr[1]
    for name, (ratio, ours, bare), target in (("born-digital PDF", digital, TARGET_DIGITAL),
                                              ("OCR", (ocr_ratio, *ocr), TARGET_OCR)):
        verdict = "met" if ratio >= target else "NOT MET"
        print(f"{name:<22}{ours:>10.2f}{bare:>10.2f}{ratio:>8.2f}{target:>8.2f}  {verdict}")
    print(f"{'import pymupdf':<22}{statistics.median(imports) * 1000:>9.0f} ms (median of {len(imports)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
