"""The queue under an office's load: 3 motions with deadlines and 20 summaries, in first-come order and in the
queue's deadline order, side by side.

Run from the repository root as ``.venv/bin/python bench/schedule.py [--real] [--scale 0.05]``.

1. Simulation, on a virtual clock, of the stage runs as the workers take them: the servers, their roles and
   their parallel slots are the example deployment's records (``topology_load_example``, read back through
   :func:`pipeline.stages.admission.server_slots`), each job's stages are its plan
   (:func:`pipeline.stages.specs.plan_for`), and the waiting runs are put in order by the queue's own code
   (:func:`pipeline.stages.order.in_queue_order`); first-come is the same code with the deadlines left out. A
   scripted server times each request as prompt tokens over its prompt speed plus completion tokens over its
   decode speed (the figures below, with their sources), and a freed slot is taken after the gap a worker needs
   to see it (the measured stage gap plus half the queue's poll). Two topologies: the deployment (summaries on
   their own Gemma server), and one board holding every role (the office whose summaries share the drafter).
2. ``--real``: the one-board case run for real at ``--scale`` of its time: two ``db_worker`` processes and a
   scripted llama-server of one slot on loopback, answering each stage after its scaled time and refusing any
   request beyond its slot. Utilisation is the server's own in-flight time over the time a run waited for it.

Targets: every motion done before its deadline where the capacity allows it; each server busy more than 90% of
the time it had work queued.
"""

import argparse
import heapq
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.django_env import bench_attorney, setup_django  # noqa: E402

# Decode tok/s of each example server, with where the figure comes from (docs/topology.md, "Error against
# measured figures"; tests/pipeline/gguf_shapes.py MEASURED_V100_TOK_S).
DECODE_TOK_S = {
    "drafter": (113.0, "as measured for Gemma-4-26B-A4B, the MoE of like active size (no figure of its own)"),
    "reasoner": (50.0, "measured, Qwen3.5-122B-A10B on V100-SXM2"),
    "gate": (100.0, "assumed: a small model"),
    "reviewer": (40.0, "assumed: at the 40 tok/s floor"),
    "extractor": (113.0, "measured, Gemma-4-26B-A4B"),
    "gemma": (56.0, "forecast, a dense 12B at Q8_0 on V100-PCIe (0.8 of the bandwidth ceiling)"),
}
PROMPT_TOK_S = 1000.0  # assumed for every server: no prompt-processing figure of the deployment is recorded
# (prompt tokens, completion tokens) of one request of each stage: an evidence packet of a few thousand tokens and
# answers within the stage budgets of pipeline.stages.specs.
STAGE_TOKENS = {"router": (500, 30), "gate": (4000, 400), "draft": (8000, 1024), "revise": (9000, 1024),
                "review": (9000, 700), "extract": (6000, 500), "summarize": (6000, 700),
                # The motion's outline: the request and the matter's list of files, no packet
                # (pipeline.stages.specs), its JSON about half its 2,560-token budget; each section as a draft.
                "plan": (3000, 1300), "section": (8000, 1024)}
NO_SERVER_S = 0.3  # a stage that uses no model (verify): worker time only
# A freed slot is seen by the worker that freed it, or by a waiting one at its next look: the stage gap measured
# by bench/pipeline.py (median about 50 ms) plus half the queue's poll interval.
STAGE_GAP_S = 0.05

# A limit short enough for the summaries to reach it in this scenario: what aging costs the motions.
SHORT_AGING_S = 240.0

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


@dataclass
class SimJob:
    """One job of the scenario: ``submitted_s`` and ``due_s`` are seconds from the start (``due_s`` None: no
    deadline)."""

    name: str
    kind: str
    submitted_s: float
    due_s: float | None = None
    number: int = 0
    wait_s: float = 0.0
    finished_s: float | None = None


@dataclass
class SimRun:
    job: SimJob
    stage: str
    step: int
    server: str | None
    duration_s: float
    queued_s: float = 0.0


@dataclass
class ServerLine:
    """A server's timeline: (time, slots in flight, runs waiting) at each change."""

    slots: int
    changes: list[tuple[float, int, int]] = field(default_factory=list)

    def utilisation(self) -> tuple[float, float]:
        """Seconds with work queued, and the share of its slots in flight over those seconds."""
        queued = busy = 0.0
        for (at, flying, waiting), (until, _, _) in zip(self.changes, self.changes[1:]):
            if waiting:
                queued += until - at
                busy += (until - at) * flying / self.slots
        return queued, (busy / queued if queued else 1.0)


def scenario() -> list[SimJob]:
    """20 summaries an assistant queues at 9:00, one a second; then three attorneys' motions, the last one due
    first."""
    jobs = [SimJob(f"summary {n + 1}", "summary", submitted_s=n) for n in range(20)]
    jobs += [SimJob("motion 1", "motion", submitted_s=60, due_s=60 + 900),
             SimJob("motion 2", "motion", submitted_s=120, due_s=120 + 420),
             SimJob("motion 3", "motion", submitted_s=180, due_s=180 + 200)]
    for number, job in enumerate(jobs, start=1):
        job.number = number
    return jobs


def request_s(stage: str, server: str | None, speeds: dict[str, float]) -> float:
    if server is None:
        return NO_SERVER_S
    prompt, completion = STAGE_TOKENS[stage]
    return prompt / PROMPT_TOK_S + completion / speeds[server]


def simulate(jobs: list[SimJob], role_server: dict[str, str], slots: dict[str, int], speeds: dict[str, float],
             *, by_deadline: bool, workers: int, gap_s: float, aging_s: float) -> dict[str, ServerLine]:
    """Run ``jobs`` to their end on the virtual clock; fill each job's wait and finish; return each server's
    timeline."""
    from pipeline.stages.order import Waiting, in_queue_order
    from pipeline.stages.specs import STAGES, plan_for

    lines = {name: ServerLine(slots=slots[name], changes=[(0.0, 0, 0)]) for name in slots}
    flying = dict.fromkeys(slots, 0)
    events: list = []  # (time, sequence, what, run)
    sequence = 0
    waiting: list[SimRun] = []
    running = 0

    def push(at: float, what: str, run) -> None:
        nonlocal sequence
        sequence += 1
        heapq.heappush(events, (at, sequence, what, run))

    def queue(job: SimJob, step: int, now: float) -> None:
        plan = plan_for(job.kind)
        if step > len(plan):
            job.finished_s = now
            return
        stage = plan[step - 1]
        server = role_server.get(STAGES[stage].role) if STAGES[stage].role else None
        waiting.append(SimRun(job, stage, step, server, request_s(stage, server, speeds), queued_s=now))

    def mark(now: float) -> None:
        for name, line in lines.items():
            line.changes.append((now, flying[name], sum(run.server == name for run in waiting)))

    for job in jobs:
        push(job.submitted_s, "submit", job)
    now = 0.0
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, _, what, subject = heapq.heappop(events)
            if what == "submit":
                queue(subject, 1, now)
            elif what == "request":  # the worker's request reaches the server
                flying[subject.server] += 1
            else:
                running -= 1
                if subject.server is not None:
                    flying[subject.server] -= 1
                queue(subject.job, subject.step + 1, now)
        held = {name: 0 for name in slots}  # slots claimed, in flight or about to be
        for event in events:
            if event[2] == "done" and event[3].server is not None:
                held[event[3].server] += 1
        entries = [Waiting(submitted_at=T0 + timedelta(seconds=run.job.submitted_s), job=run.job.number,
                           due_at=(T0 + timedelta(seconds=run.job.due_s)) if by_deadline and run.job.due_s else None,
                           step=run.step, ref=run) for run in waiting]
        for entry in in_queue_order(entries, now=T0 + timedelta(seconds=now), aging_s=aging_s):
            run = entry.ref
            if running >= workers:
                break
            if run.server is not None and held[run.server] >= slots[run.server]:
                continue
            waiting.remove(run)
            running += 1
            run.job.wait_s += now - run.queued_s
            if run.server is not None:
                held[run.server] += 1
                push(now + gap_s, "request", run)
            push(now + gap_s + run.duration_s, "done", run)
        mark(now)
    return lines


def report(title: str, jobs: list[SimJob], lines: dict[str, ServerLine]) -> tuple[bool, bool]:
    """Print the jobs against their deadlines and each server's utilisation; return (every motion on time,
    every server above 90% while queued)."""
    print(f"  {title}")
    on_time = True
    for job in jobs:
        if job.kind != "motion":
            continue
        margin = job.due_s - job.finished_s
        on_time &= margin >= 0
        print(f"    {job.name:9s} submitted {job.submitted_s:5.0f} s  due {job.due_s:6.0f} s  "
              f"waited {job.wait_s:6.1f} s  finished {job.finished_s:6.1f} s  "
              f"{'met' if margin >= 0 else 'MISSED'} by {abs(margin):6.1f} s")
    summaries = [job for job in jobs if job.kind == "summary"]
    print(f"    20 summaries: waited {min(j.wait_s for j in summaries):.1f}-{max(j.wait_s for j in summaries):.1f} s,"
          f" last finished {max(j.finished_s for j in summaries):.1f} s")
    busy_enough, idle = True, []
    for name, line in lines.items():
        queued, share = line.utilisation()
        if not queued:
            idle.append(name)
            continue
        busy_enough &= share > 0.9
        print(f"    {name:10s} {line.slots} slot(s): work queued {queued:6.1f} s, busy {share:6.1%} of it")
    if idle:
        print(f"    never had work queued: {', '.join(idle)}")
    return on_time, busy_enough


def deployment() -> tuple[dict[str, str], dict[str, int]]:
    """The example deployment's role -> server and server -> slots, as its records hold them."""
    from pipeline.models import ModelServer, RoleAssignment
    from pipeline.stages.admission import server_slots
    from pipeline.topology.example import topology_load_example

    topology_load_example()
    servers = ModelServer.objects.filter(name__in=DECODE_TOK_S)
    return ({a.role: a.server.name for a in RoleAssignment.objects.select_related("server")},
            {server.name: server_slots(server) for server in servers})


def simulation(workers: int | None) -> bool:
    from pipeline.stages.queue import AGING_S, POLL_S

    role_server, slots = deployment()
    speeds = {name: figure for name, (figure, _) in DECODE_TOK_S.items()}
    gap_s = STAGE_GAP_S + POLL_S / 2
    print("servers (example deployment records): name, slots, decode tok/s and its source; prompt "
          f"{PROMPT_TOK_S:.0f} tok/s assumed for all")
    for name, (figure, source) in DECODE_TOK_S.items():
        roles = sorted(role for role, held in role_server.items() if held == name)
        print(f"  {name:10s} {slots[name]} slot(s) {figure:6.1f} tok/s  {', '.join(roles):20s} {source}")
    print(f"gap before a freed slot is used: {gap_s * 1000:.0f} ms; aging limit {AGING_S:.0f} s")
    ok = True
    one_board = ({role: "drafter" for role in role_server}, {"drafter": slots["drafter"]})
    for topology, (roles, counts) in (("the deployment", (role_server, slots)),
                                      ("one board (every role on the drafter)", one_board)):
        limit = workers or sum(counts.values())
        print(f"\n{topology}, {limit} model worker(s):")
        orders = [("first-come order", False, AGING_S), ("deadline order", True, AGING_S),
                  (f"deadline order, aging limit {SHORT_AGING_S:.0f} s", True, SHORT_AGING_S)]
        for title, by_deadline, aging_s in orders:
            jobs = scenario()
            lines = simulate(jobs, roles, counts, speeds, by_deadline=by_deadline, workers=limit, gap_s=gap_s,
                             aging_s=aging_s)
            on_time, busy = report(title, jobs, lines)
            if by_deadline and aging_s == AGING_S:
                ok &= on_time and busy
                print(f"    -> every motion before its deadline: {'met' if on_time else 'NOT met'}; "
                      f"utilisation > 90% while queued: {'met' if busy else 'NOT met'}")
    return ok


def real_run(scale: float) -> None:
    """The one-board case for real at ``scale`` of its time (see the module's docstring)."""

    from lawdesk.run import worker_command
    from matters.models import Exhibit, Page
    from matters.services import matter_create
    from pipeline.job_models import Job, StageRun
    from pipeline.models import RETRIEVAL_ROLES, ModelServer, Role, RoleAssignment
    from pipeline.stages.control import job_start
    from tests.support.scripted_server import Reply, ScriptedServer, chat_chunks, llama_cpp_routes, sse
    from tests.support.stage_server import DEFAULT, TIMINGS, stage_of, words

    user = bench_attorney()
    matter = matter_create(name="Roe v. Acme Holdings", created_by=user)
    exhibit = Exhibit.objects.create(matter=matter, label="1", label_seq=1, title="Lease", origin="client",
                                     original_name="lease.pdf", sha256="bench", size_bytes=1, kind="pdf",
                                     status=Exhibit.Status.READY, page_count=1)
    Page.objects.create(exhibit=exhibit, number=1, source="pdf", width_pt=612, height_pt=792,
                        text="RESIDENTIAL LEASE signed on March 3, 2021. SMITH000001. The rent is $1,250.00.")
    speed = DECODE_TOK_S["drafter"][0]
    lock = threading.Lock()
    flights: list[tuple[float, float]] = []
    state = {"in_flight": 0, "peak": 0, "refused": 0}

    def completion(body: dict) -> Reply:
        stage = stage_of(body)
        with lock:
            if state["in_flight"] >= 1:
                state["refused"] += 1
                return Reply(status=500, pieces=[b'{"error": {"message": "no free slot"}}'],
                             content_type="application/json")
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
        started = time.time()
        # The bench's one page carries no Bates number: it is cited by exhibit and page.
        answer = DEFAULT[stage].replace("SMITH000001", "Ex. 1 at 1").replace("SMITH000002", "Ex. 1 at 1")
        pieces = [sse(chunk) for chunk in chat_chunks(words(answer), timings=TIMINGS)] + [sse("[DONE]")]
        duration = request_s(stage, "drafter", {"drafter": speed}) * scale

        def streamed():
            freed = False
            try:
                yield from pieces[:-1]
                # Free before the last piece, as llama-server frees its slot: the client may ask again as soon
                # as it has read it.
                with lock:
                    state["in_flight"] -= 1
                    flights.append((started, time.time()))
                    freed = True
                yield pieces[-1]
            finally:
                if not freed:
                    with lock:
                        state["in_flight"] -= 1
                        flights.append((started, time.time()))

        return Reply(pieces=streamed(), pause_s=duration / len(pieces))

    jobs = scenario()
    with ScriptedServer() as server:
        llama_cpp_routes(server, timings=TIMINGS, n_ctx=16384)
        server.routes["/v1/chat/completions"] = completion
        record = ModelServer.objects.create(name="one-board", base_url=server.url, model_name="scripted",
                                            context_tokens=16384, parallel_slots=1)
        # A chat server answers no embeddings: retrieval is lexical, as with no embedder.
        RoleAssignment.objects.filter(role__in=RETRIEVAL_ROLES).delete()
        for role in Role:
            if role not in RETRIEVAL_ROLES:
                RoleAssignment.objects.update_or_create(role=role, defaults={"server": record})
        env = dict(os.environ, LAWDESK_MODEL_HOSTS="127.0.0.1")
        workers = [subprocess.Popen(worker_command("models", 0.1) + ["--no-startup-delay"], cwd=REPO, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
        try:
            time.sleep(4)  # the workers' own start is not the queue's
            start = time.time()
            records = {}
            for job in jobs:
                time.sleep(max(0.0, start + job.submitted_s * scale - time.time()))
                created = job_start(matter=matter, kind=job.kind, instructions=f"{job.name}: the lease.")
                due = datetime.fromtimestamp(start + job.due_s * scale, UTC) if job.due_s else None
                Job.objects.filter(pk=created.pk).update(due_at=due)
                records[job.name] = created.pk
            deadline = time.time() + 600
            while Job.objects.filter(pk__in=records.values()).exclude(
                    status__in=["done", "failed", "stopped", "cancelled"]).exists():
                if time.time() > deadline:
                    raise RuntimeError("the jobs did not end in 600 s")
                time.sleep(0.2)
        finally:
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.wait(timeout=30)
    statuses = dict(Job.objects.filter(pk__in=records.values()).values_list("pk", "status"))
    for job in Job.objects.filter(pk__in=records.values()).exclude(status="done"):
        print(f"  {job} ended {job.status}: {job.reason[:200]}")
    runs = StageRun.objects.filter(job__in=records.values(), role__gt="")
    waits = [(run.created_at.timestamp(), run.started_at.timestamp()) for run in runs if run.started_at]
    queued = busy = 0.0
    edges = sorted({t for pair in waits + flights for t in pair})
    for left, right in zip(edges, edges[1:]):
        middle = (left + right) / 2
        if any(a <= middle < b for a, b in waits):
            queued += right - left
            busy += (right - left) * any(a <= middle < b for a, b in flights)
    # The gaps between two requests while work waited are LawDesk's own time (a worker seeing the free slot,
    # building the next prompt); the requests are scaled. At full time the same gaps weigh `scale` as much.
    flights.sort()
    gaps = [later[0] - earlier[1] for earlier, later in zip(flights, flights[1:])
            if any(a <= (earlier[1] + later[0]) / 2 < b for a, b in waits)]
    requests_s = sum(end - begin for begin, end in flights)
    full = requests_s / scale / (requests_s / scale + sum(gaps)) if flights else 1.0
    print(f"\nreal run at {scale:g} of the time (2 db_workers, one scripted slot): requests refused beyond the slot "
          f"{state['refused']}, most at once {state['peak']}")
    for job in jobs:
        if job.kind != "motion":
            continue
        pk = records[job.name]
        finished = Job.objects.get(pk=pk).finished_at.timestamp() - start
        due = job.due_s * scale
        met = statuses[pk] == "done" and finished <= due
        print(f"  {job.name:9s} {statuses[pk]:6s} finished {finished:6.1f} s  due {due:6.1f} s  "
              f"{'met' if met else 'NOT met'}")
    print(f"  jobs done: {sum(s == 'done' for s in statuses.values())} of {len(statuses)}; work queued "
          f"{queued:.1f} s, the server busy {busy / queued if queued else 1:.1%} of it at this scale")
    if gaps:
        print(f"  gap between two requests while work waited: median {statistics.median(gaps) * 1000:.0f} ms, "
              f"max {max(gaps) * 1000:.0f} ms over {len(gaps)}; with the requests at full time: busy {full:.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, help="model workers in the simulation (default: one per slot)")
    parser.add_argument("--real", action="store_true", help="also run the one-board case with real workers")
    parser.add_argument("--scale", type=float, default=0.05, help="time scale of the real run")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lawdesk-bench-schedule-"))
    try:
        setup_django(work / "data")
        ok = simulation(args.workers)
        if args.real:
            real_run(args.scale)
        print(f"\nsimulated targets: {'met' if ok else 'NOT met'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
