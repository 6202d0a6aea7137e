"""LawDesk's own embedded servers: the loopback addresses LawDesk started them on, the only destinations allowed
outside ``LAWDESK_MODEL_HOSTS`` (:mod:`pipeline.llm.hosts`).

The addresses live in ``DATA_DIR/secrets/embedded-servers.json`` (0600 in a 0700 folder), written by
:func:`pipeline.servers.register_embedded` when ``make run`` starts a server and emptied when it stops it; never in
the database, so no form, admin page or database write can make an address "LawDesk's own". A ModelServer row
moved to another port, even the embedded one's row, is judged by the allowlist like any other.

Shape: ``{"<server name>": {"url": "http://127.0.0.1:<port>", "pid": <process id>}}``. An address counts only
while the process LawDesk started for it still runs (the same process id, its command line naming the port): a
server that crashed frees its port for any local account, and evidence must not follow. A file that is missing or
unreadable allows nothing extra (the embedded server is then refused with the allowlist's reason, and ``make run``
writes it again).
"""

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings

from matters.audit.seal import secrets_dir

from .llm.hosts import HostAllowlist


def own_servers_path() -> Path:
    return secrets_dir() / "embedded-servers.json"


def _records() -> dict[str, dict]:
    try:
        recorded = json.loads(own_servers_path().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(recorded, dict):
        return {}
    return {name: entry for name, entry in recorded.items()
            if isinstance(name, str) and isinstance(entry, dict) and isinstance(entry.get("url"), str)
            and isinstance(entry.get("pid"), int)}


def _running(pid: int, url: str) -> bool:
    """Whether process ``pid`` still runs and is the server started for ``url`` (its command line names the
    port; a process id reused by another program does not)."""
    try:
        port = urlsplit(url).port
        arguments = Path(f"/proc/{int(pid)}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return False
    return port is not None and str(port).encode() in arguments


def own_servers_read() -> dict[str, str]:
    """Return ``{server name: base URL}`` of the embedded servers LawDesk started that still run; {} when none is
    recorded or the file cannot be read as that shape."""
    return {name: entry["url"] for name, entry in _records().items() if _running(entry["pid"], entry["url"])}


def own_addresses() -> list[tuple[str, int]]:
    """The ``(host, port)`` pairs of :func:`own_servers_read`, for :meth:`HostAllowlist.with_own`."""
    pairs = []
    for url in own_servers_read().values():
        try:
            parts = urlsplit(url)
            if parts.hostname and parts.port:
                pairs.append((parts.hostname, parts.port))
        except ValueError:
            continue
    return pairs


def model_hosts_allowlist() -> HostAllowlist:
    """Where evidence may go now: ``LAWDESK_MODEL_HOSTS`` and LawDesk's own embedded servers. Raises ValueError
    naming the setting for an entry that is not host[:port]."""
    return HostAllowlist.parse(settings.LAWDESK_MODEL_HOSTS).with_own(own_addresses())


def _write(recorded: dict[str, str]) -> None:
    path = own_servers_path()
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(recorded, file)
    os.replace(temporary, path)


def own_server_record(*, name: str, base_url: str, pid: int) -> None:
    """Record that LawDesk itself started server ``name`` at ``base_url`` (a loopback address it chose) as
    process ``pid``."""
    _write({**_records(), name: {"url": base_url, "pid": int(pid)}})


def own_server_forget(*, name: str) -> None:
    """Forget server ``name``'s address (LawDesk stopped it): its port may be taken by anyone afterwards."""
    recorded = _records()
    if recorded.pop(name, None) is not None:
        _write(recorded)
