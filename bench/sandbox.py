"""What the walls around untrusted files cost, measured side by side.

Run from the repository root as ``.venv/bin/python bench/sandbox.py [--runs N]``.

- Word conversion: ``odd/letter.docx`` (copied to a temporary directory) converted to PDF by LibreOffice directly,
  and through :func:`matters.exhibits.ingest.convert.office_to_pdf` (the allowlist, the sandbox probe and LibreOffice
  inside bubblewrap); the median of ``--runs`` each, interleaved, and their ratio.
- Volume images: a 14,000 x 14,000 PNG (the decompression bomb of a hostile OPT) decoded the old way, in this
  process, against the limited child; each in a fresh process, whose peak memory (ru_maxrss) is reported.
"""

import argparse
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.corpus import corpus_dir  # noqa: E402

LETTER = corpus_dir() / "odd" / "letter.docx"

_DECODE_IN_PROCESS = """
import resource, sys, pymupdf
with pymupdf.open(sys.argv[1]) as image:
    pdf = image.convert_to_pdf()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""
_DECODE_IN_CHILD = """
import os, resource, sys, tempfile
from matters.exhibits.ingest.spec import Spec
from matters.exhibits.ingest.runner import run_child
with tempfile.TemporaryDirectory() as work:
    events = list(run_child(Spec(source="", kind="images", out_dir=work, images=(sys.argv[1],),
                                 max_image_pixels=89_478_485), memory_mb=1536, timeout_s=600, job="assemble"))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, events[-1].get("event"), file=sys.stdout)
"""


def _convert_direct(source: Path, work: Path) -> None:
    subprocess.run([shutil.which("soffice"), f"-env:UserInstallation=file://{work}/profile", "--headless",
                    "--norestore", "--convert-to", "pdf", "--outdir", str(work), str(source)], check=True,
                   capture_output=True)


def conversion(runs: int) -> dict:
    from matters.exhibits.ingest.convert import office_to_pdf

    direct, sandboxed = [], []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = work / "letter.docx"
        shutil.copyfile(LETTER, source)
        for run in range(runs):
            started = time.perf_counter()
            _convert_direct(source, work / f"direct-{run}")
            direct.append(time.perf_counter() - started)
            started = time.perf_counter()
            office_to_pdf(source, work / f"sandboxed-{run}.pdf", suffix=".docx", description="Word document")
            sandboxed.append(time.perf_counter() - started)
    return {"bench": "docx_conversion", "runs": runs, "direct_s": round(statistics.median(direct), 2),
            "sandboxed_s": round(statistics.median(sandboxed), 2),
            "ratio": round(statistics.median(sandboxed) / statistics.median(direct), 2)}


def bomb() -> dict:
    from PIL import Image

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bomb.png"
        out = io.BytesIO()
        Image.new("1", (14_000, 14_000), 1).save(out, format="PNG", optimize=True)
        path.write_bytes(out.getvalue())
        old = subprocess.run([sys.executable, "-c", _DECODE_IN_PROCESS, str(path)], capture_output=True, text=True,
                             cwd=REPO)
        new = subprocess.run([sys.executable, "-c", _DECODE_IN_CHILD, str(path)], capture_output=True, text=True,
                             cwd=REPO)
        return {"bench": "volume_image_bomb", "png_bytes": path.stat().st_size,
                "worker_peak_mib_decoding_in_process": int(old.stdout.split()[0]) if old.returncode == 0 else None,
                "worker_peak_mib_with_child": int(new.stdout.split()[0]), "child_result": new.stdout.split()[1]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(conversion(args.runs)), flush=True)
    print(json.dumps(bomb()), flush=True)


if __name__ == "__main__":
    main()
