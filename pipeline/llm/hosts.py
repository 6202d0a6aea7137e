"""Where evidence may go: the allowlist of model-server hosts (``LAWDESK_MODEL_HOSTS``), checked by the client
before any request.

Whoever installs LawDesk lists the hosts and ports that may receive evidence packets and API keys; an operator
editing the topology in the admin cannot widen it. Loopback is not allowed unless listed: any account on the
machine may listen on a loopback port, so ``127.0.0.1:8080`` is a destination like any other. The one exception
is LawDesk's own embedded servers, at the loopback addresses LawDesk itself started them on (``own``, recorded
outside the database by :mod:`pipeline.own_servers`).

An address is judged by the host and port the HTTP library will actually connect to: the URL is parsed by both
``urllib.parse`` and httpx, and an address they disagree on, or one with user info (``http://a@b/``), is refused,
so no spelling reaches a host the check did not see. Hosts are compared literally after lower-casing and dropping
a trailing dot (``2130706433`` or ``0x7f.1`` is not ``127.0.0.1`` here, even though a resolver may say so).
"""

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from .errors import ModelServerError

SETTING = "LAWDESK_MODEL_HOSTS"
DEFAULT_PORTS = {"http": 80, "https": 443}


class HostNotAllowed(ModelServerError):
    """The server's address is outside LAWDESK_MODEL_HOSTS: nothing was sent to it."""

    status = "refused"


def _host(value: str) -> str:
    return value.strip().strip("[]").rstrip(".").lower()


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HostAllowlist:
    """Allowed ``(host, port)`` pairs; a port of None allows every port of that host.

    Built from the setting's text by :meth:`parse`: comma- or space-separated entries ``host``, ``host:port``,
    ``[v6]`` or ``[v6]:port``. ``own`` holds the ``(host, port)`` of LawDesk's own embedded servers, allowed on
    top of the entries (:meth:`with_own`). An empty allowlist allows nothing.
    """

    entries: tuple[tuple[str, int | None], ...] = ()
    own: tuple[tuple[str, int], ...] = ()

    @classmethod
    def parse(cls, text: str) -> "HostAllowlist":
        """Return the allowlist of ``text``; ValueError naming the setting for an entry that is not host[:port]."""
        entries = []
        for raw in text.replace(",", " ").split():
            try:
                parts = urlsplit(f"//{raw}")
                host, port = parts.hostname, parts.port
            except ValueError as error:
                raise ValueError(f"{SETTING}: {raw!r} is not host or host:port ({error}).") from error
            if not host or parts.path or parts.username is not None:
                raise ValueError(f"{SETTING}: {raw!r} is not host or host:port.")
            entries.append((_host(host), port))
        return cls(tuple(entries))

    def with_own(self, addresses) -> "HostAllowlist":
        """Return this allowlist with LawDesk's own embedded servers' ``(host, port)`` pairs allowed as well."""
        return HostAllowlist(self.entries, tuple((_host(host), int(port)) for host, port in addresses))

    def allows(self, host: str, port: int) -> bool:
        host = _host(host)
        if (host, port) in self.own:
            return True
        return any(host == allowed and (allowed_port is None or allowed_port == port)
                   for allowed, allowed_port in self.entries)

    def loopback_without_port(self) -> list[str]:
        """The entries that allow every port of a loopback host (``127.0.0.1`` with no port): any account on the
        machine could listen on one of them. Shown as a warning on the topology page."""
        return [host for host, port in self.entries if port is None and _is_loopback(host)]

    def describe(self) -> str:
        listed = [f"{_bracket(host)}:{port}" if port else _bracket(host) for host, port in self.entries]
        own = [f"{_bracket(host)}:{port} (LawDesk's embedded server)" for host, port in self.own]
        return ", ".join([*listed, *own]) or "nothing"


def check_server_address(base_url: str, allowlist: HostAllowlist, *, label: str = "") -> None:
    """Raise :class:`HostNotAllowed` unless ``base_url`` is an http(s) address whose host and port the allowlist
    holds. The message names the server, the address and the setting, so the installer knows what to change."""
    who = f"model server {label} at {base_url}" if label else f"model server address {base_url}"
    try:
        parts = urlsplit(base_url)
        port = parts.port
        parsed = httpx.URL(base_url)
    except (ValueError, httpx.InvalidURL) as error:
        raise HostNotAllowed(f"The {who} is not a valid address ({error}); nothing was sent.") from error
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise HostNotAllowed(f"The {who} is not an http(s) address; nothing was sent.")
    if parts.username is not None or parsed.userinfo:
        raise HostNotAllowed(f"The {who} carries user information before the host; nothing was sent. "
                             "Write it as http://host:port.")
    host = _host(parts.hostname)
    port = port or DEFAULT_PORTS[parts.scheme]
    if _host(parsed.host) != host or (parsed.port or DEFAULT_PORTS[parsed.scheme]) != port:
        raise HostNotAllowed(f"The {who} reads as two different hosts depending on the parser; nothing was sent.")
    if not allowlist.allows(host, port):
        raise HostNotAllowed(
            f"The {who} is not an allowed destination for evidence: {host}:{port} is not in {SETTING} "
            f"(allowed: {allowlist.describe()}). Nothing was sent. Whoever installs LawDesk sets {SETTING} in "
            "the environment; it cannot be changed in the admin."
        )
