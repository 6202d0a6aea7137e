"""Jobs end to end against the real embedded model (llama-server serving the default, SmolLM2-135M-Instruct,
on the CPU, with its record's sampling settings)."""

import json
from dataclasses import replace

import pytest
from django.core.management import call_command

from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from pipeline.embedded import EMBEDDED_CONTEXT_TOKENS
from pipeline.job_models import Job, StageRun
from pipeline.models import Role
from pipeline.servers import register_embedded
from pipeline.stages import specs
from pipeline.stages.control import job_continue, stage_retry
from tests.support.jobs import register, run_all
from tests.support.scripted_server import ScriptedServer
from tests.support.stage_server import stage_server

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def court_matter(matter, attorney, ingest, corpus):
    filing = ingest(matter, corpus("court/ca7_3.pdf"), origin="court")
    order = ingest(matter, corpus("court/ca10_010110462922.pdf"), origin="court")
    production_run(production_id=production_create(matter=matter, exhibits=[filing, order], prefix="CT",
                                                   created_by=attorney, enqueue=False).pk)
    return filing, order


def capped(schema, items: int, length: int):
    """``schema`` with every array and string limit lowered to ``items`` and ``length``."""
    if isinstance(schema, dict):
        out = {key: capped(value, items, length) for key, value in schema.items()}
        if "maxItems" in out:
            out["maxItems"] = min(out["maxItems"], items)
        if "maxLength" in out:
            out["maxLength"] = min(out["maxLength"], length)
        return out
    return schema


@pytest.fixture
def short_answers(monkeypatch):
    """Smaller answers, so the CPU model finishes each stage in seconds: short free text, and JSON schemas capped
    to one or two short items with budgets they fit in."""
    short = {name: replace(spec, max_tokens=120) for name, spec in specs.STAGES.items()
             if name in ("draft", "section", "revise", "summarize")}
    short.update({name: replace(spec, schema=capped(spec.schema, 2, 60), max_tokens=200)
                  for name, spec in specs.STAGES.items() if name in ("gate", "review", "extract")})
    short["plan"] = replace(specs.STAGES["plan"], schema=capped(specs.STAGES["plan"].schema, 2, 60), max_tokens=400)
    monkeypatch.setattr(specs, "STAGES", {**specs.STAGES, **short})
    from pipeline.stages import runner

    monkeypatch.setattr(runner, "STAGES", specs.STAGES)


# Instructions as an attorney gives them, with a date and a record cite: a small model carries such claims into its
# draft, where the verifier must check them against the evidence (the instructions are not evidence).
INSTRUCTIONS = ("Draft a short motion to consolidate the appeals from the order entered on March 3, 2021 "
                "(CT000001). Give that date and that Bates number in the motion.")


def test_a_motion_on_court_filings_completes_every_stage(matter, attorney, court_matter, embedded, short_answers,
                                                         capsys):
    register_embedded(embedded, context_tokens=EMBEDDED_CONTEXT_TOKENS)
    filing, _ = court_matter
    try:
        call_command("run_job", "--matter", str(matter.pk), "--kind", "motion", "--exhibit", str(filing.pk),
                     "--instructions", INSTRUCTIONS, "--wait")
    except SystemExit:
        pass  # exit status 1: the job did not end done (the CPU model's gate may find no grounds)
    job = Job.objects.get()
    if job.status == "stopped":
        job_continue(job=job, user=attorney, reason="Consolidation is ordered by the court; go on.", enqueue=False)
        run_all(job)
    job.refresh_from_db()
    if job.status == "failed" and job.current_runs()[-1].stage == "revise":
        # The CPU model may loop on the revision of five sections; "Run the stage again" changes its sampling.
        stage_retry(job=job, user=attorney, enqueue=False)
        run_all(job)
        job.refresh_from_db()
    runs = job.current_runs()
    assert [(r.stage, r.status) for r in runs][-4:] == [
        ("revise", "done"), ("verify", "done"), ("review", "done"), ("extract", "done")]
    sections = [r for r in runs if r.stage == "section"]
    assert sections and all(r.status == "done" for r in sections)
    for run in runs:
        if run.role and not (run.parsed or {}).get("missing"):
            assert run.server_name == "embedded" and run.board == "CPU (embedded)"
            assert run.prompt_tokens and run.prompt_tokens > 50
            assert run.completion_tokens and run.completion_tokens > 0
            assert run.decode_tok_s and run.decode_tok_s > 0 and run.prompt_tok_s and run.prompt_tok_s > 0
            assert len(run.packet_sha256) == 64 or run.stage == "plan"  # the plan is sent no packet
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert lines[0]["stage"] == "gate" and {"job", "stage", "role", "server", "status", "prompt_tokens",
                                            "completion_tokens", "decode_tok_s", "prompt_tok_s", "duration_ms",
                                            "error"} == set(lines[0])
    version = job.draft.latest_version
    assert version.number == 2 and version.provenance["stage"] == "revise"
    draft_run = next(r for r in runs if r.stage == "plan")
    assert draft_run.model == "smollm2-135m-instruct" and draft_run.sampling["repeat_penalty"] == 1.3
    # A draft an attorney can read (text of its own, not the instructions echoed back) with claims the verifier
    # checked: findings to review beside it.
    assert len(version.text.split()) >= 20 and INSTRUCTIONS not in version.text
    assert version.findings.exists(), version.text


def test_a_summary_uses_only_the_summarizer_and_no_other_server(matter, court_matter, embedded, short_answers):
    with ScriptedServer() as other:
        calls = stage_server(other)
        register(other.url, name="other-board", roles=[r for r in Role if r not in (Role.ROUTER, Role.SUMMARIZER)])
        mine = register(embedded.base_url, name="embedded", roles=[Role.ROUTER, Role.SUMMARIZER])
        mine.context_tokens = EMBEDDED_CONTEXT_TOKENS
        mine.save()
        call_command("run_job", "--matter", str(matter.pk), "--kind", "summary",
                     "--instructions", "Summarize the order.", "--wait")
    job = Job.objects.get()
    runs = list(StageRun.objects.filter(job=job).order_by("order"))
    assert [(r.stage, r.role, r.status) for r in runs] == [("summarize", "summarizer", "done"), ("verify", "", "done")]
    assert runs[0].server_name == "embedded" and runs[0].completion_tokens > 0
    assert calls == [] and not [path for path, _ in other.requests if path != "/health"]
    assert job.draft.kind == "summary"
