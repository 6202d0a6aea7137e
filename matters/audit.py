"""The audit log service: append entries to a hash chain and verify a chain.

Every feature that touches case material records here: logins, uploads, downloads, views of originals, status
changes, and later productions, jobs, waivers and approvals.
"""

import hashlib
import json
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from .models import AuditEntry, Matter

GENESIS_HASH = "0" * 64
SYSTEM_CHAIN = "system"


def _chain_for(matter: Matter | None) -> str:
    return f"matter:{matter.pk}" if matter is not None else SYSTEM_CHAIN


def _entry_hash(entry: AuditEntry) -> str:
    """Return the SHA-256 (hex) of the entry's canonical JSON: every recorded field, ``prev_hash`` included."""
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
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


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
    """Recompute the chain of ``matter`` (or the system chain) and report the first entry that does not match."""
    prev = GENESIS_HASH
    count = 0
    expected_seq = 1
    for entry in AuditEntry.objects.filter(chain=_chain_for(matter)).order_by("seq").iterator():
        count += 1
        if entry.seq != expected_seq:
            return ChainCheck(False, count, prev, entry.seq, f"sequence gap: expected {expected_seq}")
        if entry.prev_hash != prev:
            return ChainCheck(False, count, prev, entry.seq, "prev_hash does not match the previous entry")
        if _entry_hash(entry) != entry.hash:
            return ChainCheck(False, count, prev, entry.seq, "entry content does not match its hash")
        prev = entry.hash
        expected_seq += 1
    return ChainCheck(True, count, prev)
