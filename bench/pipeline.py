"""Pipeline overheads: the gap between two stages with the database worker, and our decode speed against the
server's own figure.

Run from the repository root as ``.venv/bin/python bench/pipeline.py [--jobs N] [--no-live]``.

1. Stage gap: motion jobs (six stages each) against a scripted llama-server on loopback that answers at once, run
   by one ``db_worker`` on the ``models`` queue started as ``make run`` starts it (``--interval 0.1``), on a fresh
   SQLite database. For each stage that sends a request, the time from the previous stage's end
   (``finished_at``) to this stage's first request (``first_request_at``); median and 90th percentile.
   Target: median under 250 ms.
2. Decode speed: draft stages on the real embedded model (llama-server, Gemma 3 270M, CPU); our measured decode
   tok/s (completion tokens after the first over the time between first and last streamed token) against
   llama.cpp's ``timings.predicted_per_second``. Target: at least 0.97.
"""

import argparse
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
from bench.django_env import setup_django  # noqa: E402

LEASE_TEXT = ("RESIDENTIAL LEASE. This lease was signed on March 3, 2021 by Acme Holdings LLC and Jane Roe. The "
              "monthly rent is $1,250.00. On April 5, 2021 the tenant wrote: We will not pay the rent for April, "
              "because the roof leaks.")


def make_matter():
    from django.contrib.auth import get_user_model

    from matters.models import Exhibit, Page
    from matters.services import matter_create

    user = get_user_model().objects.get_or_create(username="bench")[0]
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
        stage_server(server, pause_s=0)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5)
    parser.add_argument("--no-live", action="store_true", help="skip the embedded-model part")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lawdesk-bench-pipeline-"))
    try:
        setup_django(work / "data")
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
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
