"""A retry of an answer that failed as degenerate changes what made it so (a new seed, sampled, and a higher
repeat penalty), records it on the new attempt and says so on the job page; the first such retry the runner makes
itself, later ones the attorney. A retry after any other failure sends the request as it was, and is the
attorney's."""

import re

import pytest
from django.urls import reverse

from matters.models import AuditEntry
from pipeline.job_models import StageRun
from pipeline.stages.control import job_start, stage_retry
from tests.support.jobs import register, run_all
from tests.support.scripted_server import Reply
from tests.support.stage_server import stage_server

from .test_stream_degenerate import LOOPING, streamed

pytestmark = pytest.mark.django_db

SUMMARY = "The lease was signed on March 3, 2021 (SMITH000001)."


def completions(server) -> list[dict]:
    return [body for path, body in server.requests if path == "/v1/chat/completions"]


def test_a_looping_answer_is_retried_once_by_itself_with_a_new_seed_and_a_higher_repeat_penalty(
        matter, record, server, attorney, client):
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                    enqueue=False)
    stage_server(server, {"summarize": lambda call: streamed(LOOPING if call == 1 else SUMMARY)})
    register(server.url)
    run_all(job)  # no attorney in between: the runner queued the retry itself

    attempts = list(StageRun.objects.filter(job=job, stage="summarize").order_by("attempt"))
    assert [(a.attempt, a.status) for a in attempts] == [(1, "failed"), (2, "done")]
    budget = attempts[0].sampling["max_tokens"]
    change = {"seed": 1235, "temperature": 0.3, "top_k": 40, "repeat_penalty": 1.15, "max_tokens": budget // 2}
    retry = attempts[1]
    assert retry.retry_change["sampling"] == change and retry.retry_change["automatic"] is True
    assert retry.retry_change["because"] == "the last answer repeated itself"
    first, second = completions(server)[:2]
    assert (first["seed"], first["temperature"], first["top_k"], "repeat_penalty" in first) == (1234, 0.0, 1, False)
    assert first["max_tokens"] == budget
    assert {key: second.get(key) for key in change} == change  # sent: a new seed, the penalty, half the answer
    assert second["messages"] == first["messages"]  # the same prompt: only the sampling changed
    assert {key: retry.sampling[key] for key in change} == change  # recorded as sent
    assert attempts[0].retry_change == {}
    entry = AuditEntry.objects.filter(action="job.retry").latest("pk")
    assert entry.detail["sampling_change"] == change and entry.detail["automatic"] is True and entry.actor == "system"
    job.refresh_from_db()
    assert job.status == "done" and job.draft.latest_version.text.startswith(SUMMARY)
    client.force_login(attorney)
    page = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    assert (f"Retried automatically with a new seed at temperature 0.3, repeat penalty 1.15 and an answer budget of "
            f"{budget // 2} tokens (half of {budget}), because the last answer repeated itself.") in page
    # The stage that passed on its retry still shows why its first attempt failed.
    row = re.search(r'<tr data-stage="summarize".*?</tr>', client.get(reverse("pipeline:job", args=[job.pk]))
                    .content.decode(), re.S).group(0)
    earlier = re.search(r'<details class="earlier-attempts.*?</details>', row, re.S).group(0)
    assert "1 earlier attempt<" in earlier and '<li value="1">' in earlier and "Failed" in earlier
    assert "The answer is degenerate: one line is repeated" in attempts[0].error
    assert attempts[0].error.split("(")[0].replace("'", "&#x27;") in earlier


def test_the_attorneys_retry_after_the_automatic_one_raises_the_penalty_again_and_takes_the_next_seed(
        matter, record, server, attorney):
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                    enqueue=False)
    stage_server(server, {"summarize": lambda call: streamed(LOOPING)})
    register(server.url)
    run_all(job)  # the first attempt and the runner's own retry both loop: the job waits for the attorney
    job.refresh_from_db()
    assert job.status == "failed" and StageRun.objects.filter(job=job).count() == 2
    third = stage_retry(job=job, user=attorney, enqueue=False)
    assert third.retry_change["sampling"] == {"seed": 1236, "temperature": 0.3, "top_k": 40, "repeat_penalty": 1.25,
                                              "max_tokens": 256}
    run_all(job)
    sent = completions(server)
    assert [body.get("repeat_penalty") for body in sent] == [None, 1.15, 1.25]
    assert [body["max_tokens"] for body in sent] == [1024, 512, 256]


def test_a_retry_after_a_server_error_sends_the_same_request(matter, record, server, attorney):
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                    enqueue=False)
    stage_server(server, {"summarize": lambda call: Reply(status=500, pieces=[b'{"error": "boom"}'],
                                                          content_type="application/json")
                          if call == 1 else streamed(SUMMARY)})
    register(server.url)
    assert run_all(job)[0].status == "failed"
    assert stage_retry(job=job, user=attorney, enqueue=False).retry_change == {}
    run_all(job)
    first, second = completions(server)[:2]
    assert {k: v for k, v in first.items() if k != "messages"} == {k: v for k, v in second.items() if k != "messages"}


def test_only_a_looping_part_is_shortened_never_a_revision_or_an_empty_answer():
    from pipeline.stages.degenerate import retry_change
    from pipeline.stages.registry import REGISTRY

    looping = "The answer is degenerate: one line is repeated 5 times out of 6."
    assert retry_change(looping, {"max_tokens": 300}, shorten=True)["sampling"]["max_tokens"] == 150
    assert retry_change(looping, {"max_tokens": 200}, shorten=True)["sampling"]["max_tokens"] == 128  # the floor
    assert retry_change(looping, {"max_tokens": 100}, shorten=True)["sampling"]["max_tokens"] == 100  # kept
    assert "max_tokens" not in retry_change(looping, {"max_tokens": 1024}, shorten=False)["sampling"]
    assert retry_change("The answer is empty (finish reason: stop).", {"max_tokens": 1024},
                        shorten=True)["sampling"]["max_tokens"] == 1024  # not halved
    assert [REGISTRY[name].retry_shortens for name in ("section", "draft", "summarize", "revise", "plan")] == [
        True, True, True, False, False]
    # Once the penalty is at its most, a loop still halves the budget, and a budget already at its floor (or cut
    # before an empty answer) is kept, never sent back to the stage's full budget.
    maxed = {"repeat_penalty": 1.5, "max_tokens": 512, "seed": 1240}
    assert retry_change(looping, maxed, shorten=True)["sampling"]["max_tokens"] == 256
    assert retry_change(looping, maxed | {"max_tokens": 128}, shorten=True)["sampling"]["max_tokens"] == 128
    assert retry_change("The answer is empty (finish reason: stop).", {"max_tokens": 256},
                        shorten=True)["sampling"]["max_tokens"] == 256


def test_a_stage_stopped_mid_answer_counts_what_it_streamed_as_ended(matter, record, server, attorney, client):
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                    enqueue=False)
    stage_server(server, {"summarize": lambda call: streamed(LOOPING)})
    register(server.url)
    [run] = run_all(job)
    assert run.status == "failed" and run.completion_tokens is None and run.streamed_pieces > 0
    client.force_login(attorney)
    row = re.search(r'<tr data-stage="summarize".*?</tr>', client.get(reverse("pipeline:job", args=[job.pk]))
                    .content.decode(), re.S).group(0)
    assert f"{run.streamed_pieces} before it stopped" in row and "so far" not in row
