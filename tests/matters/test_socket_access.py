"""Open WebSockets close within 5 s of logout, session expiry, a password change or removal from the matter; the
job page's socket as well as the matter page's. A member still logged in keeps the socket."""

import asyncio
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from matters.routing import websocket_urlpatterns
from matters.socket_access import ACCESS_CHECK_S, CLOSE_ACCESS_ENDED
from pipeline.routing import websocket_urlpatterns as job_websockets

CLOSE_WITHIN_S = 5

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_check_runs_well_inside_the_promised_delays():
    assert ACCESS_CHECK_S <= CLOSE_WITHIN_S - 1 and ACCESS_CHECK_S <= 30


def logged_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def socket_session(browser: Client, path: str, end_access) -> tuple[bool, float | None]:
    """Open ``path`` with the browser's session cookie, end access with ``end_access()`` (sync, in a thread), and
    return (closed with 4403, seconds it took)."""
    cookie = f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"

    async def next_output(communicator, until: float):
        loop = asyncio.get_running_loop()
        # receive_nothing never cancels the consumer (receive_output's timeout would).
        while loop.time() < until:
            if not await communicator.receive_nothing(timeout=0.05, interval=0.01):
                return await communicator.receive_output()
        return None

    async def session():
        app = AuthMiddlewareStack(URLRouter(job_websockets + websocket_urlpatterns))
        communicator = WebsocketCommunicator(app, path, headers=[(b"cookie", cookie.encode())])
        connected, _ = await communicator.connect()
        assert connected
        loop = asyncio.get_running_loop()
        await next_output(communicator, loop.time() + 0.5)  # the page's first rows, if any
        await database_sync_to_async(end_access)()
        started = loop.time()
        while (output := await next_output(communicator, started + CLOSE_WITHIN_S + 3)) is not None:
            if output["type"] == "websocket.close":
                await communicator.wait()
                return output.get("code") == CLOSE_ACCESS_ENDED, loop.time() - started
        await communicator.disconnect()
        return False, None

    return async_to_sync(session)()


@pytest.fixture
def progress_path(matter) -> str:
    return f"/ws/matters/{matter.pk}/progress/"


def test_logout_closes_the_matter_socket(attorney, progress_path):
    browser = logged_in(attorney)
    closed, took_s = socket_session(browser, progress_path, browser.logout)
    assert closed and took_s <= CLOSE_WITHIN_S


def test_session_expiry_closes_the_matter_socket(attorney, progress_path):
    browser = logged_in(attorney)
    key = browser.session.session_key

    def expire():
        Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))

    closed, took_s = socket_session(browser, progress_path, expire)
    assert closed and took_s <= CLOSE_WITHIN_S


def test_removal_from_the_matter_closes_the_matter_socket(attorney, make_user, matter, progress_path):
    colleague = make_user("carol", "assistant")
    matter.members.add(colleague)
    closed, took_s = socket_session(logged_in(colleague), progress_path,
                                       lambda: matter.members.remove(colleague))
    assert closed and took_s <= CLOSE_WITHIN_S


def test_password_change_elsewhere_closes_the_socket(attorney, progress_path):
    browser = logged_in(attorney)

    def change_password():
        attorney.set_password("a-different-long-phrase")
        attorney.save()

    closed, took_s = socket_session(browser, progress_path, change_password)
    assert closed and took_s <= CLOSE_WITHIN_S


def test_removal_from_the_matter_closes_the_job_socket(attorney, make_user, matter):
    from pipeline.stages.control import job_start

    colleague = make_user("carol", "assistant")
    matter.members.add(colleague)
    job = job_start(matter=matter, kind="summary", instructions="Summarise.", user=attorney, enqueue=False)
    closed, took_s = socket_session(logged_in(colleague), f"/ws/jobs/{job.pk}/",
                                           lambda: matter.members.remove(colleague))
    assert closed and took_s <= CLOSE_WITHIN_S


def test_logout_closes_the_job_socket(attorney, matter):
    from pipeline.stages.control import job_start

    job = job_start(matter=matter, kind="summary", instructions="Summarise.", user=attorney, enqueue=False)
    browser = logged_in(attorney)
    closed, took_s = socket_session(browser, f"/ws/jobs/{job.pk}/", browser.logout)
    assert closed and took_s <= CLOSE_WITHIN_S


def test_a_member_still_logged_in_keeps_the_socket(attorney, progress_path):
    closed, took_s = socket_session(logged_in(attorney), progress_path, lambda: None)
    assert not closed
