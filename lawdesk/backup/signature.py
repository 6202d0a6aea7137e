"""The backup manifest's signature: an HMAC-SHA256 (RFC 2104) under a key the office keeps, ``LAWDESK_BACKUP_KEY``,
which no backup holds.

The manifest names every file of a snapshot by SHA-256 and size and holds the database dump's SHA-256, so the
whole snapshot rests on it; a backup also carries the audit key in the clear (``secrets/audit-hmac.key``), so a
tamperer with the backup alone could rewrite a member list or a page's text and image, recompute every hash and
even the audit chains. The signature covers the manifest's every field (as sorted compact JSON, the ``signature``
field itself left out), so no such change restores. Whoever restores must give the same key; a manifest without
a signature (made before backups were signed, or with it removed) is refused, since it cannot be told from a
forged one.

What it does not cover: someone who holds the key as well as the backup. Keep the key apart from the backups
(a password manager, a sealed envelope in the office safe), never in the data directory or beside ``DEST``.
"""

import hashlib
import hmac
import json

from django.conf import settings

from .store import BackupError

SETTING = "LAWDESK_BACKUP_KEY"
MIN_KEY_CHARS = 32
ALGORITHM = "hmac-sha256"


def backup_key() -> bytes:
    """Return ``LAWDESK_BACKUP_KEY`` as bytes. Raises BackupError naming the setting when it is unset or shorter
    than MIN_KEY_CHARS characters."""
    key = (getattr(settings, SETTING, "") or "").strip()
    if not key:
        raise BackupError(f"{SETTING} is not set: a backup is signed, and a restore checked, with a key the office "
                          "keeps apart from the backups. Set it (at least 32 random characters, e.g. from `openssl "
                          "rand -hex 32`) in LawDesk's environment and keep a copy somewhere safe; nothing was "
                          "written.")
    if len(key) < MIN_KEY_CHARS:
        raise BackupError(f"{SETTING} has {len(key)} characters; it needs at least {MIN_KEY_CHARS} (e.g. `openssl "
                          "rand -hex 32`). Nothing was written.")
    return key.encode("utf-8")


def _mac(manifest: dict, key: bytes) -> str:
    body = json.dumps({k: v for k, v in manifest.items() if k != "signature"}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key, b"lawdesk-backup-manifest\0" + body.encode("utf-8"), hashlib.sha256).hexdigest()


def manifest_sign(manifest: dict) -> dict:
    """Return ``manifest`` with its ``signature``: ``{"alg": "hmac-sha256", "mac": hex}``."""
    return {**manifest, "signature": {"alg": ALGORITHM, "mac": _mac(manifest, backup_key())}}


def manifest_check(manifest: dict, name: str) -> None:
    """Raise BackupError, naming snapshot ``name``, unless ``manifest`` carries a signature made with
    ``LAWDESK_BACKUP_KEY`` over exactly its content, and naming itself ``name`` (the snapshot's folder)."""
    signature = manifest.get("signature")
    if not isinstance(signature, dict) or signature.get("alg") != ALGORITHM or not isinstance(
            signature.get("mac"), str):
        raise BackupError(f"Snapshot {name} carries no signature: it was made before backups were signed, or its "
                          "signature was removed, and it cannot be told from a forged one. Nothing was restored.")
    if not hmac.compare_digest(signature["mac"], _mac(manifest, backup_key())):
        raise BackupError(f"Snapshot {name}: its manifest does not match its signature. It was changed after the "
                          f"backup was made (a file, a hash, the database dump), or signed with another {SETTING}. "
                          "Nothing was restored; keep the backup and investigate before trusting it.")
    # The name is signed; the folder's is not. An older signed snapshot copied under a newer name would otherwise
    # be restored as the newest.
    if manifest.get("name") != name:
        raise BackupError(f"Snapshot {name} holds the signed manifest of snapshot {manifest.get('name')!r}: it was "
                          "copied or renamed. Nothing was restored; restore the snapshot by its own name.")
