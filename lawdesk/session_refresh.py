"""An idle timeout for sessions that costs a database write once a minute, not on every request.

Django's ``SESSION_SAVE_EVERY_REQUEST`` rewrites the session row on every request to push its expiry forward: with
twenty people paging through exhibits that is a write per page view, which on SQLite waits for the one write lock
held by the workers storing OCR text. This middleware marks the session modified only when its last refresh is at
least ``LAWDESK_SESSION_REFRESH_S`` (60 s) old, so Django's ``SessionMiddleware`` saves it then and sends a new
cookie expiry; other requests read the session and write nothing. A session therefore ends between
``SESSION_COOKIE_AGE - LAWDESK_SESSION_REFRESH_S`` and ``SESSION_COOKIE_AGE`` seconds after the last request.
"""

import time

from django.conf import settings

REFRESHED_AT_KEY = "_lawdesk_refreshed_at"


class SessionRefreshMiddleware:
    """Place it right after ``SessionMiddleware`` (so it sees the response first). Anonymous empty sessions are
    left alone: storing the time in one would create a session row for every visitor of the login page."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        session = getattr(request, "session", None)
        if session is None or session.is_empty():
            return response
        now = int(time.time())
        refreshed_at = session.get(REFRESHED_AT_KEY, 0)
        if not isinstance(refreshed_at, int) or now - refreshed_at >= settings.LAWDESK_SESSION_REFRESH_S:
            session[REFRESHED_AT_KEY] = now  # marks it modified: SessionMiddleware saves it and resets the expiry
        return response
