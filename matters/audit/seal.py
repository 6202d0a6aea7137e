"""What keeps the audit log honest against someone who can write to the database: a key and a checkpoint file,
both outside the database, in the data directory.

- The key (``DATA_DIR/secrets/audit-hmac.key``, 0600 in a 0700 folder) makes each entry's hash an HMAC-SHA256
  (RFC 2104): rewriting an entry and recomputing every later hash needs the key, not just the database.
- The checkpoint file (``DATA_DIR/secrets/audit-checkpoints.jsonl``, 0600, opened append-only) receives one line
  ``{"chain", "seq", "hash"}`` for each entry once its transaction commits, so deleting the last entries of a
  chain, or rebuilding it with the key, leaves a checkpoint the database no longer matches. At the upgrade that
  introduced the key, the last entry hashed the old, unkeyed way in each chain was checkpointed with
  ``"legacy_head": true`` (:func:`matters.audit.schemes.seal_existing_chains`).
"""

import hashlib
import hmac
import json
import os
from pathlib import Path

from django.conf import settings

KEY_BYTES = 32


def secrets_dir() -> Path:
    """Return ``DATA_DIR/secrets`` (created 0700)."""
    path = Path(settings.DATA_DIR) / "secrets"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def key_path() -> Path:
    return secrets_dir() / "audit-hmac.key"


def checkpoint_path() -> Path:
    return secrets_dir() / "audit-checkpoints.jsonl"


def audit_key() -> bytes:
    """Return the audit HMAC key, creating it (32 random bytes, hex, 0600) the first time.

    Two processes creating it at once cannot both win: the key is written to a private temporary file and linked
    into place, which fails if a key is already there; the loser reads the winner's key.
    """
    path = key_path()
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    temporary = path.with_name(f".audit-hmac.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as stream:
        stream.write(os.urandom(KEY_BYTES).hex())
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        temporary.unlink(missing_ok=True)
    return bytes.fromhex(path.read_text().strip())


def seal(canonical: bytes) -> str:
    """Return the HMAC-SHA256 (hex) of an entry's canonical JSON under the audit key."""
    return hmac.new(audit_key(), canonical, hashlib.sha256).hexdigest()


def checkpoint_append(*, chain: str, seq: int, hash: str, legacy_head: bool = False) -> None:
    """Append one checkpoint line. O_APPEND makes each short write land whole at the end, even from several
    processes; nothing in LawDesk ever rewrites or truncates the file. ``legacy_head`` marks the chain's last
    unkeyed entry, written once, when the chain was sealed at upgrade."""
    record = {"chain": chain, "seq": seq, "hash": hash}
    if legacy_head:
        record["legacy_head"] = True
    line = json.dumps(record, separators=(",", ":")) + "\n"
    descriptor = os.open(checkpoint_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(descriptor, line.encode("ascii"))
    finally:
        os.close(descriptor)


def _records() -> list[dict]:
    """Every well-formed line of the checkpoint file. A line that is not one (a torn write after a crash) is
    skipped."""
    try:
        lines = checkpoint_path().read_text().splitlines()
    except FileNotFoundError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
            records.append({**record, "chain": str(record["chain"]), "seq": int(record["seq"]),
                            "hash": str(record["hash"])})
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return records


def legacy_head_of(chain: str) -> int | None:
    """Return the seq of ``chain``'s last unkeyed entry as sealed at upgrade, or None if the chain had none (it
    was created after the upgrade, or was empty then). No unkeyed entry after this seq is ever genuine."""
    heads = [record["seq"] for record in _records() if record["chain"] == chain and record.get("legacy_head") is True]
    # Sealing happens once; should the line ever appear twice (a migration re-run), the earliest is the seal.
    return heads[0] if heads else None


def checkpoints_of(chain: str) -> dict[int, str]:
    """Return ``{seq: hash}`` of every checkpoint of ``chain``. A line that is not a checkpoint (a torn write
    after a crash) is skipped; a seq checkpointed twice with different hashes keeps both as a conflict marker
    (the hash ``"conflict"``), which no entry can match."""
    found: dict[int, str] = {}
    for record in _records():
        if record["chain"] != chain:
            continue
        seq, digest = record["seq"], record["hash"]
        found[seq] = digest if found.get(seq, digest) == digest else "conflict"
    return found
