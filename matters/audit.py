"""The audit log service: append entries to a keyed hash chain and verify a chain.

Every feature that touches case material records here: logins, uploads, downloads, views of originals, status
changes, productions, jobs, waivers, approvals, admin changes and topology changes. Each entry's hash is an
HMAC under a key kept outside the database, and each committed entry's (seq, hash) is appended to a checkpoint
file outside the database (:mod:`matters.audit_seal`), so neither an edited, a deleted (last or middle) nor a
recomputed entry passes :func:`audit_verify`.
"""

import json
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from .audit_seal import checkpoint_append, checkpoints_of, seal
from .models import AuditEntry, Matter

GENESIS_HASH = "0" * 64
SYSTEM_CHAIN = "system"


def _chain_for(matter: Matter | None) -> str:
    return f"matter:{matter.pk}" if matter is not None else SYSTEM_CHAIN


def entry_canonical(entry: AuditEntry) -> bytes:
    """Return the entry's canonical JSON (UTF-8): every recorded field, ``prev_hash`` included, keys sorted."""
    payload = {
        "chain": entry.chain,
        "seq": entry.seq,
        "at": entry.at.isoformat(),
        "actor": entry.actor,
        "action": entry.action,
        "object_type": entry.object_type,
        "object_id": entry.object_id,
        "file_sha256": entry.file_sha256,
        "detail": entry.detail,
        "prev_hash": entry.prev_hash,
    }
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _entry_hash(entry: AuditEntry) -> str:
    """Return the HMAC-SHA256 (hex) of the entry's canonical JSON under the audit key."""
    return seal(entry_canonical(entry))


def audit_record(
    *,
    action: str,
    actor=None,
    matter: Matter | None = None,
    obj=None,
    file_sha256: str = "",
    detail: dict | None = None,
) -> AuditEntry:
    """Append one entry to the matter's chain (or the system chain) and return it.

    ``actor`` is a user or None for the system (the worker); ``obj`` any model instance the entry is about.
    Two writers racing for the same sequence number collide on the (chain, seq) unique constraint; the loser
    re-reads the chain head and tries again, so the chain never forks.
    """
    chain = _chain_for(matter)
    actor_name = getattr(actor, "get_username", lambda: "")() if actor is not None else "system"
    for _attempt in range(20):
        try:
            with transaction.atomic():
                head = AuditEntry.objects.filter(chain=chain).order_by("-seq").first()
                entry = AuditEntry(
                    chain=chain,
                    seq=(head.seq + 1) if head else 1,
                    matter=matter,
                    at=timezone.now(),
                    actor=actor_name,
                    action=action,
                    object_type=obj._meta.label_lower if obj is not None else "",
                    object_id=str(obj.pk) if obj is not None else "",
                    file_sha256=file_sha256,
                    detail=json.loads(json.dumps(detail or {})),
                    prev_hash=head.hash if head else GENESIS_HASH,
                )
                entry.hash = _entry_hash(entry)
                entry.save()
                # Only a committed entry is a checkpoint: one rolled back with its transaction never existed.
                transaction.on_commit(
                    lambda chain=chain, seq=entry.seq, digest=entry.hash: checkpoint_append(
                        chain=chain, seq=seq, hash=digest),
                    robust=True,
                )
                return entry
        except IntegrityError:
            continue
    raise RuntimeError(f"Could not append to audit chain {chain!r}: too many concurrent writers.")


@dataclass(frozen=True)
class ChainCheck:
    """Outcome of :func:`audit_verify`: ``ok``, entries checked, and the first broken entry's seq and why."""

    ok: bool
    entries: int
    head_hash: str
    broken_seq: int | None = None
    problem: str = ""


def audit_verify(*, matter: Matter | None) -> ChainCheck:
    """Recompute the chain of ``matter`` (or the system chain) and report the first thing that does not match.

    Checked in order: each entry's seq follows the previous one (a deleted middle entry leaves a gap), its
    ``prev_hash`` is the previous entry's hash, its own hash is the keyed hash of its content (an edited entry, or
    a chain recomputed without the key), and, from the checkpoint file, every checkpointed (seq, hash) is still in
    the database with that hash (deleted last entries; a chain rebuilt even with the key). ``problem`` names what
    was found.
    """
    chain = _chain_for(matter)
    checkpoints = checkpoints_of(chain)
    prev = GENESIS_HASH
    count = 0
    expected_seq = 1
    for entry in AuditEntry.objects.filter(chain=chain).order_by("seq").iterator():
        count += 1
        if entry.seq != expected_seq:
            return ChainCheck(False, count, prev, entry.seq,
                              f"sequence gap: expected entry {expected_seq}, found {entry.seq} (entries deleted)")
        if entry.prev_hash != prev:
            return ChainCheck(False, count, prev, entry.seq, "prev_hash does not match the previous entry")
        if _entry_hash(entry) != entry.hash:
            return ChainCheck(False, count, prev, entry.seq,
                              "entry content does not match its keyed hash (edited, or recomputed without the key)")
        checkpoint = checkpoints.get(entry.seq)
        if checkpoint is not None and checkpoint != entry.hash:
            return ChainCheck(False, count, prev, entry.seq,
                              "entry differs from its checkpoint outside the database (the chain was rewritten)")
        prev = entry.hash
        expected_seq += 1
    beyond = [seq for seq in checkpoints if seq >= expected_seq]
    if beyond:
        last = max(beyond)
        return ChainCheck(False, count, prev, expected_seq,
                          f"entries {expected_seq} to {last} are checkpointed outside the database but missing "
                          "from it (the chain was truncated)")
    return ChainCheck(True, count, prev)


def audit_record_once_per(*, window_s: int, action: str, actor, matter: Matter, obj, file_sha256: str = "",
                          detail: dict | None = None) -> AuditEntry | None:
    """Record like :func:`audit_record` unless the same actor already has an entry of ``action`` about ``obj`` in
    the matter's chain within the last ``window_s`` seconds; return the new entry or None.

    For reads that come in bursts (a page viewer fetching each page image): one entry per user, object and hour
    says who looked at what without drowning the log."""
    since = timezone.now() - timedelta(seconds=window_s)
    already = AuditEntry.objects.filter(
        chain=_chain_for(matter), action=action, actor=actor.get_username(), object_type=obj._meta.label_lower,
        object_id=str(obj.pk), at__gte=since,
    ).exists()
    if already:
        return None
    return audit_record(action=action, actor=actor, matter=matter, obj=obj, file_sha256=file_sha256, detail=detail)
