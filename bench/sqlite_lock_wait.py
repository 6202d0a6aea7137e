"""How long a page view's audit entry waits on SQLite while a worker verifies drafts, the check inside the
worker's write transaction against before it.

Run from the repository root as ``.venv/bin/python bench/sqlite_lock_wait.py --data DIR [--seconds S]``, where DIR
is a data directory bench/profile_pages.py built (its SQLite database and ``matter.json``). For each way, a child
process at ``nice 10`` (as ``make run`` starts workers) verifies a one-sentence draft of the matter back to back
for S seconds (default 15), the way the job's verify stage runs it:
- ``inside``: the verifier runs inside ``transaction.atomic()``, which on SQLite (``IMMEDIATE``) holds the write
  lock from its start, as the stage did before ``pipeline.stages.results.prepare_result``;
- ``before``: the verifier runs first and only its findings are written in the transaction, as now.
Meanwhile this process writes a ``page.view`` audit entry every 50 ms, as a page view does, and prints how many
it wrote and their median, p95 and longest time. Back-to-back verifications exaggerate a job, which verifies
once a stage; the longest wait shows what one verification can cost a page view.
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


def audit_waits(seconds: float) -> list[float]:
    """Write a page view's audit entry every 50 ms for ``seconds``; return each write's time in ms, sorted."""
    from django.contrib.auth import get_user_model

    from matters.audit.services import audit_record
    from matters.models import Matter, Page

    user = get_user_model().objects.get(username="bench01")
    matter = Matter.objects.get(name="Load v. Bench")
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
    parser.add_argument("--child", nargs=2, metavar=("WAY", "VERSION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    _setup(args.data)
    if args.child:
        print(json.dumps({"verifications": verify_loop(int(args.child[1]), args.child[0], args.seconds)}))
        return 0
    from django.contrib.auth import get_user_model

    from matters.drafts.services import draft_create
    from matters.models import Matter

    matter = Matter.objects.get(name="Load v. Bench")
    version = draft_create(matter=matter, title="Lock wait bench", text=SENTENCE, author_kind="person",
                           author=get_user_model().objects.get(username="bench01"))
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.seconds:.0f} s each")
    print(f"{'verifier':<10}{'verifications':>14}{'writes':>8}{'median ms':>10}{'p95 ms':>8}{'longest ms':>11}")
    for way in ("inside", "before"):
        child = subprocess.Popen(["nice", "-n", "10", sys.executable, __file__, "--data", str(args.data),
                                  "--seconds", str(args.seconds), "--child", way, str(version.pk)],
                                 stdout=subprocess.PIPE, text=True)
        time.sleep(min(3.0, args.seconds / 4))  # the child's imports, before its first verification
        waits = audit_waits(args.seconds - 4)
        verifications = json.loads(child.communicate()[0].strip().splitlines()[-1])["verifications"]
        print(f"{way:<10}{verifications:>14}{len(waits):>8}{waits[len(waits) // 2]:>10.1f}"
              f"{waits[int(len(waits) * 0.95)]:>8.1f}{waits[-1]:>11.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
