"""The installation's signing key when LAWDESK_SECRET_KEY is not set: generated once, kept in the data directory."""

import os
import secrets
from pathlib import Path


def secret_key_of(path: Path) -> str:
    """Return the key kept at ``path`` (a file of mode 0600), making it first if there is none.

    Several processes may load the settings at once on a new data directory (a server and two workers started
    together): each writes a whole key to a file of its own and links it into place, so one wins the link and every
    other reads the winner's complete key, never an empty or half-written one, and none fails to start.

    Raises OSError when the data directory cannot be written.
    """
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_urlsafe(50)
    own = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(own, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(key)
        try:
            os.link(own, path)
        except FileExistsError:  # another process made it after this one looked
            return path.read_text().strip()
    finally:
        own.unlink(missing_ok=True)
    return key
