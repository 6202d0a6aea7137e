"""Django's ASGI handler with its request threads kept from one request to the next.

Django runs a request's synchronous code (middleware, view, templates, its database queries) in a thread made for
that request: ``ASGIHandler`` enters asgiref's ``ThreadSensitiveContext``, a one-thread executor started for the
request and shut down after it. A thread's database connection is the thread's own, so every request also opened
a SQLite connection, read the schema and closed it again. Measured through uvicorn on the load bench's matter of
200,000 pages (one client, a page of the viewer, side by side): 24.8 ms of server CPU a request, 20.2 ms with the
thread kept, 17.6 ms with its SQLite connection kept as well (``CONN_MAX_AGE``, lawdesk.settings).

Here a request borrows a one-thread executor from its process's pool for its whole life and gives it back
afterwards: every synchronous step of one request still runs on one thread (what thread-sensitive code such as the
database connection needs), a thread serves one request at a time, and the thread and its connection outlive the
request. The pool grows on demand up to ``LAWDESK_WEB_THREADS`` threads a process; a request that finds them all
busy waits for one, as a request waits for a core.

A request cancelled while its view runs (the client went away) gives its executor back while the thread may
still be finishing the view: the executor has one thread, so the next request's work waits behind it and two
requests never run on one thread at once.
"""

import asyncio
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler


class RequestThreads:
    """A process's pool of one-thread executors, used from its event loop only (so it needs no lock).

    ``limit``: the most threads it starts (at least 1). ``borrow()`` gives an idle executor, a new one while
    fewer than ``limit`` exist, or waits for one given back with ``give_back``."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.started = 0
        self._idle: deque[ThreadPoolExecutor] = deque()
        self._waiting: deque[asyncio.Future] = deque()

    async def borrow(self) -> ThreadPoolExecutor:
        if self._idle:
            return self._idle.pop()  # the most recently used: its caches and connection are warm
        if self.started < self.limit:
            self.started += 1
            return ThreadPoolExecutor(max_workers=1, thread_name_prefix="lawdesk-request")
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed an executor just as the request was cancelled
                self.give_back(waiter.result())
            raise

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(executor)
                return
        self._idle.append(executor)


_threads: RequestThreads | None = None


def request_threads() -> RequestThreads:
    """This process's pool, made at its first request (after the settings are read)."""
    global _threads
    if _threads is None:
        _threads = RequestThreads(settings.LAWDESK_WEB_THREADS)
    return _threads


class KeptThreadsASGIHandler(ASGIHandler):
    """``ASGIHandler`` whose requests run in the pool's threads (see the module's docstring); ``threads``: a pool
    of its own instead of the process's.

    Its middleware chain is Django's synchronous one, entered once per request: the whole chain and the view run
    in one call on the request's thread. Django's asynchronous chain went back and forth between that thread and
    the event loop wherever a middleware that only runs synchronously (LawDesk's own) sat between ones that can
    run either way (Django's, django-htmx's, Axes'): five hand-overs a request. Each one needs the event loop to
    get the GIL among the process's busy request threads; under the load bench, request threads spent more time
    waiting on such a hand-over than running."""

    threads: RequestThreads | None = None

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        """What ``BaseHandler.get_response_async`` does, as one call of the synchronous ``get_response`` on the
        request's thread."""
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":  # as Django's own handler refuses
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        threads = self.threads or request_threads()
        executor = await threads.borrow()
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            threads.give_back(executor)

