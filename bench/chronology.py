"""The matter's chronology: every date on 1,000 and 5,000 evidence pages, ours against a naive scan.

Run from the repository root as ``.venv/bin/python bench/chronology.py [--quick]`` (500 and 2,000 pages).

The pages are those of ``bench/verify.py``: the court filings of the corpus, repeated, each with a ledger line of
its own date, as one matter's evidence in a fresh SQLite database, their dates indexed as ingest does (timed
apart: once per exhibit, when it becomes ready).
- ours: :func:`matters.chronology.selectors.matter_chronology`, the pages chosen by the verifier's index of dates
  and read again for their words; whole, and for a one-month span (median of 3 runs);
- naive: every evidence page of the matter loaded and read with the same date reader, then kept or not.
The two must give the same dates (asserted). Targets: the whole chronology of 5,000 pages under 5 s; a one-month
span at least 10 times faster than the naive scan.
"""

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.django_env import setup_django  # noqa: E402
from bench.verify import build_matter, corpus_pages  # noqa: E402


def _median(fn, runs: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def naive(matter, start: dt.date | None = None, end: dt.date | None = None) -> list[tuple[str, str, int]]:
    """Every date of every evidence page, read from all the page texts: ``(first day, last day, page id)``."""
    from matters.drafts.verifier.dates import find_dates
    from matters.models import Page
    from matters.selectors import evidence_exhibits

    low, high = (start.isoformat() if start else ""), (end.isoformat() if end else "9999")
    found = []
    for page_id, text in Page.objects.filter(exhibit__in=evidence_exhibits(matter)).values_list("id", "text"):
        for mention in find_dates(text, matter.date_order):
            if mention.problem or not mention.readings:
                continue
            first = mention.days[0] if mention.days else mention.readings[0]
            last = mention.days[-1] if mention.days else first
            if last >= low and first <= high:
                found.append((first, last, page_id))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    sizes = (500, 2000) if parser.parse_args().quick else (1000, 5000)
    with tempfile.TemporaryDirectory() as work:
        setup_django(Path(work) / "data")
        from matters.chronology.selectors import matter_chronology
        from matters.drafts.verifier.facts import matter_index_facts

        texts = corpus_pages(Path(work))
        span = (dt.date(2001, 3, 1), dt.date(2001, 3, 31))
        print(f"{'pages':>6} {'index s':>8} {'ours s':>8} {'naive s':>8} {'ratio':>6} {'month ours s':>13} "
              f"{'month naive s':>14} {'ratio':>6} {'dates':>7}")
        for pages in sizes:
            matter = build_matter(f"chron{pages}", pages, texts)
            started = time.perf_counter()
            matter_index_facts(matter)
            index_s = time.perf_counter() - started
            ours_s, ours = _median(lambda: matter_chronology(matter))
            naive_s, theirs = _median(lambda: naive(matter))
            assert sorted((f.start, f.end, f.page_id) for f in ours) == theirs, "the two chronologies differ"
            month_s, month = _median(lambda: matter_chronology(matter, start=span[0], end=span[1]))
            month_naive_s, month_theirs = _median(lambda: naive(matter, *span))
            assert sorted((f.start, f.end, f.page_id) for f in month) == month_theirs
            print(f"{pages:>6} {index_s:>8.2f} {ours_s:>8.2f} {naive_s:>8.2f} {naive_s / ours_s:>6.1f} "
                  f"{month_s:>13.3f} {month_naive_s:>14.3f} {month_naive_s / month_s:>6.1f} {len(ours):>7}")


if __name__ == "__main__":
    main()
