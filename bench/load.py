"""An office's load on one matter, measured: page times under 50 people at once while a production and two jobs run.

Run from the repository root as ``.venv/bin/python bench/load.py [--db sqlite|postgres|both] [--pages N]
[--seconds S] [--users U] [--production-pages P]``; ``--db postgres`` (and ``both``) needs ``--pg-url`` (or
``LAWDESK_BENCH_PG_URL``), a PostgreSQL database the bench may empty: its ``public`` schema is dropped and made
again.

For each database, in a fresh data directory:
1. migrate, then build a matter of N pages (default 200,000): the court filings of the corpus repeated, their text
   inserted directly (bench/load_matter.py; no ingest, no OCR), a draft with 300 verifier findings, and U
   attorneys with logged-in sessions;
2. serve it on loopback as ``make run`` does (lawdesk/run.py: the uvicorn command of ``asgi_server_command``,
   LAWDESK_WORKERS ``documents`` workers and one ``models`` worker), with the scripted model server of the tests
   (tests/support/stage_server.py) standing in for the model server;
3. queue a production of about P pages (default 100,000, at most the matter) and two jobs on the model server;
4. drive the server with U simulated users (default 50; locust, bench/load_users.py) for S seconds (default 60):
   matter page, exhibit list page, page viewer, search, the draft's review page, an original's download.
It prints per page its time alone (one request at a time, before the background work and the users start; the
fastest of several), then under load the request count, errors and p50/p95/p99 in ms (locust's percentiles, kept
to two significant figures), against the targets: page views p95 under 150 ms, search p95 under 300 ms, no
errors. It also prints how far the production and the jobs got in that time. Times depend on the machine: the
figures in docs/benchmarks.md say where they were measured.

The defaults are an office four times the size first measured (200,000 pages, 50 users, a 100,000-page production
alongside): building that matter takes a long time and much disk. ``--pages 5000 --users 10 --production-pages 1000
--seconds 30`` runs it small, to see that it works.
"""

import argparse
import csv
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import psycopg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.support.scripted_server import ScriptedServer  # noqa: E402  (the repository is on the path now)
from tests.support.stage_server import stage_server  # noqa: E402

TARGET_MS = {"search": 300}
PAGE_TARGET_MS = 150
# The scripted model's answers, citing the matter's first page as the job's evidence packet names it.
CITE = "Ex. 1 at 1"
REPLIES = {
    "gate": json.dumps({"has_grounds": True, "reasons": ["The order supports it."], "cited_pages": [CITE]}),
    "draft": f"MOTION FOR SUMMARY JUDGMENT. The court ordered payment ({CITE}).",
    "revise": f"MOTION FOR SUMMARY JUDGMENT. The court ordered payment ({CITE}).",
    "extract": json.dumps({"items": [{"type": "date", "value": "March 3, 2021", "source": CITE}]}),
    "summarize": f"The court ordered payment ({CITE}).",
}
PAGES = ["matter page", "exhibit list", "page viewer", "search", "review page", "download"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if process.poll() is not None:
                raise SystemExit("The ASGI server stopped at start; see its output above.")
            time.sleep(0.2)
    raise SystemExit(f"The ASGI server did not answer on port {port} within {timeout_s:.0f} s.")


def _reset_postgres(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS public CASCADE")
        connection.execute("CREATE SCHEMA public")


def _run_json(command: list[str], env: dict) -> dict:
    result = subprocess.run([sys.executable, *command], cwd=REPO, env=env, capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _serving_commands(port: int) -> list[list[str]]:
    """What ``make run`` starts (lawdesk.run._serve), with its settings for the worker counts."""
    # Imported here, not at the top: main() points this process's settings at a scratch data directory first.
    from django.conf import settings

    from lawdesk.run import asgi_server_command, worker_command

    documents, models = settings.LAWDESK_WORKERS, settings.LAWDESK_MODEL_WORKERS
    return [asgi_server_command("127.0.0.1", port), *[worker_command("documents", 0.5)] * documents,
            *[worker_command("models", 0.1)] * models]


def _web_processes() -> int:
    from django.conf import settings  # after main() has pointed the settings at a scratch data directory

    return settings.LAWDESK_WEB_WORKERS


def _stop(children: list[subprocess.Popen]) -> None:
    for child in children:
        if child.poll() is None:
            child.terminate()
    for child in children:
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _alone(port: int, matter: dict, rounds: int) -> dict[str, float]:
    """Open every kind of page ``rounds`` times, one request at a time, before the production, the jobs and the
    users start; return each kind's fastest time in ms over the second half of the rounds. The requests share one
    connection, so one server process answers them all; each process has imported its views and compiled its
    templates before it accepted a connection (lawdesk.warm_up). What a page costs with nobody else on the
    server, beside what it costs under load."""
    base = f"/matters/{matter['matter']}"
    exhibit = matter["exhibits"][0]
    urls = {"matter page": (f"{base}/", {}),
            "exhibit list": (f"{base}/?page=2", {"HX-Request": "true", "HX-Target": "exhibit-list"}),
            "page viewer": (f"{base}/exhibits/{exhibit['id']}/pages/1/", {}),
            "search": (f"{base}/?q=court", {"HX-Request": "true", "HX-Target": "search-results"}),
            "review page": (f"{base}/drafts/{matter['draft']}/", {}),
            "download": (f"{base}/exhibits/{exhibit['id']}/original/", {})}
    best = {name: float("inf") for name in urls}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", cookies={"sessionid": matter["sessions"][0]},
                      timeout=120) as client:
        for round_number in range(rounds):
            for name, (url, headers) in urls.items():
                started = time.perf_counter()
                client.get(url, headers=headers).raise_for_status()
                if round_number >= rounds // 2:
                    best[name] = min(best[name], (time.perf_counter() - started) * 1000)
    return best


def _locust_stats(prefix: Path) -> dict[str, dict]:
    rows = {}
    with open(f"{prefix}_stats.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            rows[row["Name"]] = {"requests": int(row["Request Count"]), "errors": int(row["Failure Count"]),
                                 "p50": float(row["50%"]), "p95": float(row["95%"]), "p99": float(row["99%"]),
                                 "rps": float(row["Requests/s"])}
    return rows


def run_one(db: str, args: argparse.Namespace) -> dict:
    """Build, serve and load one database; return the build figures, locust's rows and the background work."""

    work = Path(tempfile.mkdtemp(prefix=f"lawdesk-load-{db}-"))
    data = work / "data"
    url = f"sqlite:///{data / 'lawdesk.sqlite3'}" if db == "sqlite" else args.pg_url
    if db == "postgres":
        _reset_postgres(url)
    env = dict(os.environ, LAWDESK_DATA_DIR=str(data), DATABASE_URL=url, DJANGO_SETTINGS_MODULE="lawdesk.settings",
               LAWDESK_LOG_LEVEL="WARNING")
    env.pop("REDIS_URL", None)
    children: list[subprocess.Popen] = []
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO, env=env, check=True)
        print(f"[{db}] building a matter of {args.pages:,} pages ...", flush=True)
        matter = _run_json(["bench/load_matter.py", "build", "--pages", str(args.pages), "--users", str(args.users)],
                           env)
        (work / "matter.json").write_text(json.dumps(matter))
        with ScriptedServer() as model:
            stage_server(model, REPLIES, pause_s=0.02)
            # The scripted model server is the one destination evidence may go to, as an installer would list it.
            env["LAWDESK_MODEL_HOSTS"] = model.url.split("//", 1)[1].rstrip("/")
            port = _free_port()
            children = [subprocess.Popen(command, cwd=REPO, env=env) for command in _serving_commands(port)]
            _wait_for_port(port, children[0])
            alone = _alone(port, matter, rounds=8 * _web_processes())
            load = os.getloadavg()[0]
            background = _run_json(["bench/load_matter.py", "start", "--model-url", model.url,
                                    "--production-pages", str(min(args.production_pages, matter["pages"]))], env)
            print(f"[{db}] {matter['pages']:,} pages in {len(matter['exhibits']):,} files built in "
                  f"{matter['build_s']} s; production of {background['production_pages']:,} pages and 2 jobs "
                  f"queued; {args.users} users for {args.seconds} s ...", flush=True)
            roles = _roles(children)
            cpu_before, locust_before, machine_before = _cpu(roles), _children_cpu(), psutil.cpu_times()
            spies = _spy(roles["web"], args.seconds, work) if args.py_spy else []
            subprocess.run([sys.executable, "-m", "locust", "-f", "bench/load_users.py", "--headless",
                            "-u", str(args.users), "-r", str(args.users), "-t", f"{args.seconds}s",
                            "--host", f"http://127.0.0.1:{port}", "--csv", str(work / "locust"), "--only-summary",
                            "--loglevel", "WARNING"],
                           cwd=REPO, env=dict(env, LOAD_BENCH_MATTER=str(work / "matter.json")), check=False,
                           stdout=subprocess.DEVNULL, stderr=(work / "locust.log").open("w"))
            cpu = {role: spent - cpu_before.get(role, 0.0) for role, spent in _cpu(roles).items()}
            cpu["locust (the users)"] = _children_cpu() - locust_before
            machine = psutil.cpu_times()
            cpu["the whole machine"] = sum(machine) - sum(machine_before) - (machine.idle - machine_before.idle) - (
                machine.iowait - machine_before.iowait)
            for spy in spies:
                spy.wait()
            profile = _spy_summary(work) if args.py_spy else ""
            after = _run_json(["bench/load_matter.py", "status"], env)
    finally:
        _stop(children)
    stats = _locust_stats(work / "locust")
    if args.keep:
        print(f"[{db}] kept {work}", flush=True)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return {"matter": matter, "stats": stats, "background": after, "alone": alone, "load": load, "cpu": cpu,
            "profile": profile}


def _roles(children: list[subprocess.Popen]) -> dict[str, list[psutil.Process]]:
    """The serving processes by role, each with its descendants (uvicorn's worker processes, ingest children):
    ``web``, ``documents workers``, ``models worker``, in the order _serving_commands starts them."""
    from django.conf import settings  # after main() has pointed the settings at a scratch data directory

    def tree(child: subprocess.Popen) -> list[psutil.Process]:
        process = psutil.Process(child.pid)
        return [process, *process.children(recursive=True)]

    documents = settings.LAWDESK_WORKERS
    return {"web": tree(children[0]),
            "documents workers": [p for child in children[1:1 + documents] for p in tree(child)],
            "models worker": [p for child in children[1 + documents:] for p in tree(child)]}


def _cpu(roles: dict[str, list[psutil.Process]]) -> dict[str, float]:
    """CPU seconds (user and system) each role's processes have used so far; a process that has ended counts 0."""
    spent = {}
    for role, processes in roles.items():
        total = 0.0
        for process in processes:
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
        spent[role] = total
    return spent


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for (locust, once it has run)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _spy(web: list[psutil.Process], seconds: int, work: Path) -> list[subprocess.Popen]:
    """py-spy sampling each web worker process (those that are not uvicorn's supervisor) while the users run, its
    stacks written as ``py-spy-<pid>.txt`` (collapsed: one stack and its sample count a line)."""
    workers = [process for process in web if process.ppid() != os.getpid()] or web
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    return [subprocess.Popen([spy, "record", "--pid", str(process.pid), "--duration", str(seconds), "--rate", "200",
                              "--format", "raw", "--nonblocking", "--output", str(work / f"py-spy-{process.pid}.txt")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for process in workers]


def _spy_summary(work: Path, top: int = 25) -> str:
    """The functions the web workers spent most samples in (their own, and with what they called), from the
    collapsed stacks of :func:`_spy`, as lines of text."""
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for path in work.glob("py-spy-*.txt"):
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not count.isdigit():
                continue
            samples, frames = int(count), stack.split(";")
            total += samples
            own[frames[-1]] = own.get(frames[-1], 0) + samples
            for frame in set(frames):
                inclusive[frame] = inclusive.get(frame, 0) + samples
    if not total:
        return "py-spy recorded nothing (is it installed, and may it trace these processes?)"
    lines = [f"web workers under load, {total} samples: own share, then share with what it called"]
    lines += [f"  {count / total:6.1%}  {frame}" for frame, count in sorted(own.items(), key=lambda x: -x[1])[:top]]
    lines.append("  ---")
    lines += [f"  {count / total:6.1%}  {frame}" for frame, count in sorted(inclusive.items(), key=lambda x: -x[1])
              if re.search(r"\((lawdesk|matters|pipeline)/", frame)][:top]
    return "\n".join(lines)


def _table(db: str, result: dict, seconds: int, users: int) -> str:
    matter, stats = result["matter"], result["stats"]
    lines = [f"{db}: {matter['pages']:,} pages in {len(matter['exhibits']):,} files, draft with {matter['findings']} "
             f"findings, {users} users, {seconds} s; {os.cpu_count()} cores, load average {result['load']:.1f} "
             "before the users started",
             f"{'page':<14}{'alone ms':>9}{'requests':>9}{'errors':>7}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}"
             "  target p95",
             ]
    for name in PAGES:
        row = stats.get(name)
        target = TARGET_MS.get(name, PAGE_TARGET_MS)
        if row is None:
            lines.append(f"{name:<14}{result['alone'][name]:>9.0f}  no requests")
            continue
        met = row["p95"] < target and row["errors"] == 0
        lines.append(f"{name:<14}{result['alone'][name]:>9.0f}{row['requests']:>9}{row['errors']:>7}{row['p50']:>8.0f}"
                     f"{row['p95']:>8.0f}{row['p99']:>8.0f}  < {target} ms, 0 errors: {'met' if met else 'NOT MET'}")
    total = stats.get("Aggregated")
    if total:
        lines.append(f"{'all':<14}{'':>9}{total['requests']:>9}{total['errors']:>7}{total['p50']:>8.0f}"
                     f"{total['p95']:>8.0f}{total['p99']:>8.0f}  {total['rps']:.1f} requests/s")
    production = result["background"]["production"]
    if production:
        took = f"done in {production['seconds']} s" if production["seconds"] is not None else "not finished"
        lines.append(f"production: {production['status']}, {production['pages_done']:,} of "
                     f"{production['page_count']:,} pages stamped ({took})")
    for job, runs in result["background"]["jobs"].items():
        lines.append(f"job {job}: {', '.join(runs)}")
    cores = (os.cpu_count() or 1) * seconds
    lines.append(f"CPU while the users ran ({cores} core-seconds in all): " + ", ".join(
        f"{role} {spent:.0f} s" for role, spent in result["cpu"].items()))
    if result["profile"]:
        lines.append(result["profile"])
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--pages", type=int, default=200_000, help="pages of the matter")
    parser.add_argument("--seconds", type=int, default=60, help="how long the users run")
    parser.add_argument("--users", type=int, default=50, help="simulated users at once")
    parser.add_argument("--production-pages", type=int, default=100_000,
                        help="pages of the production running alongside (at most the matter)")
    parser.add_argument("--pg-url", default=os.environ.get("LAWDESK_BENCH_PG_URL", ""),
                        help="a PostgreSQL database the bench may empty (its public schema is dropped)")
    parser.add_argument("--keep", action="store_true", help="keep the data directory and locust's CSV files")
    parser.add_argument("--py-spy", action="store_true",
                        help="sample the web workers with py-spy while the users run and print where their time went")
    args = parser.parse_args()
    dbs = ["sqlite", "postgres"] if args.db == "both" else [args.db]
    if "postgres" in dbs and not args.pg_url:
        parser.error("--db postgres needs --pg-url (or LAWDESK_BENCH_PG_URL): a database the bench may empty")
    # This process only builds command lines from the settings; it keeps its own scratch data directory.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")
    os.environ["LAWDESK_DATA_DIR"] = tempfile.mkdtemp(prefix="lawdesk-load-settings-")
    results = {db: run_one(db, args) for db in dbs}
    print()
    for db, result in results.items():
        print(_table(db, result, args.seconds, args.users), end="\n\n")
    shutil.rmtree(os.environ["LAWDESK_DATA_DIR"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
