"""What a job offers, from one answer (pipeline.stages.control.job_actions): the job page shows it, the job's
socket sends it again when a stage ends (a failure takes "Cancel" away and brings "Run the stage again" without
a reload), and the continue form takes its words from the stage that stopped the job."""

import asyncio
import json
import re

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.urls import reverse

from matters.services import matter_add_member
from pipeline.routing import websocket_urlpatterns
from pipeline.stages.control import job_actions, job_continue, job_start
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

from .test_stream_degenerate import LOOPING, streamed

SECRET = "a" * 32  # a CSRF cookie's secret, as the browser holds it


def actions_block(message: str) -> str:
    found = re.search(r'<section id="job-actions".*?</section>', message, re.DOTALL)
    return found.group(0) if found else ""


@pytest.mark.django_db(transaction=True)
def test_a_failure_reaches_the_open_page_with_the_retry_and_without_cancel(matter, record, server, attorney):
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                    enqueue=False)
    stage_server(server, {"summarize": lambda call: streamed(LOOPING)})
    register(server.url)

    async def session() -> tuple[str, str]:
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/jobs/{job.pk}/")
        communicator.scope["user"] = attorney
        communicator.scope["cookies"] = {"csrftoken": SECRET}
        connected, _ = await communicator.connect()
        assert connected
        first = actions_block(await communicator.receive_from(timeout=10))
        await database_sync_to_async(run_all)(job)  # the stage fails as degenerate, as in a worker
        loop = asyncio.get_running_loop()
        deadline, after = loop.time() + 30, ""
        while not after and loop.time() < deadline:
            after = actions_block(await communicator.receive_from(timeout=max(0.1, deadline - loop.time())))
        await communicator.disconnect()
        return first, after

    first, after = async_to_sync(session)()
    assert 'hx-swap-oob="true"' in first and "Cancel</button>" in first and "Run the stage again" not in first
    assert 'hx-swap-oob="true"' in after and "Cancel</button>" not in after and "Move to the front" not in after
    assert "Run the stage again" in after and "because the last answer repeated itself" in after
    # The forms sent over the socket carry the browser's CSRF secret, which Django accepts as the form's token.
    assert f'name="csrfmiddlewaretoken" value="{SECRET}"' in after


@pytest.mark.django_db(transaction=True)
def test_a_posted_form_with_the_cookies_secret_as_token_is_accepted(matter, record, server, attorney):
    from django.test import Client

    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                    enqueue=False)
    stage_server(server, {"summarize": lambda call: streamed(LOOPING)})
    register(server.url)
    run_all(job)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(attorney)
    browser.cookies["csrftoken"] = SECRET
    response = browser.post(reverse("pipeline:stage_retry", args=[job.pk]), {"csrfmiddlewaretoken": SECRET})
    assert response.status_code == 302
    assert job.stage_runs.filter(attempt=2).exists()


@pytest.mark.django_db
def test_the_continue_form_takes_the_stopping_stages_words_and_only_an_attorney_sees_it(
        matter, record, server, attorney, make_user, client):
    stage_server(server, {"gate": json.dumps({"has_grounds": False, "reasons": [], "cited_pages": []})})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs.", user=attorney,
                    enqueue=False)
    run_all(job)
    assert job.status == "stopped"
    assistant, operator = make_user("bob", "assistant"), make_user("olga", "operator")
    for user in (assistant, operator):
        matter_add_member(matter=matter, user=user, added_by=attorney)

    assert job_actions(job, attorney).continue_label == "The gate found no grounds."
    assert job_actions(job, assistant).continue_label == ""  # an attorney's decision
    assert not job_actions(job, operator).any  # a member who may not control jobs is offered nothing
    assert not job_actions(job, attorney).retry and not job_actions(job, attorney).cancel
    client.force_login(attorney)
    page = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    assert "The gate found no grounds. Continue anyway, because:" in page
    client.force_login(assistant)
    assert "Continue anyway" not in client.get(reverse("pipeline:job", args=[job.pk])).content.decode()

    job_continue(job=job, user=attorney, reason="The letter of May 2 is grounds enough.", enqueue=False)
    assert job_actions(job, attorney).continue_label == "" and job_actions(job, attorney).cancel
