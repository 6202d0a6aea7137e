"""The audit log service: append entries to a keyed hash chain and verify a chain.

Every feature that touches case material records here: logins, uploads, downloads, views of originals, status
changes, productions, jobs, waivers, approvals, admin changes and topology changes. Each entry's hash is an
HMAC under a key kept outside the database, and each committed entry's (seq, hash) is appended to a checkpoint
file outside the database (:mod:`matters.audit.seal`), so neither an edited, a deleted (last or middle) nor a
recomputed entry passes :func:`audit_verify`. Entries written before the key existed keep their unkeyed hashes
(``scheme='sha256'``, :mod:`matters.audit.schemes`); they are verified the old way, and only as the leading part of
a chain sealed at upgrade.
"""

import json
import os
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from matters.audit.schemes import (
    DETAIL_SALT_BYTES,
    SCHEME_KEYED,
    SCHEME_SEALED,
    SCHEME_UNKEYED,
    detail_digest,
    entry_canonical,
    unkeyed_hash,
)
from matters.audit.seal import checkpoint_append, checkpoint_file_problem, checkpoints_of, legacy_head_of, seal
from matters.models import AuditEntry, Matter

GENESIS_HASH = "0" * 64
SYSTEM_CHAIN = "system"
ERASE_ACTION = "audit.erase"
# The first key of the PostgreSQL advisory locks that queue a chain's writers (the second is the chain's hashtext);
# any constant other parts of LawDesk do not use.
CHAIN_LOCK_CLASS = 0x1A0D


def _chain_for(matter: Matter | None) -> str:
    return f"matter:{matter.pk}" if matter is not None else SYSTEM_CHAIN


def _queue_for_chain(chain: str) -> None:
    """Wait, inside the caller's transaction, until no other transaction is appending to ``chain``.

    On PostgreSQL two writers under READ COMMITTED both read the same head; the second's INSERT waits for the
    first to commit, then fails on the (chain, seq) constraint and starts again. Eight threads appending to one
    matter's chain retried about three times an entry and some gave up after 20 tries: under an office's load
    every page view writes an entry, so a page view could fail. A transaction-scoped advisory lock makes them wait
    their turn instead. The lock is held until the outermost transaction ends (commit or rollback; rolling back a
    savepoint does not release it), as the uncommitted entry held the next writer before. Two chains whose names
    hash alike only share a queue. A deadlock with another transaction that waits on this one raises
    ``django.db.OperationalError``, which :func:`audit_record` does not retry.
    SQLite needs nothing: LawDesk's transactions there are IMMEDIATE, so a writer holds the database's write lock
    from its first statement (lawdesk.settings)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [CHAIN_LOCK_CLASS, chain])


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
    Writers to one chain take turns (:func:`_queue_for_chain`); should two still race for the same sequence
    number, they collide on the (chain, seq) unique constraint and the loser re-reads the chain head and tries
    again, so the chain never forks.
    """
    chain = _chain_for(matter)
    actor_name = getattr(actor, "get_username", lambda: "")() if actor is not None else "system"
    for _attempt in range(20):
        try:
            with transaction.atomic():
                _queue_for_chain(chain)
                head = AuditEntry.objects.filter(chain=chain).order_by("-seq").first()
                salt = os.urandom(DETAIL_SALT_BYTES).hex()
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
                    scheme=SCHEME_SEALED,
                    detail_salt=salt,
                )
                entry.detail_digest = detail_digest(salt, entry.detail)
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
    legacy_entries: int = 0  # unkeyed entries from before sealing, verified the old way
    erased_entries: int = 0  # entries whose detail a purge of the matter erased

    @property
    def legacy_note(self) -> str:
        """``"N entries before sealing, verified unkeyed"``, or "" when the chain has none."""
        if not self.legacy_entries:
            return ""
        noun = "entry" if self.legacy_entries == 1 else "entries"
        return f"{self.legacy_entries} {noun} before sealing, verified unkeyed"


def audit_verify(*, matter: Matter | None) -> ChainCheck:
    """Recompute the chain of ``matter`` (or the system chain) and report the first thing that does not match.

    Checked in order: each entry's seq follows the previous one (a deleted middle entry leaves a gap), its
    ``prev_hash`` is the previous entry's hash, its own hash is the keyed hash of its content (an edited entry, or
    a chain recomputed without the key), and, from the checkpoint file, every checkpointed (seq, hash) is still in
    the database with that hash (deleted last entries; a chain rebuilt even with the key). ``problem`` names what
    was found.

    Unkeyed (``sha256``) entries are verified with the old SHA-256 and counted in ``legacy_entries``; they are
    accepted only up to the chain's last legacy entry checkpointed at upgrade and never after a keyed entry.
    """
    chain = _chain_for(matter)
    if problem := checkpoint_file_problem():
        return ChainCheck(False, 0, GENESIS_HASH, None, problem)
    if matter is not None:
        moved = AuditEntry.objects.filter(matter=matter).exclude(chain=chain).order_by("chain", "seq").first()
        if moved is not None:
            return ChainCheck(False, 0, GENESIS_HASH, None, f"entry {moved.seq} of chain {moved.chain} was moved into "
                              "this matter (its matter was changed; the chain it was written in says otherwise)")
    checkpoints = checkpoints_of(chain)
    legacy_head = legacy_head_of(chain)
    purge_seq = AuditEntry.objects.filter(chain=chain, action="matter.purge").order_by("seq").values_list(
        "seq", flat=True).first()
    if problem := _erasure_problem(chain):
        return ChainCheck(False, 0, GENESIS_HASH, None, problem)
    prev = GENESIS_HASH
    count = legacy = erased = 0
    first_keyed = None
    expected_seq = 1
    for entry in AuditEntry.objects.filter(chain=chain).order_by("seq").iterator():
        count += 1

        def broken(problem: str, entry=entry) -> ChainCheck:
            return ChainCheck(False, count, prev, entry.seq, problem, legacy, erased)

        if entry.matter_id != (matter.pk if matter is not None else None):
            return broken(f"the entry's matter was changed (to {entry.matter_id}); its chain is {chain}")
        if entry.detail_erased:
            # Only a purge erases, and only what came before it; an erased entry holds nothing again.
            if purge_seq is None or entry.seq >= purge_seq:
                return broken("the entry's detail was erased, but not by a purge of the matter")
            if entry.detail or entry.detail_salt:
                return broken("the entry's detail was erased at the purge but holds something again")
            erased += 1
        if entry.seq != expected_seq:
            return broken(f"sequence gap: expected entry {expected_seq}, found {entry.seq} (entries deleted)")
        if entry.prev_hash != prev:
            return broken("prev_hash does not match the previous entry")
        if entry.scheme == SCHEME_UNKEYED:
            # Unkeyed hashes can be recomputed by anyone, so they are believed only where the seal says they were.
            if first_keyed is not None:
                return broken(f"unkeyed (legacy-scheme) entry after the first keyed entry {first_keyed}: legacy "
                              "entries cannot be added after sealing")
            if legacy_head is None:
                return broken("unkeyed (legacy-scheme) entry, but the checkpoint file records no legacy entries "
                              "in this chain when it was sealed: legacy entries cannot be added after sealing")
            if entry.seq > legacy_head:
                return broken(f"unkeyed (legacy-scheme) entry after the last legacy entry {legacy_head} sealed at "
                              "upgrade: legacy entries cannot be added after sealing")
            # An entry written before the detail was sealed apart cannot be hashed once a purge erased its detail:
            # its links (prev_hash) and checkpoint still hold it in place.
            if not entry.detail_erased and unkeyed_hash(entry) != entry.hash:
                return broken("legacy entry content does not match its unkeyed hash (edited)")
            legacy += 1
        elif entry.scheme == SCHEME_KEYED:
            first_keyed = first_keyed or entry.seq
            if not entry.detail_erased and _entry_hash(entry) != entry.hash:
                return broken("entry content does not match its keyed hash (edited, or recomputed without the key)")
        elif entry.scheme == SCHEME_SEALED:
            first_keyed = first_keyed or entry.seq
            if _entry_hash(entry) != entry.hash:
                return broken("entry content does not match its keyed hash (edited, or recomputed without the key)")
            try:
                edited = not entry.detail_erased and detail_digest(entry.detail_salt, entry.detail) != \
                    entry.detail_digest
            except (ValueError, TypeError):  # a salt that is no hex LawDesk wrote: edited in the database
                return broken("entry detail's salt is not one LawDesk wrote (the detail was edited)")
            if edited:
                return broken("entry detail does not match its keyed hash (the detail was edited)")
        else:
            return broken(f"unknown hash scheme {entry.scheme!r}")
        checkpoint = checkpoints.get(entry.seq)
        if checkpoint is not None and checkpoint != entry.hash:
            return broken("entry differs from its checkpoint outside the database (the chain was rewritten)")
        prev = entry.hash
        expected_seq += 1
    beyond = [seq for seq in checkpoints if seq >= expected_seq]
    if beyond:
        last = max(beyond)
        return ChainCheck(False, count, prev, expected_seq,
                          f"entries {expected_seq} to {last} are checkpointed outside the database but missing "
                          "from it (the chain was truncated)", legacy, erased)
    return ChainCheck(True, count, prev, legacy_entries=legacy, erased_entries=erased)


def _erasure_seal(entries) -> str:
    """The keyed digest (HMAC-SHA256 hex under the audit key) of what stays of erased ``entries`` (in seq order):
    every field but the detail and its salt, ``detail_erased`` included. An ``hmac-sha256-v2`` entry's hash
    already covers all of them but the flag; an older entry's hash covered its detail too and can no longer be
    recomputed, so this digest is what still holds its actor, action, time and object in place."""
    rows = [[e.seq, e.matter_id, e.at.isoformat(), e.actor, e.action, e.object_type, e.object_id, e.file_sha256,
             e.prev_hash, e.hash, e.scheme, e.detail_digest, e.detail_erased] for e in entries]
    return seal(b"lawdesk-audit-erasure\0" + json.dumps(rows, separators=(",", ":")).encode("utf-8"))


def audit_erase_details(*, matter: Matter, before_seq: int, actor=None) -> int:
    """Erase the detail (and its salt) of every entry of ``matter``'s chain before ``before_seq`` (the
    ``matter.purge`` entry) and return how many: the case text an entry's detail may hold (search words, titles,
    instructions, reasons) leaves the database while the chain still verifies (:mod:`matters.audit.schemes`).

    The erasure is itself an entry of the chain, ``audit.erase``, hashed and checkpointed like any other, whose
    detail holds ``before_seq``, the number of entries erased and :func:`_erasure_seal` of them as they are
    left: flipping an entry's ``detail_erased``, or editing what stays of an erased entry, breaks
    :func:`audit_verify`. Only :func:`matters.retention.purge.matter_purge` calls it."""
    chain = _chain_for(matter)
    erased = AuditEntry.objects.filter(chain=chain, seq__lt=before_seq, detail_erased=False).update(
        detail={}, detail_salt="", detail_erased=True)
    left = AuditEntry.objects.filter(chain=chain, seq__lt=before_seq).order_by("seq")
    audit_record(action=ERASE_ACTION, actor=actor, matter=matter, obj=matter,
                 detail={"before_seq": before_seq, "entries": left.count(), "erased_seal": _erasure_seal(left)})
    return erased


def _erasure_problem(chain: str) -> str:
    """Why the chain's erased entries are not those its ``audit.erase`` entry sealed ("" when they are, or when
    nothing was erased)."""
    erasure = AuditEntry.objects.filter(chain=chain, action=ERASE_ACTION).order_by("seq").first()
    erased = AuditEntry.objects.filter(chain=chain, detail_erased=True)
    if erasure is None:  # erased entries without a purge are named entry by entry by audit_verify
        purged = AuditEntry.objects.filter(chain=chain, action="matter.purge").exists()
        return ("entries' detail was erased, but no erasure is recorded in the chain"
                if purged and erased.exists() else "")
    try:
        before_seq, count, sealed = (erasure.detail[k] for k in ("before_seq", "entries", "erased_seal"))
    except (KeyError, TypeError):
        return f"the erasure (entry {erasure.seq}) does not say what it erased"
    if erased.filter(seq__gte=before_seq).exists():
        return f"an entry from {before_seq} on is marked erased, after the erasure (entry {erasure.seq}) ended"
    left = AuditEntry.objects.filter(chain=chain, seq__lt=before_seq).order_by("seq")
    if left.filter(detail_erased=False).exists() or left.count() != count:
        return (f"the entries before {before_seq} are not the {count} erased ones the erasure (entry "
                f"{erasure.seq}) sealed")
    if _erasure_seal(left) != sealed:
        return (f"an erased entry before {before_seq} was changed after the erasure (entry {erasure.seq}) sealed "
                "what stays of them")
    return ""


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
