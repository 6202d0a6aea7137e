"""How long a page view's audit entry waits on SQLite while a worker writes: verifying drafts (the check inside
the worker's write transaction against before it) or ingesting a long born-digital file.

Run from the repository root as ``.venv/bin/python bench/sqlite_lock_wait.py --data DIR [--seconds S]
[--matter NAME] [--ways WAY ...]``, where DIR is a data directory bench/profile_pages.py built (its SQLite database
and ``matter.json``; ``--matter`` names its matter, default ``Load v. Bench``). For each way, a child process at
``nice 10`` (as ``make run`` starts workers) works back to back for S seconds (default 15):
- ``inside``: verifies a one-sentence draft of the matter inside ``transaction.atomic()``, which on SQLite
  (``IMMEDIATE``) holds the write lock from its start, as the stage did before
  ``pipeline.stages.kinds.prepare_result``;
- ``before``: verifies it first and writes only its findings in the transaction, as the stage does now;
- ``ingest``: uploads and processes (``exhibit_process``, no page images) a born-digital PDF of the court
  filings joined until ``INGEST_PAGES`` pages, again and again: its pages as they are read (with their
  full-text index, by trigger), its progress, its facts, its status.
Meanwhile this process writes a ``page.view`` audit entry every 50 ms, as a page view does, and prints how many
it wrote and their median, p95 and longest time. Back-to-back work exaggerates a worker, which also waits on
files and models; the longest wait shows what one piece of its work can cost a page view.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SENTENCE = "MOTION FOR SUMMARY JUDGMENT. The court ordered payment (Ex. 1 at 1)."
INGEST_PAGES = 400


WAYS = ("inside", "before", "ingest")


def _setup(data: Path) -> None:
    os.environ.update(LAWDESK_DATA_DIR=str(data), DATABASE_URL=f"sqlite:///{data / 'lawdesk.sqlite3'}",
                      DJANGO_SETTINGS_MODULE="lawdesk.settings", LAWDESK_LOG_LEVEL="WARNING")
    import django

    django.setup()


def verify_loop(version_id: int, way: str, seconds: float) -> int:
    """Verify version ``version_id`` again and again for ``seconds``; return how many times."""
    from django.db import transaction

    from matters.drafts.services import draft_verify
    from matters.drafts.verifier.check import verify_text
    from matters.models import DraftVersion

    version = DraftVersion.objects.select_related("draft__matter").get(pk=version_id)
    end, count = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        if way == "inside":
            with transaction.atomic():
                draft_verify(version=version)
        else:
            results = verify_text(matter=version.draft.matter, text=version.text)
            with transaction.atomic():
                draft_verify(version=version, results=results)
        count += 1
    return count


def _long_pdf(data: Path) -> Path:
    """The court filings joined into one born-digital PDF of at least ``INGEST_PAGES`` pages, made once in ``data``."""
    import pymupdf

    from bench.corpus import corpus_dir

    path = data / "lock-wait-ingest.pdf"
    if path.exists():
        return path
    joined = pymupdf.open()
    while joined.page_count < INGEST_PAGES:
        for source in sorted((corpus_dir() / "court").glob("*.pdf")):
            with pymupdf.open(source) as document:
                joined.insert_pdf(document)
    joined.save(path)
    return path


def ingest_loop(matter_name: str, data: Path, seconds: float) -> int:
    """Upload and process a long born-digital PDF again and again for ``seconds``; return how many times. Each
    copy's bytes differ (a trailing comment), so none is a duplicate of the last."""
    import io

    from django.contrib.auth import get_user_model

    from matters.exhibits.processing import exhibit_process
    from matters.exhibits.services import exhibit_create
    from matters.models import Matter

    matter, user = Matter.objects.get(name=matter_name), get_user_model().objects.get(username="bench01")
    pdf = _long_pdf(data).read_bytes()
    end, count = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        exhibit = exhibit_create(matter=matter, stream=io.BytesIO(pdf + f"\n% copy {time.time_ns()}\n".encode()),
                                 original_name="lock-wait.pdf", origin="client", uploaded_by=user, enqueue=False)
        exhibit_process(exhibit_id=exhibit.pk, previews="skip")
        count += 1
    return count


def audit_waits(matter_name: str, seconds: float) -> list[float]:
    """Write a page view's audit entry every 50 ms for ``seconds``; return each write's time in ms, sorted."""
    from django.contrib.auth import get_user_model

    from matters.audit.services import audit_record
    from matters.models import Matter, Page

    user = get_user_model().objects.get(username="bench01")
    matter = Matter.objects.get(name=matter_name)
    page = Page.objects.filter(exhibit__matter=matter).first()
    waits, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        audit_record(action="page.view", actor=user, matter=matter, obj=page, file_sha256="")
        waits.append((time.perf_counter() - started) * 1000)
        time.sleep(0.05)
    return sorted(waits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a data directory bench/profile_pages.py built")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--matter", default="Load v. Bench", help="the matter's name")
    parser.add_argument("--ways", nargs="*", default=list(WAYS), choices=WAYS)
    parser.add_argument("--child", nargs=2, metavar=("WAY", "VERSION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    _setup(args.data)
    if args.child:
        way, version = args.child
        done = (ingest_loop(args.matter, args.data, args.seconds) if way == "ingest"
                else verify_loop(int(version), way, args.seconds))
        print(json.dumps({"done": done}))
        return 0
    from django.contrib.auth import get_user_model

    from matters.drafts.services import draft_create
    from matters.models import Matter

    matter = Matter.objects.get(name=args.matter)
    _long_pdf(args.data)
    version = draft_create(matter=matter, title="Lock wait bench", text=SENTENCE, author_kind="person",
                           author=get_user_model().objects.get(username="bench01"))
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.seconds:.0f} s each")
    print(f"{'worker':<10}{'times done':>14}{'writes':>8}{'median ms':>10}{'p95 ms':>8}{'longest ms':>11}")
    for way in args.ways:
        child = subprocess.Popen(["nice", "-n", "10", sys.executable, __file__, "--data", str(args.data),
                                  "--seconds", str(args.seconds), "--matter", args.matter,
                                  "--child", way, str(version.pk)],
                                 stdout=subprocess.PIPE, text=True)
        time.sleep(min(3.0, args.seconds / 4))  # the child's imports, before its first piece of work
        waits = audit_waits(args.matter, args.seconds - 4)
        done = json.loads(child.communicate()[0].strip().splitlines()[-1])["done"]
        print(f"{way:<10}{done:>14}{len(waits):>8}{waits[len(waits) // 2]:>10.1f}"
              f"{waits[int(len(waits) * 0.95)]:>8.1f}{waits[-1]:>11.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
