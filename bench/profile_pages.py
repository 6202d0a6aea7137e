"""What each page of bench/load.py costs alone, in-process: time, queries and, on request, a cProfile of one page.

Run from the repository root as ``.venv/bin/python bench/profile_pages.py [--pages N] [--data DIR] [--db URL]
[--rounds R] [--profile NAME] [--only NAME ...]``. It builds the load bench's matter (bench/load_matter.py:
N pages, default 5,000, a draft with 300 findings) in the data directory DIR (a fresh one under /tmp by default)
and database URL (default SQLite in DIR), or reuses the one already built there (``matter.json`` in DIR says so,
so a 50,000-page matter is built once). Then it opens each page through Django's test Client as the bench's first
attorney, the whole middleware stack included, ``R`` times (default 9), and prints per page the fastest and the
median time in ms, the number of queries and the size of the HTML. ``--profile NAME`` prints the 25 functions of
that page with the most time (``--sort``: cumulative, the default, or tottime; cProfile over the rounds).

Times are of this one process with nothing else of LawDesk running, on a machine others may share: the load
average is printed with them. It measures what a request costs, not how requests queue (bench/load.py does).
"""

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _environment(data: Path, db_url: str) -> None:
    os.environ.update(LAWDESK_DATA_DIR=str(data), DATABASE_URL=db_url, DJANGO_SETTINGS_MODULE="lawdesk.settings",
                      LAWDESK_LOG_LEVEL="WARNING")
    os.environ.pop("REDIS_URL", None)


def _matter(data: Path, pages: int) -> dict:
    """The load bench's matter in the configured database: built (and noted in ``data/matter.json``) once."""
    from django.core.management import call_command

    from bench import load_matter

    note = data / "matter.json"
    if note.exists():
        return json.loads(note.read_text())
    call_command("migrate", verbosity=0)
    matter = load_matter.build(pages, 1)
    print(f"built {matter['pages']:,} pages in {len(matter['exhibits']):,} files in {matter['build_s']} s",
          flush=True)
    note.write_text(json.dumps(matter))
    return matter


def page_urls(matter: dict) -> dict[str, tuple[str, dict]]:
    """The pages bench/load.py measures: name -> (path, extra request headers as Client keyword arguments)."""
    base = f"/matters/{matter['matter']}"
    exhibit = matter["exhibits"][0]
    htmx = {"HTTP_HX_REQUEST": "true"}
    return {
        "matter page": (f"{base}/", {}),
        "exhibit list": (f"{base}/?page=2", htmx | {"HTTP_HX_TARGET": "exhibit-list"}),
        "page viewer": (f"{base}/exhibits/{exhibit['id']}/pages/1/", {}),
        "search": (f"{base}/?q=court", htmx | {"HTTP_HX_TARGET": "search-results"}),
        "search phrase": (f'{base}/?q="the court"', htmx | {"HTTP_HX_TARGET": "search-results"}),
        "search rare": (f"{base}/?q=plaintiff+injunction", htmx | {"HTTP_HX_TARGET": "search-results"}),
        "review page": (f"{base}/drafts/{matter['draft']}/", {}),
        "download": (f"{base}/exhibits/{exhibit['id']}/original/", {}),
    }


def measure(matter: dict, rounds: int, only: list[str], profile: str, sort: str = "cumulative") -> list[dict]:
    """Open each page ``rounds`` times (after one warm-up); return per page its times, queries and size."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(SERVER_NAME="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="bench01"))
    rows = []
    for name, (url, headers) in page_urls(matter).items():
        if only and name not in only:
            continue
        response = client.get(url, **headers)
        if response.status_code != 200:
            raise SystemExit(f"{name}: {url} answered {response.status_code}")
        size = len(b"".join(response.streaming_content) if response.streaming else response.content)
        times = []
        profiler = cProfile.Profile() if name == profile else None
        with CaptureQueriesContext(connection) as queries:
            for _ in range(rounds):
                started = time.perf_counter()
                if profiler:
                    profiler.enable()
                response = client.get(url, **headers)
                if response.streaming:
                    b"".join(response.streaming_content)
                if profiler:
                    profiler.disable()
                times.append((time.perf_counter() - started) * 1000)
        rows.append({"page": name, "best_ms": min(times), "median_ms": statistics.median(times),
                     "queries": len(queries) // rounds, "bytes": size})
        if profiler:
            pstats.Stats(profiler).sort_stats(sort).print_stats(25)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=5_000)
    parser.add_argument("--data", type=Path, help="data directory to build in or reuse (default: a fresh one)")
    parser.add_argument("--db", default="", help="database URL (default: SQLite in the data directory)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--profile", default="", help="the page to profile, by name (e.g. 'review page')")
    parser.add_argument("--sort", default="cumulative", help="cProfile's order: cumulative or tottime")
    parser.add_argument("--only", nargs="*", default=[], help="measure only these pages, by name")
    args = parser.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="lawdesk-profile-"))
    data.mkdir(parents=True, exist_ok=True)
    _environment(data, args.db or f"sqlite:///{data / 'lawdesk.sqlite3'}")
    import django

    django.setup()
    matter = _matter(data, args.pages)
    rows = measure(matter, args.rounds, args.only, args.profile, args.sort)
    print(f"{matter['pages']:,} pages, {matter['findings']} findings; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; data {data}")
    print(f"{'page':<14}{'best ms':>9}{'median ms':>10}{'queries':>8}{'KB':>7}")
    for row in rows:
        print(f"{row['page']:<14}{row['best_ms']:>9.1f}{row['median_ms']:>10.1f}{row['queries']:>8}"
              f"{row['bytes'] / 1024:>7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
