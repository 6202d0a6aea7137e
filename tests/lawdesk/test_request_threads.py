"""The web server's request threads: a request's synchronous steps run on one thread, kept for the next request
with its database connection; requests at the same time run on threads of their own; the pool never starts more
threads than its limit, and a request that gave up waiting for one takes none with it."""

import asyncio
import threading

import httpx
import pytest
from asgiref.sync import AsyncToSync, sync_to_async
from django.db import connection
from django.http import HttpResponse

from lawdesk.request_threads import KeptThreadsASGIHandler, RequestThreads

pytestmark = pytest.mark.django_db(transaction=True)


class Recording(KeptThreadsASGIHandler):
    """Answers every request from a view that notes its thread and its database connection, and, given a barrier,
    waits there for the other requests before it answers."""

    def __init__(self, threads: RequestThreads, barrier: threading.Barrier | None = None) -> None:
        super().__init__()
        self.threads = threads
        self.barrier = barrier
        self.seen: list[tuple[int, int]] = []

    def view(self, request) -> HttpResponse:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        self.seen.append((threading.get_ident(), id(connection.connection)))
        if self.barrier:
            self.barrier.wait(timeout=10)
        return HttpResponse("ok")

    async def get_response_async(self, request):
        # As Django runs the middleware and a synchronous view: thread-sensitive, in the request's context.
        return await sync_to_async(self.view)(request)


async def _get(handler, count: int) -> list[int]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(handler), base_url="http://127.0.0.1") as client:
        responses = await asyncio.gather(*(client.get("/anything/") for _ in range(count)))
    return [response.status_code for response in responses]


def test_one_request_after_another_runs_on_the_same_thread_and_connection():
    handler = Recording(RequestThreads(limit=8))
    for _ in range(3):
        assert asyncio.run(_get(handler, 1)) == [200]
    threads = {thread for thread, _ in handler.seen}
    assert len(threads) == 1 and threading.get_ident() not in threads
    assert handler.threads.started == 1
    if connection.vendor == "sqlite":  # PostgreSQL hands each request a connection from its pool instead
        assert len({connection_id for _, connection_id in handler.seen}) == 1


def test_requests_at_the_same_time_run_on_threads_of_their_own():
    # Each view waits at the barrier for the other two: on a shared thread they would wait for ever.
    handler = Recording(RequestThreads(limit=8), threading.Barrier(3))
    assert asyncio.run(_get(handler, 3)) == [200, 200, 200]
    assert len({thread for thread, _ in handler.seen}) == 3
    assert handler.threads.started == 3


def test_a_request_waits_for_a_thread_when_all_are_busy():
    handler = Recording(RequestThreads(limit=2))
    assert asyncio.run(_get(handler, 6)) == [200] * 6
    assert handler.threads.started == 2
    assert len({thread for thread, _ in handler.seen}) == 2


def test_a_request_cancelled_while_waiting_takes_no_thread_with_it():
    async def scenario() -> RequestThreads:
        threads = RequestThreads(limit=1)
        held = await threads.borrow()
        waiting = asyncio.create_task(threads.borrow())
        await asyncio.sleep(0)
        waiting.cancel()  # the client went away while its request waited
        threads.give_back(held)
        with pytest.raises(asyncio.CancelledError):
            await waiting
        again = await asyncio.wait_for(threads.borrow(), timeout=5)
        assert again is held
        held.shutdown()
        return threads

    assert asyncio.run(scenario()).started == 1


def test_a_request_goes_through_the_whole_middleware_chain_and_its_view_without_leaving_its_thread(monkeypatch):
    """The project's middleware (settings.MIDDLEWARE) on a real page: nothing in the chain goes back to the event
    loop (asgiref's AsyncToSync) before the response is made."""
    back_to_the_loop = []
    original = AsyncToSync.__call__

    def counted(self, *args, **kwargs):
        back_to_the_loop.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncToSync, "__call__", counted)
    handler = KeptThreadsASGIHandler()
    handler.threads = RequestThreads(limit=1)

    async def login_page():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(handler), base_url="http://127.0.0.1") as client:
            return await client.get("/login/")

    response = asyncio.run(login_page())
    assert response.status_code == 200 and "csrftoken" in response.cookies  # the whole chain ran
    assert back_to_the_loop == []
