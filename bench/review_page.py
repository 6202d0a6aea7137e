"""The review page of a 300-finding draft, before and after a change, side by side in one run.

Run from the repository root as ``.venv/bin/python bench/review_page.py [--before REF] [--pages N] [--data DIR]
[--db URL] [--rounds R] [--batch B] [--profile before|after]``.

It builds the load bench's matter once (bench/load_matter.py: N pages, default 600, a draft whose verifier
findings number 300, one attorney; ``matter.json`` in DIR marks it built, so later runs reuse it) in DIR and the
database URL (default SQLite in DIR). Then it starts two server processes on that same database: "after" runs this
working tree, "before" the commit REF (default ``main``) exported with ``git archive`` into a temporary folder,
both with this virtual environment. Each opens the review page through Django's test Client as the bench's
attorney, the whole middleware stack included, and closes the database connection after each request as a
server does (so a request on SQLite opens its connection, as it does under ``make run``). They take turns, B
requests each (default 10), for R rounds (default 10), so a burst of other work on a shared machine falls on
both. Per side it prints the median and p95 of the wall-clock time and of the process's CPU time
(``time.process_time``: the Python of the request and, on SQLite, the database's own work; a PostgreSQL
server's CPU is not in it), the queries of one request and its writes, and the page's size; and whether the two
sides served the same page (the CSRF tokens, which differ on every request, left out). ``--profile SIDE``
prints a cProfile of B requests of that side (``--sort``: tottime, the default, or cumulative).

The figures are one process with nothing else of LawDesk running, on a machine others may share: the load
average is printed with them. They measure what a request costs, not how requests queue (bench/load.py does).
"""

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_CSRF = re.compile(rb'(name="csrfmiddlewaretoken" value="|"X-CSRFToken": ")[^"]*"')


# --- the server side: one process per code tree, driven over stdin/stdout ---------------------------------------

def _serve(tree: Path) -> None:
    """Answer commands on stdin, one JSON line each: ``{"run": n}`` times n requests, ``{"profile": n}`` profiles
    them, ``{"probe": true}`` counts one request's queries and digests its page."""
    sys.path[0] = str(tree)  # in place of this script's folder, whose modules must not shadow the tree's
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import close_old_connections, connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    matter = json.loads((Path(os.environ["LAWDESK_DATA_DIR"]) / "matter.json").read_text())
    url = f"/matters/{matter['matter']}/drafts/{matter['draft']}/"
    client = Client(SERVER_NAME="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="bench01"))

    def get() -> bytes:
        response = client.get(url)
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
        # The test Client keeps its connection between requests; a server closes it at the end of each one
        # (CONN_MAX_AGE=0; a PostgreSQL connection goes back to its pool), so the next request opens it again.
        close_old_connections()
        return response.content

    get()  # the first request of a session fills what later ones reuse
    for line in sys.stdin:
        command = json.loads(line)
        if "run" in command:
            wall, cpu = [], []
            for _ in range(command["run"]):
                started, started_cpu = time.perf_counter(), time.process_time()
                get()
                cpu.append((time.process_time() - started_cpu) * 1000)
                wall.append((time.perf_counter() - started) * 1000)
            answer = {"wall_ms": wall, "cpu_ms": cpu}
        elif "profile" in command:
            import cProfile
            import io
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(command["profile"]):
                get()
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(command["sort"]).print_stats(40)
            answer = {"profile": out.getvalue()}
        else:
            with CaptureQueriesContext(connection) as queries:
                html = get()
            writes = [q["sql"] for q in queries.captured_queries
                      if q["sql"].lstrip().split(" ", 1)[0].upper() in ("INSERT", "UPDATE", "DELETE")]
            answer = {"queries": len(queries), "writes": len(writes), "bytes": len(html),
                      "digest": hashlib.sha256(_CSRF.sub(rb"\1\"", html)).hexdigest(),
                      "findings": matter["findings"]}
        print(json.dumps(answer), flush=True)


# --- the driver ------------------------------------------------------------------------------------------------

def _build(env: dict, pages: int) -> dict:
    """The load bench's matter with one attorney, built once in the data directory (``matter.json`` marks it)."""
    note = Path(env["LAWDESK_DATA_DIR"]) / "matter.json"
    if not note.exists():
        subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=REPO, env=env, check=True)
        built = subprocess.run([sys.executable, "bench/load_matter.py", "build", "--pages", str(pages),
                                "--users", "1"], cwd=REPO, env=env, check=True, capture_output=True, text=True)
        note.write_text(built.stdout.strip().splitlines()[-1])
    return json.loads(note.read_text())


def _export(ref: str, into: Path) -> Path:
    """The tree of commit ``ref`` as files under ``into`` (git archive: no worktree, no checkout)."""
    archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=REPO, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


class _Side:
    """A server process of one code tree."""

    def __init__(self, name: str, tree: Path, env: dict) -> None:
        self.name = name
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", str(tree)],
                                        cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.wall_ms: list[float] = []
        self.cpu_ms: list[float] = []

    def ask(self, command: dict) -> dict:
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"The {self.name} process stopped; see its output above.")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--before", default="main", help="the commit to compare with (default main)")
    parser.add_argument("--pages", type=int, default=600)
    parser.add_argument("--data", type=Path, help="data directory to build in or reuse (default: a fresh one)")
    parser.add_argument("--db", default="", help="database URL (default: SQLite in the data directory)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--profile", choices=["before", "after"])
    parser.add_argument("--sort", default="tottime", help="the profile's order: tottime (default) or cumulative")
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve)
        return 0
    data = args.data or Path(tempfile.mkdtemp(prefix="lawdesk-review-"))
    data.mkdir(parents=True, exist_ok=True)
    env = os.environ | {"LAWDESK_DATA_DIR": str(data), "DJANGO_SETTINGS_MODULE": "lawdesk.settings",
                        "DATABASE_URL": args.db or f"sqlite:///{data / 'lawdesk.sqlite3'}",
                        "LAWDESK_LOG_LEVEL": "WARNING"}
    env.pop("REDIS_URL", None)
    matter = _build(env, args.pages)
    with tempfile.TemporaryDirectory(prefix="lawdesk-before-") as before_tree:
        sides = [_Side("before", _export(args.before, Path(before_tree)), env), _Side("after", REPO, env)]
        probes = {side.name: side.ask({"probe": True}) for side in sides}
        for _ in range(args.rounds):
            for side in sides:
                answer = side.ask({"run": args.batch})
                side.wall_ms += answer["wall_ms"]
                side.cpu_ms += answer["cpu_ms"]
        if args.profile:
            profiled = next(s for s in sides if s.name == args.profile)
            print(profiled.ask({"profile": args.batch, "sort": args.sort})["profile"])
        for side in sides:
            side.close()
    print(f"review page, {matter['findings']} findings, {matter['pages']:,} pages; {args.rounds} rounds of "
          f"{args.batch} requests a side, alternating; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; before = {args.before}; database {env['DATABASE_URL'].split(':')[0]}")
    print(f"{'side':<8}{'wall p50':>9}{'wall p95':>9}{'cpu p50':>9}{'cpu p95':>9}{'queries':>8}{'writes':>7}"
          f"{'KB':>6}")
    for side in sides:
        probe = probes[side.name]
        print(f"{side.name:<8}{statistics.median(side.wall_ms):>9.1f}{_p95(side.wall_ms):>9.1f}"
              f"{statistics.median(side.cpu_ms):>9.1f}{_p95(side.cpu_ms):>9.1f}{probe['queries']:>8}"
              f"{probe['writes']:>7}{probe['bytes'] / 1024:>6.0f}")
    before, after = (statistics.median(s.cpu_ms) for s in sides)
    same = probes["before"]["digest"] == probes["after"]["digest"]
    print(f"after/before CPU (medians) {after / before:.2f}; the same page: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
