"""A whole motion on the embedded model (SmolLM2-135M on the CPU, a 2,048-token context): a matter of ten court
filings and two authorities, the plan, one section at a time, a revision that keeps what the sections grounded,
and a draft whose legal standard cites a stored authority the verifier finds (grounded, or a pin it cannot check;
never "not a stored authority") and whose sections of facts cite the record, every record cite and quotation
standing on its page. A summary of a
matter larger than the context reduces over the exhibits' digests."""

import time
from dataclasses import replace

import pytest

from matters.models import Origin
from pipeline.embedded import start_embedded_server
from pipeline.job_models import StageStatus
from pipeline.servers import register_embedded
from pipeline.stages import specs
from pipeline.stages.control import job_continue, job_start, stage_retry
from pipeline.stages.grounding import grounding_marks
from tests.support.jobs import run_all

from .test_jobs_embedded import capped

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

CONTEXT = 2048
FILINGS = ["ca1_00117684624.pdf", "ca10_010110462922.pdf", "ca2_1-1.pdf", "ca3_003112692106.pdf",
           "ca5_00516242060.pdf", "ca6_1-3.pdf", "ca7_3.pdf", "ca8_.pdf", "ca9_19.pdf", "cafc_3.pdf"]
# The citations an attorney gives them on the exhibit page: the slip opinion's first page names the case but not
# its reporter cite, and the North Carolina opinion's public-domain cite is not on its first page.
AUTHORITIES = {"scotus-slip-2012.pdf": "Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013)",
               "nc-gift-surplus.pdf": "Gift Surplus, LLC v. State ex rel. Cooper, 2022-NCSC-1"}
REQUEST = ("Prepare our response to the Seventh Circuit's order, made on its own, asking whether the FedEx Ground "
           "drivers' appeal should be consolidated with the earlier appeal.")


@pytest.fixture(scope="module")
def small_chat(tmp_path_factory):
    server = start_embedded_server(context_tokens=CONTEXT, log_path=tmp_path_factory.mktemp("llama") / "chat.log")
    yield server
    server.stop()


@pytest.fixture
def short_sections(monkeypatch):
    """Sections of at most 96 tokens, and JSON answers capped to one or two short items, so each stage takes
    seconds on the CPU."""
    from pipeline.stages import runner

    stages = dict(specs.STAGES)
    stages.update({name: replace(stages[name], max_tokens=96) for name in ("section", "revise")})
    stages.update({name: replace(stages[name], schema=capped(stages[name].schema, 2, 60), max_tokens=160)
                   for name in ("gate", "review", "extract")})
    # One section of one question and one query closes its JSON well inside 200 tokens; LawDesk adds the legal
    # standard a plan without law lacks (pipeline.stages.motion.outline_from).
    stages["plan"] = replace(stages["plan"], schema=capped(stages["plan"].schema, 1, 40), max_tokens=200)
    monkeypatch.setattr(specs, "STAGES", stages)
    monkeypatch.setattr(runner, "STAGES", stages)


def test_a_motion_on_ten_filings_is_written_section_by_section_with_record_and_authority_cites(
        matter, attorney, ingest, corpus, small_chat, short_sections):
    started = time.monotonic()
    for name in FILINGS:
        ingest(matter, corpus(f"court/{name}"), origin="court")
    for name, cites_as in AUTHORITIES.items():
        law = ingest(matter, corpus(f"court/{name}"), origin=Origin.AUTHORITY)
        law.cites_as = cites_as
        law.save(update_fields=["cites_as"])
    print(f"ingested in {time.monotonic() - started:.0f} s")
    register_embedded(small_chat, context_tokens=CONTEXT)
    job = job_start(matter=matter, kind="motion", user=attorney, enqueue=False, instructions=REQUEST)
    runs = run_all(job)
    if job.status == StageStatus.STOPPED:
        job_continue(job=job, user=attorney, reason="The court asked; we must answer.", enqueue=False)
        runs = run_all(job)
    for _ in range(2):
        # An unusable answer (the CPU model loops, most often on the revision of the whole) is run again as an
        # attorney would, with the sampling the retry changes; the sections done before it are kept.
        if job.status != StageStatus.FAILED:
            break
        retry = stage_retry(job=job, user=attorney, enqueue=False)
        print(f"retry of {retry.stage} {retry.section}: {(retry.retry_change or {}).get('note')}")
        runs = run_all(job)
    for run in runs:
        print(f"{run.stage} {run.section} {run.status} {run.prompt_tokens} prompt + {run.completion_tokens} tokens, "
              f"{(run.duration_ms or 0) / 1000:.1f} s: {run.error or run.reason}")
        if run.stage == "section":
            print(f"    text: {(run.parsed or {}).get('text')!r}")
    print(f"job done at {time.monotonic() - started:.0f} s")
    assert job.status == StageStatus.DONE, [(r.stage, r.section, r.error) for r in runs]

    plan = next(r for r in runs if r.stage == "plan")
    drafted = [s for s in plan.parsed["sections"] if s["writer"] == "drafter"]
    sections = [r for r in runs if r.stage == "section"]
    assert [r.section for r in sections] == [s["key"] for s in drafted]
    assert all(r.status == StageStatus.DONE and r.server_name == "embedded" for r in sections)
    version = job.draft.latest_version
    print(version.text)
    findings = list(version.findings.all())
    # The sections stating facts cite the record: cites LawDesk attached to sentences drawn from one page, or,
    # where the model's sentences stand on no one page (the 135M model's, as measured: docs/jobs.md), quotations
    # of the pages it was sent. Each stands on the page the verifier finds it on.
    attached = {a["cite"] for r in sections for a in (r.parsed or {}).get("attributed") or []}
    quoted = [q for r in sections for q in (r.parsed or {}).get("quoted_record") or []]
    print(f"record cites attached: {sorted(attached)}; record quoted: {quoted}")
    assert attached or quoted, "no section cites the record"
    records = [f for f in findings if f.kind in ("exhibit_cite", "bates_cite")
               and f.text in attached | {q["cite"] for q in quoted}]
    assert records and all(f.status == "grounded" for f in records), [(f.text, f.status, f.message) for f in records]
    quotations = [f for f in findings if f.kind == "quotation" and any(q["quote"][:40] in " ".join(f.text.split())
                                                                       for q in quoted)]
    assert len(quotations) == len(quoted) and all(f.status == "grounded" for f in quotations), [
        (f.text, f.status, f.message) for f in quotations]
    # The law the section stating it cites, from its AUTHORITY section: found, never "not a stored authority".
    sent = {a["cites_as"] for r in sections for a in r.retrieval.get("authorities") or []}
    assert sent, "no authority reached a section's packet"
    law = [f for f in findings if f.kind in ("case_citation", "statute_citation")
           and any(marks_of(f.text) & marks_of(cites_as) for cites_as in sent)]
    assert law, [(f.kind, f.text, f.status) for f in findings]
    assert all(f.status in ("grounded", "pin_unchecked") for f in law), [(f.text, f.status, f.message) for f in law]


def marks_of(text: str) -> set[str]:
    return {key for key in grounding_marks(text) if key.startswith(("case:", "statute:"))}


@pytest.fixture
def short_digests(monkeypatch):
    """Digests and a summary short enough for the CPU model to write in seconds each."""
    from pipeline.digests import services
    from pipeline.stages import runner

    schema = services.digest_schema
    monkeypatch.setattr(services, "DIGEST_MAX_TOKENS", 200)
    monkeypatch.setattr(services, "digest_schema", lambda pages: capped(schema(pages), 2, 80))
    stages = {**specs.STAGES, "summarize": replace(specs.STAGES["summarize"], max_tokens=96)}
    monkeypatch.setattr(specs, "STAGES", stages)
    monkeypatch.setattr(runner, "STAGES", stages)


def test_a_summary_of_a_matter_larger_than_the_context_reduces_over_digests(matter, attorney, ingest, corpus,
                                                                          small_chat, short_digests):
    from matters.models import Page

    started = time.monotonic()
    for name in ("ca7_3.pdf", "ca10_010110462922.pdf", "ca2_1-1.pdf", "ca6_1-3.pdf"):
        ingest(matter, corpus(f"court/{name}"), origin="court")
    chars = sum(len(text) for text in Page.objects.filter(exhibit__matter=matter).values_list("text", flat=True))
    assert chars > CONTEXT * 3  # more than the whole context holds at the client's 3 characters a token
    register_embedded(small_chat, context_tokens=CONTEXT)
    job = job_start(matter=matter, kind="summary", user=attorney, enqueue=False,
                    instructions="Summarize the matter.")
    runs = run_all(job)
    print(f"summary done at {time.monotonic() - started:.0f} s: {[(r.stage, r.status, r.error) for r in runs]}")
    assert job.status == StageStatus.DONE, [(r.stage, r.error) for r in runs]
    summarize = runs[0]
    digests = summarize.retrieval["digests"]
    assert "<<<DIGEST" in summarize.prompt[1]["content"] and len(digests["exhibits"]) >= 2, digests
    assert digests["digested_now"] == 4  # every exhibit digested in the stage, on the summarizer it holds
    print(job.draft.latest_version.text)
