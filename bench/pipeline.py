"""Pipeline overheads: the gap between two stages with the database worker, and our decode speed against the
server's own figure.

Run from the repository root as ``.venv/bin/python bench/pipeline.py [--jobs N] [--no-live] [--motion-only]
[--sections N] [--section-tokens N]``.

1. Stage gap: motion jobs (six stages each) against a scripted llama-server on loopback that answers at once, run
   by one ``db_worker`` on the ``models`` queue started as ``make run`` starts it (``--interval 0.1``), on a fresh
   SQLite database. For each stage that sends a request, the time from the previous stage's end
   (``finished_at``) to this stage's first request (``first_request_at``); median and 90th percentile.
   Target: median under 250 ms.
2. Decode speed: draft stages on the real embedded model (llama-server, Gemma 3 270M, CPU); our measured decode
   tok/s (completion tokens after the first over the time between first and last streamed token) against
   llama.cpp's ``timings.predicted_per_second``. Target: at least 0.97.
3. A whole motion, section by section (docs/jobs.md): one motion job run here stage by stage over a matter of 40
   pages (more than one section's packet holds) against two scripted llama-servers streaming one token per
   piece at the deployment's measured decode speeds (docs/topology.md: reasoner 50 tok/s; the drafter taken as the
   A4B MoE's 113 tok/s), with the drafter's context at 8,192 tokens and the reasoner's at 32,768; gate, review and
   extract on a third that answers at once. Prints each section's time, its prompt's share of the drafter's
   context (the client's estimate, 3 characters a token) and its packet's pages, then the plan's, the revision's
   and the document's times. "decode s" is the section's tokens at the drafter's speed alone; the ratio of the
   section's time to it is what the stage adds (retrieval, the record, the checks). The servers do not model
   prompt processing: the prompt tokens are printed so that time can be added at a server's own rate.
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
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.django_env import bench_attorney, setup_django  # noqa: E402

LEASE_TEXT = ("RESIDENTIAL LEASE. This lease was signed on March 3, 2021 by Acme Holdings LLC and Jane Roe. The "
              "monthly rent is $1,250.00. On April 5, 2021 the tenant wrote: We will not pay the rent for April, "
              "because the roof leaks.")


def make_matter():
    from matters.models import Exhibit, Page
    from matters.services import matter_create

    user = bench_attorney()
    matter = matter_create(name="Roe v. Acme Holdings", created_by=user)
    exhibit = Exhibit.objects.create(matter=matter, label="1", label_seq=1, title="Lease", origin="client",
                                     original_name="lease.pdf", sha256="bench", size_bytes=1, kind="pdf",
                                     status=Exhibit.Status.READY, page_count=1)
    Page.objects.create(exhibit=exhibit, number=1, text=LEASE_TEXT, source="pdf", width_pt=612, height_pt=792)
    return matter


def stage_gaps(jobs: int) -> list[float]:
    from lawdesk.run import worker_command
    from pipeline.job_models import Job, StageRun
    from pipeline.models import ModelServer, Role, RoleAssignment
    from pipeline.stages.control import job_start
    from tests.support.scripted_server import ScriptedServer
    from tests.support.stage_server import stage_server

    matter = make_matter()
    gaps: list[float] = []
    with ScriptedServer() as server:
        # The gate names the pages it rests on as the job's packet names them: this matter has no production, so
        # its one page is "Ex. 1 at 1" (the scripted default cites a Bates number, which the schema refuses here).
        stage_server(server, {"gate": json.dumps({"has_grounds": True, "reasons": ["The lease supports it."],
                                                  "cited_pages": ["Ex. 1 at 1"]})}, pause_s=0)
        record = ModelServer.objects.create(name="scripted", base_url=server.url, model_name="scripted",
                                            context_tokens=16384)
        for role in Role:
            RoleAssignment.objects.update_or_create(role=role, defaults={"server": record})
        worker = subprocess.Popen(worker_command("models", 0.1) + ["--no-startup-delay"], cwd=REPO,
                                  env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(3)  # the worker's own start (Django, PyMuPDF import) is not a stage gap
            for _ in range(jobs):
                job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.")
                deadline = time.monotonic() + 120
                while Job.objects.get(pk=job.pk).status not in ("done", "failed", "stopped", "cancelled"):
                    if time.monotonic() > deadline:
                        raise RuntimeError("a job did not finish in 120 s")
                    time.sleep(0.05)
                runs = list(StageRun.objects.filter(job=job).order_by("order", "attempt"))
                for previous, run in zip(runs, runs[1:]):
                    if run.first_request_at and previous.finished_at:
                        gaps.append((run.first_request_at - previous.finished_at).total_seconds() * 1000)
        finally:
            worker.terminate()
            worker.wait(timeout=20)
            # Its roles go with it (cascade): the whole motion that follows must not send its queries' embeddings
            # to a server that is gone.
            record.delete()
    return gaps


def decode_ratios(runs: int) -> list[tuple[float, float]]:
    from pipeline.embedded import start_embedded_server
    from pipeline.job_models import StageRun
    from pipeline.servers import register_embedded
    from pipeline.stages import runner, specs
    from pipeline.stages.control import job_start
    from pipeline.stages.runner import stage_execute

    matter = make_matter()
    # A draft of 256 tokens: long enough that one token's timing does not decide the ratio.
    specs.STAGES["draft"] = replace(specs.STAGES["draft"], max_tokens=256)
    runner.STAGES = specs.STAGES
    embedded = start_embedded_server(log_path=Path(os.environ["LAWDESK_DATA_DIR"]) / "llama-server.log")
    pairs = []
    try:
        register_embedded(embedded)
        for n in range(runs):
            job = job_start(matter=matter, kind="motion", instructions=f"Draft motion number {n + 1} to compel "
                            "the landlord to repair the roof.", enqueue=False)
            job.stage_runs.update(stage="draft", role="drafter")  # the draft stage alone
            run = stage_execute(job.stage_runs.get().pk, enqueue_next=False)
            run = StageRun.objects.get(pk=run.pk)
            if run.measured_decode_tok_s and run.decode_tok_s:
                pairs.append((run.measured_decode_tok_s, run.decode_tok_s))
    finally:
        embedded.stop()
    return pairs


DRAFTER_TOK_S, REASONER_TOK_S = 113.0, 50.0
DRAFTER_CONTEXT, REASONER_CONTEXT = 8192, 32768
_ISSUES = ["the roof leaked over the bedroom", "the boiler failed for six days", "mould grew behind the sink",
           "the front door lock was broken", "water came through the kitchen ceiling", "the heating stopped again"]


def make_large_matter(pages: int = 40):
    """A matter of ``pages`` one-page exhibits of varied tenancy facts, each page about 1,500 characters."""

    from matters.models import Exhibit, Page
    from matters.services import matter_create

    user = bench_attorney()
    matter = matter_create(name="Roe v. Acme Holdings", created_by=user, court="Boston Housing Court",
                           case_number="21-CV-0417", client="Jane Roe", opposing_party="Acme Holdings LLC")
    for n in range(1, pages + 1):
        lines = [f"Letter {n} from the tenant to Acme Holdings LLC, dated May {n % 28 + 1}, 2021."]
        lines += [f"On day {n * 7 + k} of the tenancy {_ISSUES[(n + k) % len(_ISSUES)]}; the tenant reported it "
                  f"by telephone and by letter number {n}-{k}, and the landlord answered on day {n * 7 + k + 3}."
                  for k in range(8)]
        exhibit = Exhibit.objects.create(matter=matter, label=str(n), label_seq=n, title=f"Letter {n}",
                                         origin="client", original_name=f"letter{n}.pdf", sha256=f"bench{n}",
                                         size_bytes=1, kind="pdf", status=Exhibit.Status.READY, page_count=1)
        Page.objects.create(exhibit=exhibit, number=1, text=" ".join(lines), source="pdf", width_pt=612,
                            height_pt=792)
    return matter


def _motion_outline(sections: int) -> str:
    kinds = ["introduction", "statement_of_facts", "legal_standard", *["argument"] * max(0, sections - 4),
             "conclusion"][:sections]
    return json.dumps({"title": "Motion to compel repairs", "sections": [
        {"kind": kind, "heading": f"{kind.replace('_', ' ').capitalize()} {n}",
         "questions": [f"What does the record show about {_ISSUES[n % len(_ISSUES)]}?"],
         "queries": [_ISSUES[n % len(_ISSUES)].split(" ", 2)[1], "landlord answered"]}
        for n, kind in enumerate(kinds, start=1)]})


def _scripted(server, answer, tok_s: float, n_ctx: int) -> None:
    """``server`` as a llama-server of context ``n_ctx`` streaming ``answer(body)`` one token (4 characters) a
    piece at ``tok_s``."""
    from tests.support.scripted_server import Reply, chat_chunks, llama_cpp_routes, sse
    from tests.support.stage_server import words

    llama_cpp_routes(server, timings={}, n_ctx=n_ctx)

    def completion(body):
        text = answer(body)
        prompt_n = sum(len(m.get("content", "")) for m in body.get("messages", [])) // 3
        pieces = words(text, 4)
        timings = {"prompt_n": prompt_n, "prompt_per_second": 1000.0, "predicted_n": len(pieces),
                   "predicted_per_second": tok_s}
        return Reply(pieces=[sse(chunk) for chunk in chat_chunks(pieces, timings=timings)] + [sse("[DONE]")],
                     pause_s=1 / tok_s if tok_s else 0)

    server.routes["/v1/chat/completions"] = completion


def whole_motion(sections: int, section_tokens: int) -> None:
    from pipeline.job_models import Job
    from pipeline.models import RETRIEVAL_ROLES, ModelServer, Role, RoleAssignment
    from pipeline.stages.control import job_start
    from tests.support.jobs import run_all
    from tests.support.scripted_server import ScriptedServer
    from tests.support.stage_server import DEFAULT, stage_of

    matter = make_large_matter()
    sentences = [f"On day {n} of the tenancy {_ISSUES[n % len(_ISSUES)]}, as the tenant's letter shows (Ex. {n} at 1)."
                 for n in range(1, 400)]

    calls = []

    def section_text(body) -> str:
        calls.append(1)
        # Each section its own sentences: the same lines in every section would read as a looping model.
        text, n = "", len(calls) * 50
        while len(text) < section_tokens * 4:
            text += sentences[n % len(sentences)] + " "
            n += 1
        return text.strip()

    def reasoner(body) -> str:
        stage = stage_of(body)
        if stage == "plan":
            return _motion_outline(sections)
        if stage == "revise":  # the body back, as long as it came
            return body["messages"][1]["content"].partition("Draft to revise:")[2].strip()
        return DEFAULT.get(stage, "")

    with ScriptedServer() as draft_server, ScriptedServer() as reason_server, ScriptedServer() as quick_server:
        _scripted(draft_server, section_text, DRAFTER_TOK_S, DRAFTER_CONTEXT)
        _scripted(reason_server, reasoner, REASONER_TOK_S, REASONER_CONTEXT)
        quick = {**DEFAULT, "gate": json.dumps({"has_grounds": True, "reasons": ["The letters show it."],
                                                "cited_pages": ["Ex. 1 at 1"]}),
                 "extract": json.dumps({"items": [{"type": "date", "value": "May 2, 2021", "source": "Ex. 1 at 1"}]})}
        _scripted(quick_server, lambda body: quick.get(stage_of(body), ""), 0, REASONER_CONTEXT)
        servers = {name: ModelServer.objects.create(name=name, base_url=s.url, model_name=name, context_tokens=ctx)
                   for name, s, ctx in [("drafter", draft_server, DRAFTER_CONTEXT),
                                        ("reasoner", reason_server, REASONER_CONTEXT),
                                        ("quick", quick_server, REASONER_CONTEXT)]}
        for role in Role:
            if role not in RETRIEVAL_ROLES:
                server = servers.get(role, servers["quick"])
                RoleAssignment.objects.update_or_create(role=role, defaults={"server": server})
        job = job_start(matter=matter, kind="motion", instructions="Move to compel the landlord to make repairs.",
                        enqueue=False)
        runs = run_all(job)
    job = Job.objects.get(pk=job.pk)
    by_stage = {}
    for run in runs:
        by_stage.setdefault(run.stage, []).append(run)
    print(f"whole motion: {sections} sections of about {section_tokens} tokens, drafter {DRAFTER_TOK_S:.0f} tok/s "
          f"(context {DRAFTER_CONTEXT:,}), reasoner {REASONER_TOK_S:.0f} tok/s; job {job.status}")
    if job.status != "done":
        raise SystemExit(f"the job ended {job.status}: " + "; ".join(f"{r.stage} {r.section} {r.status}: "
                                                                    f"{r.error or r.reason}" for r in runs))
    print(f"  {'section':<26} {'time s':>7} {'decode s':>8} {'ratio':>5} {'tokens':>7} {'prompt tok':>10} "
          f"{'ctx share':>9} {'pages':>5}")
    for run in by_stage.get("section", []):
        prompt_tokens = sum(len(m["content"]) for m in run.prompt) // 3
        decode_s = run.streamed_pieces / DRAFTER_TOK_S
        print(f"  {run.section:<26} {run.duration_ms / 1000:7.2f} {decode_s:8.2f} "
              f"{run.duration_ms / 1000 / decode_s:5.2f} {run.streamed_pieces:7d} {prompt_tokens:10,d} "
              f"{prompt_tokens / DRAFTER_CONTEXT:9.2f} {run.retrieval.get('evidence_pages', 0):5d}")
    plan, revise = by_stage["plan"][0], by_stage["revise"][0]
    section_s = sum(r.duration_ms for r in by_stage.get("section", [])) / 1000
    print(f"  plan {plan.duration_ms / 1000:.2f} s; sections {section_s:.2f} s in all; revise "
          f"{revise.duration_ms / 1000:.2f} s ({revise.streamed_pieces} tokens, prompt about "
          f"{sum(len(m['content']) for m in revise.prompt) // 3:,} tokens)")
    document_s = (revise.finished_at - plan.started_at).total_seconds()
    print(f"  the document (plan start -> revision end): {document_s:.2f} s; "
          f"{len(job.draft.latest_version.text.split()):,} words")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5)
    parser.add_argument("--no-live", action="store_true", help="skip the embedded-model part")
    parser.add_argument("--motion-only", action="store_true", help="run the whole-motion part alone")
    parser.add_argument("--sections", type=int, default=5, help="drafted sections of the whole motion")
    parser.add_argument("--section-tokens", type=int, default=150, help="tokens each section writes")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lawdesk-bench-pipeline-"))
    # The scripted servers listen on loopback, the one destination the bench's evidence may be sent to (settings).
    os.environ["LAWDESK_MODEL_HOSTS"] = "127.0.0.1"
    try:
        setup_django(work / "data")
        if args.motion_only:
            whole_motion(args.sections, args.section_tokens)
            return
        gaps = sorted(stage_gaps(args.jobs))
        median = statistics.median(gaps)
        p90 = gaps[int(0.9 * (len(gaps) - 1))]
        print(f"stage gap (end of a stage -> next stage's first request), {len(gaps)} gaps over {args.jobs} jobs:")
        print(f"  median {median:.0f} ms, p90 {p90:.0f} ms, max {gaps[-1]:.0f} ms -> target median < 250 ms: "
              f"{'met' if median < 250 else 'NOT met'}")
        if not args.no_live:
            pairs = decode_ratios(5)
            ratios = [ours / server for ours, server in pairs]
            print(f"decode tok/s, ours vs llama-server's own, {len(pairs)} draft stages on the embedded model:")
            for ours, server in pairs:
                print(f"  ours {ours:6.1f}  server {server:6.1f}  ratio {ours / server:.3f}")
            ratio = statistics.median(ratios)
            print(f"  median ratio {ratio:.3f} -> target >= 0.97: {'met' if ratio >= 0.97 else 'NOT met'}")
        whole_motion(args.sections, args.section_tokens)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
