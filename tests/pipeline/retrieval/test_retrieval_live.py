"""A motion job on the embedded models over a matter of ten court filings and two authorities: the request is
about one filing, and the draft stage's packet holds that filing's pages and the AUTHORITY section with both
authorities' citations."""

import time
from dataclasses import replace

import pytest

from matters.models import Origin
from pipeline.embedded import EMBEDDER_CONTEXT_TOKENS, start_embedded_embedder, start_embedded_server
from pipeline.job_models import StageRun, StageStatus
from pipeline.retrieval import semantic
from pipeline.retrieval.embedding import embedding_progress, matter_embed
from pipeline.servers import register_embedded, register_embedded_embedder
from pipeline.stages import specs
from pipeline.stages.control import job_continue, job_start
from pipeline.stages.runner import stage_execute

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

FILINGS = ["ca1_00117684624.pdf", "ca10_010110462922.pdf", "ca2_1-1.pdf", "ca3_003112692106.pdf",
           "ca5_00516242060.pdf", "ca6_1-3.pdf", "ca7_3.pdf", "ca8_.pdf", "ca9_19.pdf", "cafc_3.pdf"]
AUTHORITIES = {"mo-app-jagels.pdf": "State v. Jagels (Mo. Ct. App.)",
               "nc-gift-surplus.pdf": "Gift Surplus, LLC v. State ex rel. Cooper, 2022-NCSC-1"}


@pytest.fixture(scope="module")
def small_chat(tmp_path_factory):
    """The embedded chat model with a 4,096-token context: a packet of about four pages, so the CPU model reads
    it in seconds; a matter of ten filings is still many times larger."""
    server = start_embedded_server(context_tokens=4096, log_path=tmp_path_factory.mktemp("llama") / "chat.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def embedder_server(tmp_path_factory):
    server = start_embedded_embedder(cache_dir=tmp_path_factory.mktemp("models"),
                                     log_path=tmp_path_factory.mktemp("llama") / "embedder.log")
    yield server
    server.stop()


@pytest.fixture
def short_draft(monkeypatch):
    """A short answer from the CPU model, so the stage takes seconds; the packet is what is under test."""
    from pipeline.stages import runner

    stages = {**specs.STAGES, "draft": replace(specs.STAGES["draft"], max_tokens=48),
              "gate": replace(specs.STAGES["gate"], max_tokens=160)}
    monkeypatch.setattr(specs, "STAGES", stages)
    monkeypatch.setattr(runner, "STAGES", stages)


def test_a_motion_job_retrieves_its_filing_and_the_law(matter, attorney, ingest, corpus, small_chat, embedder_server,
                                                      short_draft):
    semantic.forget()
    started = time.monotonic()
    exhibits = {name: ingest(matter, corpus(f"court/{name}"), origin="court") for name in FILINGS}
    for name, cites_as in AUTHORITIES.items():
        law = ingest(matter, corpus(f"court/{name}"), origin=Origin.AUTHORITY)
        law.cites_as = cites_as
        law.save(update_fields=["cites_as"])
    print(f"ingested in {time.monotonic() - started:.0f} s")
    register_embedded(small_chat, context_tokens=4096)
    register_embedded_embedder(embedder_server, context_tokens=EMBEDDER_CONTEXT_TOKENS)
    matter_embed(matter_id=matter.pk)
    assert embedding_progress(matter).complete
    print(f"embedded at {time.monotonic() - started:.0f} s")
    # ca7_3.pdf: the Seventh Circuit's order asking the parties whether the drivers' appeal should be heard
    # together with an earlier one.
    target = exhibits["ca7_3.pdf"]
    job = job_start(matter=matter, kind="motion", user=attorney, enqueue=False,
                    instructions="Prepare our response to the Seventh Circuit's order, made on its own, asking "
                                 "whether the FedEx Ground drivers' appeal should be consolidated with the earlier "
                                 "appeal.")
    gate = stage_execute(StageRun.objects.get(job=job, stage="gate").pk, enqueue_next=False)
    if gate.status == StageStatus.STOPPED:
        job_continue(job=job, user=attorney, reason="Test: the packet is under test, not the gate.", enqueue=False)
    assert gate.status in (StageStatus.DONE, StageStatus.STOPPED), gate.error
    print(f"gate {gate.status} at {time.monotonic() - started:.0f} s ({gate.prompt_tokens} prompt tokens)")
    # The plan's outline decides what each section searches for; the first drafted section's packet is under test.
    plan = stage_execute(StageRun.objects.get(job=job, stage="plan").pk, enqueue_next=False)
    assert plan.status == StageStatus.DONE, plan.error
    print(f"plan at {time.monotonic() - started:.0f} s: {[s['heading'] for s in plan.parsed['sections']]}")
    draft = stage_execute(StageRun.objects.filter(job=job, stage="section").order_by("pk").first().pk,
                          enqueue_next=False)
    assert draft.retrieval["evidence_pages"] > 0
    chosen = {(page["label"], page["page"]) for page in draft.retrieval["evidence"]["pages"]}
    assert any(label == target.label for label, _ in chosen), draft.retrieval["evidence"]["pages"]
    assert draft.retrieval["evidence"]["queries"][0]["methods"] == ["lexical", "semantic"]
    prompt = draft.prompt[1]["content"]
    for cites_as in AUTHORITIES.values():
        assert f'cites_as="{cites_as}"' in prompt
    assert {a["cites_as"] for a in draft.retrieval["authorities"]} == set(AUTHORITIES.values())
