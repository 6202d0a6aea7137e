"""Reads of the legal hold: who put the matter on hold, when, and why, for the matter page's retention section."""

from dataclasses import dataclass
from datetime import datetime

from matters.models import AuditEntry, Matter


@dataclass(frozen=True)
class HoldRecord:
    """The hold a matter is under: ``reason`` as the attorney gave it, ``set_by`` their user name, ``set_at``
    when (aware datetime)."""

    reason: str
    set_by: str
    set_at: datetime


def matter_hold_record(matter: Matter) -> HoldRecord | None:
    """Return the hold ``matter`` is under, read from the audit entry that set it (``matter.hold``: the hold has
    no row of its own, and the audit chain is its record), or None when the matter is not on hold or no entry
    records the hold (a flag set outside :func:`matters.retention.services.matter_hold`)."""
    if not matter.legal_hold:
        return None
    entry = (AuditEntry.objects.filter(matter=matter, action="matter.hold").order_by("-at", "-seq")
             .only("at", "actor", "detail").first())
    if entry is None:
        return None
    return HoldRecord(reason=str((entry.detail or {}).get("reason", "")), set_by=entry.actor, set_at=entry.at)
