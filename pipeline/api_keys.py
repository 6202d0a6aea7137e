"""Model-server API keys, kept out of the database: one file per server under ``DATA_DIR/secrets/`` (directory
0700, file 0600). Nothing shows a key back; the admin only says whether one is set, and launch lines name the
environment variable the key is read from instead of the key."""

import os
from pathlib import Path

from django.conf import settings


def key_path(server) -> Path:
    """Return the key file of a saved server (``model-server-<id>.key``)."""
    if not server.pk:
        raise ValueError("a server gets an API key once it is saved")
    return Path(settings.DATA_DIR) / "secrets" / f"model-server-{server.pk}.key"


def key_write(*, server, key: str) -> None:
    """Store ``key`` for ``server``, replacing any earlier one; the file is created 0600, never world-readable."""
    path = key_path(server)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as stream:
        stream.write(key.strip())
    os.replace(temporary, path)


def key_read(server) -> str:
    """Return the key of ``server``, or "" when none is set."""
    if not server.pk:
        return ""
    try:
        return key_path(server).read_text().strip()
    except FileNotFoundError:
        return ""


def key_clear(server) -> None:
    """Remove the key of ``server`` if there is one."""
    if server.pk:
        key_path(server).unlink(missing_ok=True)
