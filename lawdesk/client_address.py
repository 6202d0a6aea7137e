"""The one client address LawDesk uses for login lockouts and the login audit."""

from django.http import HttpRequest


def client_address(request: HttpRequest | None) -> str:
    """Return the request's peer address (``REMOTE_ADDR``), or "" without a request.

    Never a request header: X-Forwarded-For is applied by the ASGI server, and only for a peer listed in
    LAWDESK_TRUSTED_PROXIES (:func:`lawdesk.run.asgi_server_command`), so a client cannot choose the address its
    failed logins are counted against."""
    if request is None:
        return ""
    return request.META.get("REMOTE_ADDR", "")
