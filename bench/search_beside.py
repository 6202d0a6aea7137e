"""A search in a small matter beside a large one, on SQLite: the index that filters by matter after the match
against the one that names the matter inside it (``matters.exhibits.search_index.index_matter``), in one run.

Run from the repository root as ``.venv/bin/python bench/search_beside.py [--pages N] [--small S] [--data DIR]
[--rounds R]``. It builds in DIR (a fresh one under /tmp by default; ``matters.json`` there says it is built, so a
50,000-page matter is built once) a SQLite database with the load bench's matter of N pages (default 50,000:
bench/load_matter.py, the court filings repeated) and a second matter of at least S pages (default 100) of the
same filings. Then, for each query, it runs the search box's search (``matter_search_results``: the count, then
the hits) R times (default 9) in each matter with the index as migration 0027 makes it, rebuilds the index as it
was before (the text alone, ``unindex_matter``) and runs the same searches again, and puts it back. It prints per
matter and query the matches, the pages the full-text index alone yields for the query's MATCH (before: every
matter's; after: the matter's own) and the median ms of each layout with their ratio.

Times are of this one process on a machine others may share; the load average is printed with them.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUERIES = ["court", '"the court"', "plaintiff injunction", "summary judgment"]


def _build(data: Path, pages: int, small: int) -> dict:
    """The two matters, built once in ``data`` and noted in ``data/matters.json``."""
    from django.core.management import call_command

    from bench import load_matter
    from matters.services import matter_create

    note = data / "matters.json"
    if note.exists():
        return json.loads(note.read_text())
    call_command("migrate", verbosity=0)
    started = time.monotonic()
    users, _sessions = load_matter._users(1)
    large = matter_create(name="Large v. Bench", created_by=users[0])
    load_matter._exhibits(large, users[0], pages)
    few = matter_create(name="Small v. Bench", created_by=users[0])
    load_matter._exhibits(few, users[0], small)
    load_matter._analyze()
    built = {"large": large.pk, "small": few.pk, "build_s": round(time.monotonic() - started, 1)}
    note.write_text(json.dumps(built))
    return built


def _fts_rows(match: str) -> int:
    """How many pages the full-text index alone yields for ``match``, before any join."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM matters_page_fts WHERE matters_page_fts MATCH %s", [match])
        return cursor.fetchone()[0]


def _measure(matter_ids: dict, rounds: int, with_matter: bool) -> dict:
    """(matter name, query) -> matches, pages the index yields, median ms of ``matter_search_results``."""
    from matters.exhibits import search
    from matters.models import Matter

    rows = {}
    for name, matter_id in matter_ids.items():
        matter = Matter.objects.get(pk=matter_id)
        for query in QUERIES:
            search.matter_search_results(matter=matter, query=query)  # warm the page cache
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                results = search.matter_search_results(matter=matter, query=query)
                times.append((time.perf_counter() - started) * 1000)
            match = search._fts5_query(search.search_terms(query))
            match = search._in_matter(match, matter_id) if with_matter else match
            rows[name, query] = (results.matches, _fts_rows(match), statistics.median(times))
    return rows


def _layout(with_matter: bool) -> None:
    """Rebuild SQLite's index in one layout: with the matter column (as migrated) or the text alone (before)."""
    from django.db import connection, transaction

    from matters.exhibits import search, search_index

    with transaction.atomic(), connection.cursor() as cursor:
        editor = SimpleNamespace(connection=connection, execute=cursor.execute)
        (search_index.index_matter if with_matter else search_index.unindex_matter)(None, editor)
    # The search code names the matter inside the MATCH only with the matter column there to name.
    search._in_matter = _IN_MATTER if with_matter else (lambda fts_query, matter_id: fts_query)


_IN_MATTER = None


def main() -> int:
    global _IN_MATTER
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--data", type=Path, help="data directory to build in or reuse (default: a fresh one)")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="lawdesk-search-"))
    data.mkdir(parents=True, exist_ok=True)
    os.environ.update(LAWDESK_DATA_DIR=str(data), DATABASE_URL=f"sqlite:///{data / 'lawdesk.sqlite3'}",
                      DJANGO_SETTINGS_MODULE="lawdesk.settings", LAWDESK_LOG_LEVEL="WARNING")
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from matters.exhibits import search
    from matters.models import Page

    _IN_MATTER = search._in_matter
    built = _build(data, args.pages, args.small)
    ids = {"small": built["small"], "large": built["large"]}
    sizes = {name: Page.objects.filter(exhibit__matter_id=pk).count() for name, pk in ids.items()}
    _layout(with_matter=True)
    after = _measure(ids, args.rounds, with_matter=True)
    _layout(with_matter=False)
    before = _measure(ids, args.rounds, with_matter=False)
    _layout(with_matter=True)
    print(f"small matter {sizes['small']:,} pages beside large {sizes['large']:,}; SQLite; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; median of {args.rounds}; data {data}")
    print(f"{'matter':<7}{'query':<22}{'matches':>8}{'index rows before':>18}{'after':>7}"
          f"{'ms before':>10}{'ms after':>9}{'before/after':>13}")
    for (name, query), (matches, rows_before, ms_before) in before.items():
        _, rows_after, ms_after = after[name, query]
        print(f"{name:<7}{query:<22}{matches:>8,}{rows_before:>18,}{rows_after:>7,}"
              f"{ms_before:>10.1f}{ms_after:>9.1f}{ms_before / ms_after:>13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
