"""An answer that loops is stopped while it streams, with the final check's own reason; an ordinary long answer
whose first lines repeat is not; the job page says what running the stage again changes (the same request would
bring the same answer back), and the worker's log names the failed stage's status."""

import logging

import pytest
from django.urls import reverse

from pipeline.stages.control import job_start
from pipeline.stages.degenerate import free_text_verdict, streaming_degeneration
from pipeline.tasks import run_stage
from tests.support.jobs import register, run_all
from tests.support.scripted_server import Reply, chat_chunks, sse
from tests.support.stage_server import TIMINGS, stage_server, words

pytestmark = pytest.mark.django_db

LOOP_LINE = "The tenant shall pay the rent on the first day of each month (SMITH000001)."
LOOPING = "SUMMARY OF THE LEASE\n" + "The lease was signed on March 3, 2021 (SMITH000001).\n" + \
    f"{LOOP_LINE}\n" * 300
# A payment list repeats one line 4 times in its first 8 lines, which the final rule alone would call a loop;
# the whole answer is a document.
LEDGER = "\n".join(["PAYMENTS UNDER THE LEASE", "- Rent paid: $1,250.00 (SMITH000001)",
                    "- Rent paid: $1,250.00 (SMITH000001)", "- Late fee: $50.00 (SMITH000001)",
                    "- Rent paid: $1,250.00 (SMITH000001)", "- Rent paid: $1,250.00 (SMITH000001)",
                    "DATES", "- Lease signed: March 3, 2021 (SMITH000001)"]
                   + [f"- Notice {n} sent: June {n}, 2021 (SMITH000003)" for n in range(1, 25)])


def streamed(text: str) -> Reply:
    """``text`` as a llama.cpp stream, one chunk of 12 characters per write, as a server writes its tokens."""
    return Reply(pieces=[sse(chunk) for chunk in chat_chunks(words(text), timings=TIMINGS)] + [sse("[DONE]")],
                 pause_s=0.002)


def summary(matter, text: str):
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", enqueue=False)
    return job, lambda call: streamed(text)


def test_a_looping_answer_is_stopped_early_with_the_final_checks_reason(matter, record, server):
    job, reply = summary(matter, LOOPING)
    stage_server(server, {"summarize": reply})
    register(server.url)
    summarize = run_all(job)[0]
    assert summarize.status == "failed"
    assert summarize.error.startswith("The summarizer's answer cannot be used. The answer is degenerate: one line "
                                      "is repeated"), summarize.error
    assert f"(“{LOOP_LINE}”); it was stopped after " in summarize.error
    stopped_after = int(summarize.error.rsplit("stopped after ", 1)[1].split()[0])
    assert 0 < stopped_after < len(words(LOOPING)) // 2
    # What it had written stays in the record, and it is the loop's start, not the whole budget.
    assert summarize.output.startswith("SUMMARY OF THE LEASE\n") and len(summarize.output) < len(LOOPING) // 2
    job.refresh_from_db()
    assert job.status == "failed" and job.draft is None


def test_an_answer_whose_first_lines_repeat_is_not_stopped(matter, record, server):
    job, reply = summary(matter, LEDGER)
    stage_server(server, {"summarize": reply})
    register(server.url)
    summarize = run_all(job)[0]
    assert summarize.status == "done", summarize.error
    assert summarize.output == LEDGER
    job.refresh_from_db()
    assert job.draft.latest_version.text == LEDGER


def test_the_job_page_says_what_a_retry_of_an_unusable_answer_changes(matter, record, server, attorney,
                                                                             client):
    job, reply = summary(matter, LOOPING)
    stage_server(server, {"summarize": reply})
    register(server.url)
    run_all(job)  # the first attempt and the runner's own retry (penalty 1.15, 512 tokens) both loop
    client.force_login(attorney)
    page = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    assert "Run the stage again" in page and 'id="retry-change"' in page
    assert ("A new attempt runs with a new seed at temperature 0.3, repeat penalty 1.25 and an answer budget of 256 "
            "tokens (half of 512), because the last answer repeated itself.") in page


def test_the_job_page_offers_a_plain_retry_after_another_failure(matter, record, server, attorney, client):
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", enqueue=False)
    stage_server(server, {"summarize": lambda call: Reply(status=500, pieces=[b'{"error": "boom"}'],
                                                          content_type="application/json")})
    register(server.url)
    assert run_all(job)[0].status == "failed"
    client.force_login(attorney)
    page = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    assert "Run the stage again" in page and 'id="retry-change"' not in page


def test_the_worker_log_names_a_failed_stages_status(matter, record, server, caplog):
    job, reply = summary(matter, LOOPING)
    stage_server(server, {"summarize": reply})
    register(server.url)
    tasks_log = logging.getLogger("pipeline.tasks")
    tasks_log.addHandler(caplog.handler)  # LawDesk's loggers do not propagate to the root, where caplog listens
    try:
        line = run_stage.call(job.stage_runs.get().pk)
    finally:
        tasks_log.removeHandler(caplog.handler)
    assert line["status"] == "failed"
    assert any(r.getMessage().endswith("stage=summarize attempt=1 status=failed") for r in caplog.records), \
        [r.getMessage() for r in caplog.records]


def test_the_streaming_rule_waits_for_lines_enough_to_be_sure():
    start = "\n".join(LEDGER.splitlines()[:8])
    assert "one line is repeated 4 times out of 8" in free_text_verdict(
        start, instructions="", finish_reason="stop", max_tokens=1024).fail  # the final rule, on the start alone
    assert streaming_degeneration(start) == ""
    assert streaming_degeneration(LEDGER) == ""
    loop_start = "\n".join(LOOPING.splitlines()[:10])
    assert streaming_degeneration(loop_start) == free_text_verdict(
        loop_start, instructions="", finish_reason="stop", max_tokens=1024).fail
    assert "one line is repeated 8 times out of 10" in streaming_degeneration(loop_start)
