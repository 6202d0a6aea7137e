"""Jobs run stage by stage against a scripted llama-server: the records, the gate, and every fault."""

import threading
import time

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from matters.models import AuditEntry, GeneratedDocument
from pipeline.job_models import StageRun
from pipeline.models import Role
from pipeline.stages import runner
from pipeline.stages.control import job_cancel, job_continue, job_start, stage_retry
from pipeline.stages.runner import stage_execute
from tests.support.jobs import register, run_all
from tests.support.processes import free_port
from tests.support.scripted_server import Reply, ScriptedServer, chat_chunks, sse
from tests.support.stage_server import TIMINGS, stage_server, words

pytestmark = pytest.mark.django_db


@pytest.fixture
def free_port_number() -> int:
    return free_port()


def test_a_motion_runs_every_stage_in_order_and_records_everything(matter, record, server, attorney, client):
    calls = stage_server(server)
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.",
                    user=attorney, enqueue=False)
    runs = run_all(job)
    assert [(r.stage, r.section, r.role, r.status) for r in runs] == [
        ("gate", "", "gate", "done"), ("plan", "", "reasoner", "done"),
        ("section", "02-introduction", "drafter", "done"), ("section", "03-statement_of_facts", "drafter", "done"),
        ("section", "04-argument", "drafter", "done"), ("section", "05-conclusion", "drafter", "done"),
        ("revise", "", "reasoner", "done"), ("verify", "", "", "done"), ("review", "", "reviewer", "done"),
        ("extract", "", "extractor", "done")]
    assert calls == ["gate", "plan", "section", "section", "section", "section", "revise", "review", "extract"]
    assert job.status == "done" and job.draft is not None
    draft_run = runs[2]
    assert draft_run.server_name == "scripted" and draft_run.model == "scripted-model"
    assert draft_run.decode_tok_s == 61.5 and draft_run.prompt_tok_s == 850.0
    assert draft_run.completion_tokens == 24 and draft_run.prompt_tokens == 120
    assert len(draft_run.packet_sha256) == 64 and draft_run.prompt_template == "section.v2.txt"
    assert "<<<EVIDENCE" in draft_run.prompt[1]["content"] and draft_run.sampling["temperature"] == 0.0
    assert draft_run.output.startswith("The lease was signed") and draft_run.duration_ms > 0
    assert runs[0].parsed["has_grounds"] is True
    versions = list(job.draft.versions.order_by("number"))
    assert [(v.author_kind, v.provenance["stage"]) for v in versions] == [("model", "sections"), ("model", "revise")]
    assert runs[7].parsed["blocking"] == 0 and versions[-1].findings.filter(status="grounded").count() >= 3
    assert versions[-1].attacks.get().severity == "low"
    assert GeneratedDocument.objects.filter(matter=matter, origin="extraction").count() == 1
    assert runs[9].parsed["items"][0]["value"] == "$1,250.00"
    assert AuditEntry.objects.filter(matter=matter, action="job.start").exists()
    stages = versions[-1].__class__.objects.get(pk=versions[-1].pk).provenance["stages"]
    assert [(s["stage"], s["server"], s["status"]) for s in stages][:3] == [
        ("gate", "scripted", "done"), ("plan", "scripted", "done"), ("section", "scripted", "done")]
    assert len(stages) == 10 and stages[2]["packet_sha256"] == draft_run.packet_sha256
    client.force_login(attorney)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Amounts, dates and parties found" in page and "<td>$1,250.00</td><td>SMITH000001</td>" in page


def test_the_gate_stops_a_job_without_grounds_and_an_attorney_may_go_on(matter, record, server, attorney, make_user):
    stage_server(server, {"gate": '{"has_grounds": false, "reasons": ["No evidence of a roof leak.", '
                                   '"The lease puts repairs on the tenant."], "cited_pages": []}'})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs.", enqueue=False)
    [gate] = run_all(job)
    assert gate.status == "stopped" and job.status == "stopped"
    assert "No evidence of a roof leak." in gate.reason and "repairs on the tenant" in job.reason
    assistant = make_user("bob", "assistant")
    matter.members.add(assistant)
    with pytest.raises(PermissionDenied):
        job_continue(job=job, user=assistant, reason="The client says otherwise.")
    with pytest.raises(ValidationError):
        job_continue(job=job, user=attorney, reason="go")
    job_continue(job=job, user=attorney, reason="The client's photos, arriving Monday, show the leak.")
    runs = run_all(job)
    assert [r.status for r in runs] == ["stopped"] + ["done"] * 9
    assert job.gate_override_by == attorney and AuditEntry.objects.filter(action="job.gate_override").exists()


def test_a_broken_section_stream_fails_the_stage_and_a_retry_runs_it_again(matter, record, server):
    def section(call):
        if call == 2:  # the second section's stream stops mid-answer, without finish_reason or [DONE]
            return Reply(pieces=[sse(*chat_chunks(["The lease", " was"], finish=None)[:2])])
        return "The lease was signed on March 3, 2021. SMITH000001."

    stage_server(server, {"section": section})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs.", enqueue=False)
    runs = run_all(job)
    assert [(r.stage, r.section, r.status) for r in runs] == [
        ("gate", "", "done"), ("plan", "", "done"), ("section", "02-introduction", "done"),
        ("section", "03-statement_of_facts", "failed")]
    assert "stream" in runs[3].error.lower() and runs[3].output == "The lease was"
    assert job.status == "failed" and job.draft is None
    stage_retry(job=job, enqueue=False)
    runs = run_all(job)
    assert [r.status for r in runs] == ["done"] * 10
    attempts = StageRun.objects.filter(job=job, stage="section").order_by("section", "attempt")
    assert [(a.section, a.attempt, a.status) for a in attempts] == [
        ("02-introduction", 1, "done"), ("03-statement_of_facts", 1, "failed"), ("03-statement_of_facts", 2, "done"),
        ("04-argument", 1, "done"), ("05-conclusion", 1, "done")]
    # The section done before the failure was not written again, and the failed attempt wrote nothing.
    assert StageRun.objects.filter(job=job, stage="plan").count() == 1
    assert job.draft.versions.count() == 2  # assembled + revised


def test_a_reviewer_answering_invalid_json_twice_fails_with_the_raw_text(matter, record, server):
    calls = stage_server(server, {"review": "Attack 1: the draft is weak. {not json"})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs.", enqueue=False)
    runs = run_all(job)
    assert runs[-1].stage == "review" and runs[-1].status == "failed"
    assert "schema twice" in runs[-1].error and "{not json" in runs[-1].output
    assert calls.count("review") == 2  # the answer and one repair request


def test_a_server_down_then_up_waits_then_runs(matter, record, monkeypatch, free_port_number):
    monkeypatch.setattr(runner, "MAX_WAITS", 3)
    register(f"http://127.0.0.1:{free_port_number}")
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", enqueue=False)
    [run] = run_all(job)
    assert run.status == "waiting_for_server" and run.waits == 1 and job.status == "waiting_for_server"
    assert "Trying again" in run.error
    with ScriptedServer(free_port_number) as server:
        stage_server(server)
        [run] = run_all(job)
    assert run.status == "done" and run.attempt == 1 and run.waits == 1


def test_a_server_that_stays_down_fails_the_stage_with_the_reason(matter, record, monkeypatch, free_port_number):
    monkeypatch.setattr(runner, "MAX_WAITS", 1)
    register(f"http://127.0.0.1:{free_port_number}")
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", enqueue=False)
    run_all(job)
    run = StageRun.objects.get(job=job)
    stage_execute(run.pk, enqueue_next=False)
    run.refresh_from_db()
    assert run.status == "failed" and "Gave up after waiting 1 times" in run.error


def test_no_server_for_a_role_fails_without_falling_back(matter, record, server):
    stage_server(server)
    register(server.url, roles=[Role.GATE, Role.REASONER])
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs.", enqueue=False)
    runs = run_all(job)
    assert [(r.stage, r.status) for r in runs] == [("gate", "done"), ("plan", "done"), ("section", "failed")]
    assert "No model server holds the drafter role" in runs[2].error


@pytest.mark.django_db(transaction=True)
def test_cancel_closes_the_stream_between_tokens(matter, record, server, monkeypatch):
    monkeypatch.setattr(runner, "LEASE_S", 0.3)  # the heartbeat looks for the cancel flag every 0.1 s
    long_text = "The tenant has not paid. " * 60
    stage_server(server, {"extract": lambda call: Reply(
        pieces=[sse(chunk) for chunk in chat_chunks(words(long_text, 5), timings=TIMINGS)] + [sse("[DONE]")],
        pause_s=0.02)})
    register(server.url)
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", enqueue=False)
    run = job.stage_runs.get()
    worker = threading.Thread(target=stage_execute, args=(run.pk,), kwargs={"enqueue_next": False})
    worker.start()
    deadline = time.monotonic() + 10
    while not StageRun.objects.get(pk=run.pk).output and time.monotonic() < deadline:
        time.sleep(0.05)
    job_cancel(job=job)
    worker.join(timeout=10)
    run.refresh_from_db()
    job.refresh_from_db()
    assert run.status == "cancelled" and job.status == "cancelled", run.error
    assert 0 < len(run.output) < len(long_text)
    deadline = time.monotonic() + 5
    while not server.disconnects and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.disconnects == 1  # the stream was closed, so the server stops generating


def test_an_answer_cut_off_at_its_budget_says_so(matter, record, server):
    stage_server(server, {"summarize": lambda call: Reply(
        pieces=[sse(*chat_chunks(["The lease was signed", " on March 3"], finish="length", timings=TIMINGS),
                    "[DONE]")])})
    register(server.url)
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", enqueue=False)
    summarize = run_all(job)[0]
    assert summarize.status == "done" and "may be cut off" in summarize.reason
