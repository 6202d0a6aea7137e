"""Login: required everywhere, sessions expire after inactivity, repeated failures lock the account out."""

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_repeated_failed_logins_lock_out_even_the_right_password(client, attorney):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = client.post(reverse("login"), {"username": "alice", "password": "guess"})
    assert response.status_code in (403, 429)
    response = client.post(reverse("login"), {"username": "alice", "password": "correct-horse-battery"})
    assert response.status_code in (403, 429)
    assert "Too many failed logins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_right_password_logs_in_and_session_expires_after_inactivity(client, attorney):
    response = client.post(reverse("login"), {"username": "alice", "password": "correct-horse-battery"})
    assert response.status_code == 302
    assert client.session.get_expiry_age() == settings.SESSION_COOKIE_AGE
    # a request pushes the expiry forward (at most once a minute, tests/lawdesk/test_session_refresh.py)
    assert "lawdesk.session_refresh.SessionRefreshMiddleware" in settings.MIDDLEWARE
    assert client.get(reverse("matters:list")).status_code == 200
