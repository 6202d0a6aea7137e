"""Making exhibit digests against a scripted llama-server: the stored digest, the cache, broken and degenerate
answers, and the sweep that queues them."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from matters.leases import tasks_waiting
from matters.models import Exhibit
from pipeline.digests.models import ExhibitDigest
from pipeline.digests.services import DIGEST_TEMPLATE, digest_make, digest_queue, digests_schedule
from pipeline.tasks import digest_exhibit
from tests.factories import ExhibitFactory, MatterFactory
from tests.support.jobs import register
from tests.support.processes import free_port
from tests.support.scripted_server import Reply, chat_chunks, sse
from tests.support.stage_server import TIMINGS, stage_server, words

pytestmark = pytest.mark.django_db

LEASE_PAGES = [
    "RESIDENTIAL LEASE. This lease is made on March 3, 2021 between Jones, landlord, and Smith, tenant. "
    "The monthly rent is $1,250.00, due on the first day of each month.",
    "The landlord shall keep the roof and the walls in good repair. Signed by both parties.",
]


def _digest(**overrides) -> str:
    answer = {"document_type": "residential lease", "date": "March 3, 2021", "author": "Jones",
              "parties": ["Jones", "Smith"], "summary": "A lease of an apartment from Jones to Smith.",
              "key_facts": [{"fact": "The monthly rent is $1,250.00, due on the first day of each month.",
                             "pages": [1]},
                            {"fact": "The landlord shall keep the roof in good repair.", "pages": [1]}]}
    return json.dumps(answer | overrides)


def _text(answer: str) -> Reply:
    return Reply(pieces=[sse(*chat_chunks(words(answer), timings=TIMINGS), "[DONE]")], pause_s=0.001)


@pytest.fixture
def lease(matter):
    return ExhibitFactory(matter=matter, title="Lease", pages=LEASE_PAGES)


def test_a_digest_is_stored_with_its_model_prompt_and_each_fact_checked_against_its_page(server, lease):
    calls = stage_server(server, {"digest": _digest()})
    register(server.url)
    row = digest_make(exhibit_id=lease.pk)
    assert calls == ["digest"]
    assert (row.status, row.model, row.prompt_template, row.sha256) == (
        "done", "scripted-model", DIGEST_TEMPLATE, lease.sha256)
    assert row.digest["document_type"] == "residential lease" and row.pages_read == 2 and row.page_count == 2
    body = server.requests[-1][1]
    # Schema-constrained, page cites bounded to the pages sent, each page fenced as data.
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["key_facts"]["items"]["properties"]["pages"]["items"]["maximum"] == 2
    assert body["messages"][1]["content"].count("<<<EVIDENCE") == 2
    # The rent is on page 1; the roof is on page 2 though the model cited page 1: flagged, with the reason.
    assert [(f["status"], f["pages"]) for f in row.facts] == [("on_page", [1]), ("not_on_cited_page", [1])]
    assert "roof" in row.facts[1]["missing"] and "1 of 2 key facts" in row.reason
    assert row.completion_tokens == 24 and row.finished_at is not None
    lease.refresh_from_db()
    assert lease.status == Exhibit.Status.READY


def test_the_same_content_is_never_digested_twice_even_in_another_matter(server, lease,
                                                                         django_capture_on_commit_callbacks):
    calls = stage_server(server, {"digest": _digest()})
    register(server.url)
    digest_make(exhibit_id=lease.pk)
    copy = ExhibitFactory(matter=MatterFactory(), sha256=lease.sha256, pages=LEASE_PAGES)
    with django_capture_on_commit_callbacks(execute=True):
        row = digest_queue(exhibit=copy)
    assert row.status == "done" and not tasks_waiting(digest_exhibit).exists()
    assert digest_make(exhibit_id=copy.pk).pk == row.pk
    assert calls == ["digest"] and ExhibitDigest.objects.count() == 1


def test_another_model_makes_a_digest_of_its_own(server, lease):
    calls = stage_server(server, {"digest": _digest()})
    first = register(server.url)
    digest_make(exhibit_id=lease.pk)
    first.model_name = "another-model"
    first.save()
    digest_make(exhibit_id=lease.pk)
    assert calls == ["digest", "digest"]
    assert sorted(ExhibitDigest.objects.values_list("model", flat=True)) == ["another-model", "scripted-model"]


def test_broken_json_is_repaired_once_then_the_digest_fails_with_the_reason(server, lease):
    calls = stage_server(server, {"digest": "The lease is about rent {not json"})
    register(server.url)
    row = digest_make(exhibit_id=lease.pk)
    assert calls == ["digest", "digest"]  # the answer, then the repair request
    assert "not valid JSON" in server.requests[-1][1]["messages"][-1]["content"]
    assert row.status == "failed" and "not a digest" in row.reason and "repair" in row.reason
    assert row.output == "The lease is about rent {not json" and row.digest is None
    lease.refresh_from_db()
    assert lease.status == Exhibit.Status.READY and lease.reason == ""


def test_a_repaired_answer_is_used(server, lease):
    stage_server(server, {"digest": lambda n: "{broken" if n == 1 else _digest()})
    register(server.url)
    assert digest_make(exhibit_id=lease.pk).status == "done"


def test_a_degenerate_digest_fails_and_says_why(server, lease):
    loop = [{"fact": "The rent is due.", "pages": [1]}] * 4
    stage_server(server, {"digest": _digest(key_facts=loop)})
    register(server.url)
    row = digest_make(exhibit_id=lease.pk)
    assert row.status == "failed" and row.reason.startswith("The digest is degenerate: it repeats one key fact 4")
    assert row.digest is None


def test_an_empty_digest_fails_as_degenerate(server, lease):
    stage_server(server, {"digest": _digest(summary="", key_facts=[])})
    register(server.url)
    assert "no summary and no key fact" in digest_make(exhibit_id=lease.pk).reason


def test_a_failed_digest_is_queued_again_only_when_asked(server, lease, django_capture_on_commit_callbacks):
    calls = stage_server(server, {"digest": lambda n: "{broken" if n <= 2 else _digest()})
    register(server.url)
    assert digest_make(exhibit_id=lease.pk).status == "failed"
    assert digests_schedule() == 0 and digest_queue(exhibit=lease).status == "failed"
    with django_capture_on_commit_callbacks(execute=True):
        assert digest_queue(exhibit=lease, again=True).status == "queued"
    assert tasks_waiting(digest_exhibit).count() == 1
    assert digest_make(exhibit_id=lease.pk).status == "done" and len(calls) == 3


def test_the_sweep_queues_each_ready_evidence_exhibit_once(server, matter, lease,
                                                          django_capture_on_commit_callbacks):
    register(server.url)
    ExhibitFactory(matter=matter, status=Exhibit.Status.PROCESSING, pages=["not read yet"])
    ExhibitFactory(matter=matter, origin="authority", pages=["An opinion."])
    with django_capture_on_commit_callbacks(execute=True):
        assert digests_schedule() == 1
        assert digests_schedule() == 0
    assert tasks_waiting(digest_exhibit).count() == 1
    assert ExhibitDigest.objects.get().exhibit == lease


def test_without_a_summarizer_nothing_is_queued(lease):
    assert digests_schedule() == 0
    with pytest.raises(Exception, match="summarizer role"):
        digest_queue(exhibit=lease)


def test_the_backfill_command_makes_each_digest_once(server, matter, lease):
    calls = stage_server(server, {"digest": _digest()})
    register(server.url)
    outputs = []
    for _ in range(2):
        out = StringIO()
        call_command("digest_exhibits", "--matter", str(matter.pk), "--wait", stdout=out)
        outputs.append([json.loads(line) for line in out.getvalue().splitlines()])
    assert [(line["label"], line["status"], line["facts"], line["flagged_facts"]) for line in outputs[0]] == [
        (lease.label, "done", 2, 1)]
    assert outputs[1] == outputs[0] and calls == ["digest"]


def test_a_summarizer_that_is_down_is_tried_again_later_then_the_digest_fails(lease,
                                                                            django_capture_on_commit_callbacks):
    register(f"http://127.0.0.1:{free_port()}")
    digest_queue(exhibit=lease, enqueue=False)
    for wait in (1, 2, 3):
        with django_capture_on_commit_callbacks(execute=True):
            row = digest_make(exhibit_id=lease.pk)
        assert row.status == "queued" and f"Trying again in {60 * 2 ** (wait - 1)} s." in row.reason
    assert tasks_waiting(digest_exhibit).count() == 3
    row = digest_make(exhibit_id=lease.pk)
    assert row.status == "failed" and "Gave up after 3 waits" in row.reason
    lease.refresh_from_db()
    assert lease.status == Exhibit.Status.READY
