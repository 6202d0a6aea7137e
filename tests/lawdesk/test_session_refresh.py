"""Sessions: an idle timeout that writes the session row about once a minute, not on every page view."""

import datetime

import pytest
import time_machine
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _session_writes(queries) -> list[str]:
    return [q["sql"] for q in queries if "django_session" in q["sql"]
            and q["sql"].lstrip().upper().startswith(("UPDATE", "INSERT", "DELETE"))]


def _log_in(client) -> Session:
    response = client.post(reverse("login"), {"username": "alice", "password": "correct-horse-battery"})
    assert response.status_code == 302
    return Session.objects.get(session_key=client.session.session_key)


def test_a_plain_page_view_writes_no_session_row(client, attorney):
    with time_machine.travel(datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC), tick=False):
        _log_in(client)
        client.get(reverse("matters:list"))  # the first request after login stores its refresh time
        with CaptureQueriesContext(connection) as queries:
            assert client.get(reverse("matters:list")).status_code == 200
    assert _session_writes(queries.captured_queries) == []


def test_a_request_after_the_refresh_interval_pushes_the_expiry_forward(client, attorney):
    start = datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC)
    with time_machine.travel(start, tick=False) as clock:
        first_expiry = _log_in(client).expire_date
        clock.shift(settings.LAWDESK_SESSION_REFRESH_S + 1)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(reverse("matters:list")).status_code == 200
    assert _session_writes(queries.captured_queries)
    expiry = Session.objects.get(session_key=client.session.session_key).expire_date
    assert expiry - first_expiry == datetime.timedelta(seconds=settings.LAWDESK_SESSION_REFRESH_S + 1)


def test_the_login_page_creates_no_session_for_a_visitor(client, db):
    client.get(reverse("login"))
    assert Session.objects.count() == 0
