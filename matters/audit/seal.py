"""What keeps the audit log honest against someone who can write to the database: a key and a checkpoint file,
both outside the database, in the data directory.

- The key (``DATA_DIR/secrets/audit-hmac.key``, 0600 in a 0700 folder) makes each entry's hash an HMAC-SHA256
  (RFC 2104): rewriting an entry and recomputing every later hash needs the key, not just the database.
- The checkpoint file (``DATA_DIR/secrets/audit-checkpoints.jsonl``, 0600, opened append-only) receives one line
  ``{"chain", "seq", "hash"}`` for each entry once its transaction commits, so deleting the last entries of a
  chain, or rebuilding it with the key, leaves a checkpoint the database no longer matches. At the upgrade that
  introduced the key, the last entry hashed the old, unkeyed way in each chain was checkpointed with
  ``"legacy_head": true`` (:func:`matters.audit.schemes.seal_existing_chains`).
- Each line also carries ``"mac"``: the HMAC-SHA256 under the key of the line before it (its SHA-256) and its own
  record, so the file is a chain of its own. Removing lines from it (the checkpoints of deleted entries, or of a
  whole deleted chain), inserting or editing one, breaks the next line's mac, and every verification then fails
  (:func:`checkpoint_file_problem`). Lines written before the mac existed are read as before. What no file on the
  same machine can show is the removal of its own last lines together with the last entries they record when
  nothing was recorded after them; a copy of the file kept elsewhere (write-once storage) can.
"""

import fcntl
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
    descriptor = os.open(checkpoint_path(), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        # The lock makes reading the last line and appending after it one step among processes: two writers never
        # chain to the same line.
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        previous, whole = _last_line(descriptor)
        record["mac"] = _line_mac(previous, record, audit_key())
        # After a torn write (no newline at the end), the torn part stays a line of its own.
        line = ("" if whole else "\n") + json.dumps(record, separators=(",", ":")) + "\n"
        os.write(descriptor, line.encode("ascii"))
    finally:
        os.close(descriptor)


def _line_mac(previous_line: bytes, record: dict, key: bytes) -> str:
    """The mac of a checkpoint line: HMAC-SHA256 under the audit key of the previous line's SHA-256 and the
    record (without its mac) as sorted compact JSON."""
    body = json.dumps({k: v for k, v in record.items() if k != "mac"}, sort_keys=True, separators=(",", ":"))
    message = b"lawdesk-checkpoint\0" + hashlib.sha256(previous_line).digest() + body.encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _last_line(descriptor: int) -> tuple[bytes, bool]:
    """The file's last line (without its newline; b"" for an empty file) and whether the file ends with a
    newline. A line is under 300 bytes; 8 KiB from the end holds it."""
    size = os.fstat(descriptor).st_size
    if size == 0:
        return b"", True
    tail = os.pread(descriptor, min(size, 8192), max(0, size - 8192))
    whole = tail.endswith(b"\n")
    return tail.rstrip(b"\n").rsplit(b"\n", 1)[-1], whole


# The last answer of checkpoint_file_problem, by the file's (size, mtime, inode): a restore verifies every chain.
_FILE_CHECKED: dict[tuple, str] = {}


def checkpoint_file_problem() -> str:
    """Return why the checkpoint file cannot be trusted, or "" when each line with a mac follows the line before
    it under the key: the first line whose mac does not match (lines removed, inserted or changed before it), or
    a line without a mac after lines with one. Unreadable lines (a torn write after a crash) are kept as links of
    the chain but not checked themselves. A missing file is no problem here (each chain then has no checkpoint)."""
    path = checkpoint_path()
    try:
        status = path.stat()
    except FileNotFoundError:
        return ""
    key = audit_key()
    stamp = (str(path), status.st_size, status.st_mtime_ns, status.st_ino, key)
    if stamp in _FILE_CHECKED:
        return _FILE_CHECKED[stamp]
    problem = ""
    previous, sealed = b"", False
    for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not line:
            continue
        try:
            record = json.loads(line)
            mac = record.get("mac") if isinstance(record, dict) else None
        except ValueError:
            record = mac = None
        if record is not None and isinstance(record, dict):
            if mac is None and sealed:
                problem = (f"line {number} of the audit checkpoint file carries no mac after lines that do: a "
                           "line was added by hand")
                break
            if mac is not None:
                if not hmac.compare_digest(str(mac), _line_mac(previous, record, key)):
                    problem = (f"line {number} of the audit checkpoint file does not follow the line before it: "
                               "checkpoint lines were removed, inserted or changed there")
                    break
                sealed = True
        previous = line
    _FILE_CHECKED.clear()
    _FILE_CHECKED[stamp] = problem
    return problem


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
