"""X-Forwarded-For is believed only from LAWDESK_TRUSTED_PROXIES: otherwise a client choosing a new address for
each guess would never be locked out, and the login audit would record addresses of its choosing."""

import re

import httpx
import pytest
from django.conf import settings

from matters.models import AuditEntry
from tests.support.processes import free_port

pytestmark = pytest.mark.django_db(transaction=True)


def try_logins(base: str, attempts: list[tuple[str, str]]) -> list[int]:
    """Post each (password, X-Forwarded-For) to the login form like a browser; return the status codes."""
    codes = []
    with httpx.Client(base_url=base, timeout=30) as browser:
        for password, forwarded in attempts:
            page = browser.get("/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
            response = browser.post("/login/", data={"username": "alice", "password": password,
                                                     "csrfmiddlewaretoken": token},
                                    headers={"X-Forwarded-For": forwarded, "Referer": f"{base}/login/"})
            codes.append(response.status_code)
    return codes


def guesses(count: int) -> list[tuple[str, str]]:
    return [("wrong guess", f"203.0.113.{n + 1}") for n in range(count)]


def test_forwarded_for_from_an_untrusted_peer_changes_nothing(processes, attorney):
    port = free_port()
    processes.server(port)  # LAWDESK_TRUSTED_PROXIES is empty by default
    limit = settings.AXES_FAILURE_LIMIT
    codes = try_logins(f"http://127.0.0.1:{port}", guesses(limit + 2) + [("correct-horse-battery", "198.51.100.9")])
    assert codes[-1] in (403, 429)  # locked out, though every guess claimed another address
    failed = AuditEntry.objects.filter(action="login_failed")
    assert failed.count() >= limit and {entry.detail["address"] for entry in failed} == {"127.0.0.1"}


def test_forwarded_for_from_a_trusted_proxy_is_the_client_address(processes, attorney, settings):
    settings.LAWDESK_TRUSTED_PROXIES = "127.0.0.1"
    port = free_port()
    processes.server(port, LAWDESK_TRUSTED_PROXIES="127.0.0.1")
    try_logins(f"http://127.0.0.1:{port}", guesses(2))
    addresses = [entry.detail["address"] for entry in AuditEntry.objects.filter(action="login_failed").order_by("seq")]
    assert addresses == ["203.0.113.1", "203.0.113.2"]
