"""A summary job over a matter larger than the summarizer's context is written from every exhibit's digest: each
with its exhibit label and the page cite of each fact (a Bates number where produced), an exhibit without a digest
digested first, one whose digest failed named as not covered; a matter that fits is summarized from its pages."""

import hashlib

import pytest
from django.urls import reverse

from pipeline.digests.models import ExhibitDigest
from pipeline.digests.services import DIGEST_TEMPLATE
from pipeline.models import ModelServer
from pipeline.stages.control import job_start
from pipeline.stages.summary import DIGEST_OPEN
from tests.factories import ExhibitFactory
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

pytestmark = pytest.mark.django_db

# 4,096 tokens leave the summarizer (3 characters a token, less its 1,024-token answer and 700 for the prompt)
# about 7,100 characters of evidence; the notices below are 27,000.
SMALL_CONTEXT = 4096
NOTICE = "Notice {n}: the tenant reported on June {n}, 2021 that the roof leaks over the bedroom. " * 20


def completions(server, stage_opening: str) -> list[str]:
    return ["\n".join(m["content"] for m in body["messages"]) for path, body in server.requests
            if path == "/v1/chat/completions" and body["messages"][0]["content"].startswith(stage_opening)]


def done_digest(exhibit, n: int, **fields) -> ExhibitDigest:
    facts = [{"fact": f"The tenant reported the roof leak on June {n}, 2021.", "pages": [2], "status": "on_page",
              "missing": []},
             {"fact": "The landlord repaired the roof at once.", "pages": [2], "status": "not_on_cited_page",
              "missing": ["repaired"]}]
    return ExhibitDigest.objects.create(
        sha256=exhibit.sha256, prompt_template=DIGEST_TEMPLATE, model="scripted-model", exhibit=exhibit,
        status=ExhibitDigest.Status.DONE, pages_read=3, page_count=3, facts=facts,
        digest={"document_type": "notice", "date": f"June {n}, 2021", "author": "Smith", "parties": ["Smith"],
                "summary": "A tenant's notice of a leak.", "key_facts": [{"fact": f["fact"], "pages": [2]}
                                                                        for f in facts]}, **fields)


def test_a_matter_larger_than_the_context_is_summarized_from_its_digests(matter, record, server, attorney,
                                                                        client):
    notices = [ExhibitFactory(matter=matter, pages=[NOTICE.format(n=n)] * 3) for n in range(1, 7)]
    for n, exhibit in enumerate(notices, start=1):
        done_digest(exhibit, n)
    ExhibitDigest.objects.create(sha256=record["invoice"].sha256, prompt_template=DIGEST_TEMPLATE,
                                 model="scripted-model", exhibit=record["invoice"], status=ExhibitDigest.Status.FAILED,
                                 reason="The summarizer's answer is not a digest.")
    calls = stage_server(server)
    ModelServer.objects.filter(pk=register(server.url).pk).update(context_tokens=SMALL_CONTEXT)
    job = job_start(matter=matter, kind="summary", instructions="Summarize the matter.", user=attorney,
                    enqueue=False)
    summarize = run_all(job)[0]
    assert summarize.status == "done", summarize.error

    # The lease had no digest: it was digested in the stage, before the summary's request.
    assert calls[:2] == ["digest", "summarize"]
    assert ExhibitDigest.objects.get(sha256=record["lease"].sha256).status == "done"
    prompt = completions(server, "You summarize case exhibits")[0]
    lease, invoice = record["lease"].label, record["invoice"].label
    assert prompt.count(DIGEST_OPEN + " ") == 7  # the lease and the six notices
    assert f'{DIGEST_OPEN} exhibit="{lease}"' in prompt
    assert "- The lease was signed on March 3, 2021. (cite: SMITH000001)" in prompt  # a produced page: its Bates
    for n, exhibit in enumerate(notices, start=1):
        assert f"- The tenant reported the roof leak on June {n}, 2021. (cite: Ex. {exhibit.label} at 2)" in prompt
    assert "The landlord repaired the roof at once." not in prompt  # not borne out by its page: not given
    assert "over the bedroom" not in prompt  # no page's text: the digests stand in for it
    assert f"Ex. {invoice} (its digest failed: The summarizer's answer is not a digest.)" in prompt

    record_ = summarize.retrieval["digests"]
    assert [e["label"] for e in record_["exhibits"]] == [lease] + [e.label for e in notices]
    assert record_["exhibits"][1]["facts"] == 1 and record_["exhibits"][1]["facts_not_borne_out"] == 1
    assert record_["missing"] == [{"exhibit": record["invoice"].pk, "label": invoice,
                                   "why": "its digest failed: The summarizer's answer is not a digest."}]
    assert record_["digested_now"] == 1
    assert summarize.retrieval["evidence_pages"] == 0 and summarize.retrieval["omitted_pages"] == 3 + 18
    user_message = summarize.prompt[1]["content"]
    assert summarize.packet_sha256 == hashlib.sha256(
        user_message.split("Request: Summarize the matter.\n\n", 1)[1].encode("utf-8")).hexdigest()
    job.refresh_from_db()
    assert job.status == "done" and job.draft.latest_version.text.startswith("The lease was signed")
    client.force_login(attorney)
    page = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    assert "summary was written from the digests of 7 exhibits" in page and f"Ex. {invoice}: its digest failed" in page


def test_a_matter_that_fits_is_summarized_from_its_pages(matter, record, server, attorney):
    stage_server(server)
    register(server.url)
    job = job_start(matter=matter, kind="summary", instructions="Summarize the matter.", user=attorney,
                    enqueue=False)
    summarize = run_all(job)[0]
    assert summarize.status == "done", summarize.error
    prompt = completions(server, "You summarize case exhibits")[0]
    assert DIGEST_OPEN not in prompt and "<<<EVIDENCE" in prompt and "digests" not in summarize.retrieval
    assert not ExhibitDigest.objects.exists()  # nothing digested for a matter that fits
