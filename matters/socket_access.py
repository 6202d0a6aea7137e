"""Access that ends, ends on open WebSockets too: a socket re-checks, every ``ACCESS_CHECK_S`` seconds, that its
user is still logged in through a live session and still a member of what the socket shows, and closes (code
4403) the moment either stops being true.

What ends access, and how soon a socket learns it (at most ``ACCESS_CHECK_S`` = 2 s, well inside the 5 s the
pages promise, and far more often than the 30 s floor): logging out (the session is deleted), the session
expiring (``LAWDESK_SESSION_IDLE_S`` of inactivity), the password changing (the session's auth hash no longer
matches), the account being deactivated, and removal from the matter.
"""

import asyncio
import contextlib
from importlib import import_module

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils.crypto import constant_time_compare

ACCESS_CHECK_S = 2.0
CLOSE_ACCESS_ENDED = 4403


def session_still_valid(scope) -> bool:
    """True when the scope's user is active and its session (if the socket came with one, as every browser socket
    does through AuthMiddlewareStack) still exists, has not expired, and still names this user with the current
    password hash (django.contrib.auth.get_user's own test)."""
    user = scope.get("user")
    if user is None or not user.is_authenticated:
        return False
    fresh = get_user_model()._default_manager.filter(pk=user.pk, is_active=True).first()
    if fresh is None:
        return False
    session = scope.get("session")
    if session is None:
        return True  # a socket built without sessions (tests of the consumer alone): the user checks still apply
    key = session.session_key
    if not key:
        return False
    # A fresh store reads the database row (or cache) again; load() returns {} for a deleted or expired session.
    data = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key).load()
    if str(data.get(SESSION_KEY, "")) != str(fresh.pk) or not data.get(BACKEND_SESSION_KEY):
        return False
    stored_hash = data.get(HASH_SESSION_KEY, "")
    return bool(stored_hash) and constant_time_compare(stored_hash, fresh.get_session_auth_hash())


class AccessCheckedConsumer(AsyncWebsocketConsumer):
    """A consumer whose access is checked again while it is open. Subclasses implement :meth:`still_member`
    (synchronous, may query) and call :meth:`start_access_checks` once accepted."""

    def still_member(self) -> bool:
        raise NotImplementedError

    def _allowed(self) -> bool:
        return session_still_valid(self.scope) and self.still_member()

    async def start_access_checks(self) -> None:
        self.access_checker = asyncio.create_task(self._check_access())

    async def _check_access(self) -> None:
        while True:
            await asyncio.sleep(ACCESS_CHECK_S)
            if not await database_sync_to_async(self._allowed)():
                await self.access_ended()
                return

    async def access_ended(self) -> None:
        """Stop every sender of this socket, then close it: nothing more is sent once access has ended."""
        self.closed_for_access = True
        for name in ("poller",):
            task = getattr(self, name, None)
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        await self.close(code=CLOSE_ACCESS_ENDED)

    async def send(self, text_data=None, bytes_data=None, close=False) -> None:
        if getattr(self, "closed_for_access", False):
            return
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    async def stop_access_checks(self) -> None:
        task = getattr(self, "access_checker", None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
