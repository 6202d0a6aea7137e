"""Jobs with the worker in its own process: streamed tokens reach the job page's WebSocket with and without Redis,
and a worker killed mid-stage (kill -9) has its stage interrupted and re-run by another worker, once."""

import asyncio
import re
import signal
import time

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from matters.models import GeneratedDocument
from pipeline.job_models import StageRun
from pipeline.routing import websocket_urlpatterns
from pipeline.stages.control import job_start
from tests.support.jobs import register
from tests.support.scripted_server import Reply, ScriptedServer, chat_chunks, sse
from tests.support.stage_server import TIMINGS, stage_server, words

EXTRACTION = ('{"items": [' + ", ".join(
    f'{{"type": "amount", "value": "${n},250.00", "source": "SMITH000001"}}' for n in range(1, 13)) + "]}")


def slow(text: str, pause_s: float) -> Reply:
    """A streamed answer, one SSE event per few characters, ``pause_s`` apart."""
    return Reply(pieces=[sse(chunk) for chunk in chat_chunks(words(text, 6), timings=TIMINGS)] + [sse("[DONE]")],
                 pause_s=pause_s)


def watch(job_id: int, user, until: str, timeout_s: float = 180) -> list[str]:
    async def session():
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/jobs/{job_id}/")
        communicator.scope["user"] = user
        connected, _ = await communicator.connect()
        assert connected
        messages: list[str] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while loop.time() < deadline:
            try:
                message = await communicator.receive_from(timeout=max(0.1, deadline - loop.time()))
            except asyncio.TimeoutError:
                break
            messages.append(message)
            if until in message:
                await communicator.disconnect()
                break
        # A receive that timed out has already stopped the consumer: nothing to disconnect.
        return messages

    return async_to_sync(session)()


def appended_text(messages: list[str], run_id: int) -> str:
    pieces = re.findall(rf'<pre id="stream-{run_id}"[^>]*hx-swap-oob="beforeend">(.*?)</pre>', "".join(messages),
                        re.DOTALL)
    return "".join(pieces)


def check_live_tokens(matter, attorney, processes, **worker_env):
    with ScriptedServer() as server:
        stage_server(server, {"extract": lambda call: slow(EXTRACTION, 0.03)})
        register(server.url)
        processes.worker(**worker_env)
        job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney)
        messages = watch(job.pk, attorney, until='data-job-status="done"')
    run = StageRun.objects.get(job=job)
    assert run.status == "done", run.error
    appended = appended_text(messages, run.pk)
    pieces = len(re.findall(r'hx-swap-oob="beforeend"', "".join(messages)))
    assert pieces >= 3  # the text arrived in pieces while it was generated, not at the end
    assert EXTRACTION.startswith(appended[:40].replace("&quot;", '"')) and len(appended) > 100
    return messages


@pytest.mark.django_db(transaction=True)
def test_streamed_tokens_reach_the_page_from_a_worker_process_without_redis(matter, attorney, record, processes):
    check_live_tokens(matter, attorney, processes)


@pytest.mark.django_db(transaction=True)
def test_streamed_tokens_reach_the_page_through_redis(matter, attorney, record, processes, redis_layer):
    check_live_tokens(matter, attorney, processes, **redis_layer)


@pytest.mark.django_db(transaction=True)
def test_only_members_of_the_matter_get_the_job_socket(matter, attorney, record, make_user):
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney,
                    enqueue=False)
    outsider = make_user("mallory", "attorney")

    async def session():
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/jobs/{job.pk}/")
        communicator.scope["user"] = outsider
        connected, _ = await communicator.connect()
        return connected

    assert async_to_sync(session)() is False


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_stage_is_recovered_by_another_worker(matter, attorney, record, processes):
    lease = {"LAWDESK_STAGE_LEASE_S": "2"}
    with ScriptedServer() as server:
        # The first attempt streams for ~20 s; the re-run answers at once.
        stage_server(server, {"extract": lambda call: slow(EXTRACTION, 0.15 if call == 1 else 0.001)})
        register(server.url)
        first = processes.worker(**lease)
        job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            run = StageRun.objects.get(job=job, attempt=1)
            if run.status == "running" and run.output:
                break
            time.sleep(0.1)
        assert run.status == "running"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        processes.worker(**lease)
        while time.monotonic() < deadline + 60:
            job.refresh_from_db()
            if job.status == "done":
                break
            time.sleep(0.2)
    attempts = list(StageRun.objects.filter(job=job).order_by("attempt"))
    assert [(a.attempt, a.status) for a in attempts] == [(1, "interrupted"), (2, "done")]
    assert attempts[0].output and "stopped renewing its lease" in attempts[0].error
    assert attempts[1].parsed["items"][0]["value"] == "$1,250.00"
    assert GeneratedDocument.objects.filter(matter=matter, origin="extraction").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_while_writing_a_section_resumes_at_that_section(matter, attorney, record, processes):
    lease = {"LAWDESK_STAGE_LEASE_S": "2"}
    facts = ("The lease was signed on March 3, 2021. SMITH000001. On April 5, 2021 the tenant wrote that the roof "
             "leaks and nobody has come to repair it. SMITH000002. The invoice for the repair is dated June 15, "
             "2021. SMITH000003.")
    with ScriptedServer() as server:
        # The second section's first attempt streams for ~10 s; every other answer comes at once.
        calls = stage_server(server, {"section": lambda call: slow(facts, 0.2 if call == 2 else 0.001)})
        register(server.url)
        first = processes.worker(**lease)
        job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs.", user=attorney)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            run = StageRun.objects.filter(job=job, stage="section", section="03-statement_of_facts").first()
            if run is not None and run.status == "running" and run.output:
                break
            time.sleep(0.1)
        assert run is not None and run.status == "running"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        processes.worker(**lease)
        while time.monotonic() < deadline + 90:
            job.refresh_from_db()
            if job.status in ("done", "failed"):
                break
            time.sleep(0.2)
    assert job.status == "done", job.reason
    sections = list(StageRun.objects.filter(job=job, stage="section").order_by("order", "attempt").values_list(
        "section", "attempt", "status"))
    assert sections == [("02-introduction", 1, "done"), ("03-statement_of_facts", 1, "interrupted"),
                        ("03-statement_of_facts", 2, "done"), ("04-argument", 1, "done"), ("05-conclusion", 1, "done")]
    assert calls.count("plan") == 1 and calls.count("section") == 5  # only the killed section was asked again
    assembled = job.draft.versions.order_by("number").first()
    assert {s["key"]: s.get("attempt") for s in assembled.provenance["sections"]}["03-statement_of_facts"] == 2
