"""How an audit entry's hash is computed, and the one-time sealing of entries written before the key existed.

Three schemes, named in ``AuditEntry.scheme`` (see docs/glossary.md, "Audit log"):

- ``sha256`` (*unkeyed*): the SHA-256 of the entry's canonical JSON. Every entry written before the audit log was
  keyed used it. It is only ever accepted for the leading part of a chain that was sealed at upgrade.
- ``hmac-sha256`` (*keyed*): the HMAC-SHA256 (RFC 2104) of the same canonical JSON under the audit key
  (:mod:`matters.audit.seal`). Entries written before the detail was sealed apart.
- ``hmac-sha256-v2`` (*keyed, detail sealed apart*): every entry written since. Its canonical JSON holds the
  entry's matter (so moving an entry to another matter breaks it) and, instead of the detail, the detail's own
  keyed digest, taken with a random salt kept beside the detail. A purge can then erase the detail (the case
  text it may hold: search words, titles, instructions) and the salt, and the chain still verifies; without the
  salt, nobody, even with the key, can test a guess against the digest left behind.

This module imports no models, so the migration that introduced the scheme column can use it.
"""

import hashlib
import json

from matters.audit.seal import checkpoint_append, seal

SCHEME_UNKEYED = "sha256"
SCHEME_KEYED = "hmac-sha256"
SCHEME_SEALED = "hmac-sha256-v2"
SCHEMES = ((SCHEME_UNKEYED, "SHA-256, unkeyed (before sealing)"), (SCHEME_KEYED, "HMAC-SHA256, keyed"),
           (SCHEME_SEALED, "HMAC-SHA256, keyed, matter bound, detail sealed apart"))
DETAIL_SALT_BYTES = 16


def _canonical_json(payload) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def detail_digest(salt_hex: str, detail) -> str:
    """Return the keyed digest (HMAC-SHA256 hex under the audit key) of ``detail`` with its salt (hex), which the
    ``hmac-sha256-v2`` entry's hash covers in place of the detail itself."""
    return seal(b"lawdesk-audit-detail\0" + bytes.fromhex(salt_hex) + _canonical_json(detail))


def entry_canonical(entry) -> bytes:
    """Return the entry's canonical JSON (UTF-8): every recorded field, ``prev_hash`` included, keys sorted.

    ``entry`` is an ``AuditEntry`` (or the migration's historical one). The scheme itself is not part of it: the
    unkeyed hashes were computed over exactly these fields, and must still be reproducible. An ``hmac-sha256-v2``
    entry's canonical JSON also holds its matter (its id, or null for the system chain) and holds the detail's
    digest (:func:`detail_digest`) instead of the detail."""
    if getattr(entry, "scheme", None) == SCHEME_SEALED:
        return _canonical_json({
            "chain": entry.chain,
            "seq": entry.seq,
            "matter": entry.matter_id,
            "at": entry.at.isoformat(),
            "actor": entry.actor,
            "action": entry.action,
            "object_type": entry.object_type,
            "object_id": entry.object_id,
            "file_sha256": entry.file_sha256,
            "detail_digest": entry.detail_digest,
            "prev_hash": entry.prev_hash,
        })
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
    return _canonical_json(payload)


def unkeyed_hash(entry) -> str:
    """Return the SHA-256 (hex) of the entry's canonical JSON: the hash the audit log used before it was keyed."""
    return hashlib.sha256(entry_canonical(entry)).hexdigest()


def seal_existing_chains(entries) -> dict[str, tuple[int, int]]:
    """Mark the unkeyed entries of every existing chain and checkpoint each chain's head outside the database.

    ``entries`` is the ``AuditEntry`` manager (historical or current). In each chain, the leading run of entries
    whose hash is their unkeyed hash gets ``scheme='sha256'``; every other entry keeps the keyed scheme (an entry
    matching neither then fails ``audit_verify`` as it should). For each chain, the last unkeyed entry is
    checkpointed with ``"legacy_head": true`` (no unkeyed entry past it is ever accepted), and the chain's head is
    checkpointed, so deleting or rewriting the unkeyed part afterwards is detected like any other truncation.

    Returns ``{chain: (unkeyed_entries, head_seq)}``. Raises ``OSError`` if the checkpoint file cannot be written:
    an upgrade that cannot seal must not pass.
    """
    sealed: dict[str, tuple[int, int]] = {}
    chains = entries.order_by().values_list("chain", flat=True).distinct()
    for chain in sorted(set(chains)):
        legacy_ids: list[int] = []
        legacy_head = None
        head = None
        for entry in entries.filter(chain=chain).order_by("seq").iterator():
            if head is None or legacy_head is head:
                if entry.hash == unkeyed_hash(entry) and (head is None or entry.seq == head.seq + 1):
                    legacy_ids.append(entry.pk)
                    legacy_head = entry
            head = entry
        if head is None:
            continue
        entries.filter(pk__in=legacy_ids).update(scheme=SCHEME_UNKEYED)
        if legacy_head is not None:
            checkpoint_append(chain=chain, seq=legacy_head.seq, hash=legacy_head.hash, legacy_head=True)
        if head is not legacy_head:
            checkpoint_append(chain=chain, seq=head.seq, hash=head.hash)
        sealed[chain] = (len(legacy_ids), head.seq)
    return sealed
