"""A motion job in a real browser: started from the matter's jobs page, its first section streamed token by token
over the job page's WebSocket, every stage and section finished without a reload. Real ASGI server and db_worker
processes; the model server is a scripted llama-server whose drafter writes the first section slowly enough to
watch."""

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from pipeline.job_models import Job
from tests.support.browser import chromium, log_in
from tests.support.jobs import register
from tests.support.processes import free_port
from tests.support.scripted_server import Reply, ScriptedServer, chat_chunks, sse
from tests.support.stage_server import DEFAULT, TIMINGS, stage_server, words

# How long the ten stages may take in the worker: about 15 s alone, over 60 s while the other database's pass
# runs the live-model tests on the same two cores (scripts/test.sh runs both passes at once).
JOB_WAIT_MS = 240_000
DRAFT = DEFAULT["revise"] + " The landlord has not repaired the roof since the tenant's letter. " * 4


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_attorney_starts_a_motion_and_watches_it_being_written(matter, record, processes):
    slow_draft = Reply(pieces=[sse(c) for c in chat_chunks(words(DRAFT, 8), timings=TIMINGS)] + [sse("[DONE]")],
                       pause_s=0.08)
    with ScriptedServer() as server:
        stage_server(server, {"section": lambda call: slow_draft if call == 1 else DEFAULT["section"]})
        register(server.url)
        processes.worker()
        port = free_port()
        processes.server(port)
        base = f"http://127.0.0.1:{port}"
        # No database access below: Playwright's sync API runs an event loop in this thread.
        with sync_playwright() as p:
            watch_the_job(p, base, matter.pk)
    job = Job.objects.get()
    assert job.status == "done" and job.draft.versions.count() == 2


def watch_the_job(p, base: str, matter_id: int) -> None:
    """Log in, start a motion from the matter's Jobs page, watch its first section stream in and every stage end."""
    browser = chromium(p)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        log_in(page, base)
        page.goto(f"{base}/matters/{matter_id}/")
        page.get_by_role("link", name="Jobs").click()
        page.get_by_label("Job").select_option("motion")
        page.get_by_label("Instructions, in plain words").fill("Move to compel the landlord to repair the roof.")
        with page.expect_websocket(predicate=lambda ws: "/ws/jobs/" in ws.url):
            page.get_by_role("button", name="Start").click()
        expect(page).to_have_url(re.compile(rf"^{re.escape(base)}/jobs/\d+/$"))
        page.evaluate("window.__marker = 1")  # lost if the page reloads

        # The drafter's text grows on the page while it is generated.
        page.wait_for_selector('tr[data-stage="section"][data-status="running"]', timeout=JOB_WAIT_MS)
        draft_stream = page.locator('[data-stream-stage="section"] pre.stream').first
        lengths = []
        for _ in range(30):
            lengths.append(len(draft_stream.inner_text()))
            if len(set(lengths)) >= 3:
                break
            page.wait_for_timeout(150)
        assert len(set(lengths)) >= 3 and 0 < lengths[-1] < len(DRAFT)

        # Every stage ends done, shown without a reload, with the server's own decode speed.
        expect(page.locator("[data-job-status]")).to_have_attribute("data-job-status", "done", timeout=JOB_WAIT_MS)
        for stage in ("gate", "plan", "revise", "verify", "review", "extract"):
            expect(page.locator(f'tr[data-stage="{stage}"]')).to_have_attribute("data-status", "done")
        expect(page.locator('tr[data-stage="section"][data-status="done"]')).to_have_count(4)
        expect(page.locator('#job-sections [data-section-status="done"]')).to_have_count(4)
        expect(page.locator('tr[data-stage="section"]').first).to_contain_text("61.5")
        assert page.evaluate("window.__marker") == 1
        expect(draft_stream).to_have_text(DRAFT.strip())
        page.get_by_role("link", name="Review the draft").click()
        expect(page).to_have_url(re.compile(rf"/matters/{matter_id}/drafts/\d+/"))
    finally:
        browser.close()
