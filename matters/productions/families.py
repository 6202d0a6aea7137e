"""The family and email fields of a production's DAT: which documents travel together, and a message's headers.

Review platforms (Relativity, Everlaw, Nuix) load a family from ``BEGATTACH``/``ENDATTACH`` (the first and last
Bates number of the family's documents in the volume), ``PARENT_BATES`` (the first Bates number of a document's
parent) and ``ATTACHMENT_COUNT`` (its children in the volume), and a message's ``FROM``, ``TO``, ``CC``, ``BCC``,
``SUBJECT``, ``DATESENT`` (MM/DD/YYYY) and ``TIMESENT`` (HH:MM:SS), both in UTC. A document of no family leaves
the family fields blank; a withheld message (its placeholder produced) leaves its email fields blank, as its
headers are what the privilege log describes.
"""

from datetime import UTC

from matters.models import EmailMessage, Exhibit
from matters.selectors import exhibit_family

FAMILY_FIELDS = ["BEGATTACH", "ENDATTACH", "PARENT_BATES", "ATTACHMENT_COUNT"]
EMAIL_FIELDS = ["FROM", "TO", "CC", "BCC", "SUBJECT", "DATESENT", "TIMESENT"]


def whole_families(exhibits: list[Exhibit]) -> list[Exhibit]:
    """``exhibits`` with each one's whole family in its place: a production takes a family or none of it. A
    family goes where the first of its members chosen stood, parent first, then its children in the order
    attached (:func:`matters.selectors.exhibit_family`). Ready members are produced, and so is an attachment that
    is a duplicate of a ready exhibit (the same contract attached to two messages is stored once): it is produced
    in its place in its family with the pages of the exhibit it repeats (:attr:`Exhibit.content`), so the family
    is whole and its ATTACHMENT_COUNT true. An attachment refused or failed has no pages to stamp and is left out."""
    out, seen = [], set()
    for exhibit in exhibits:
        if exhibit.pk in seen:
            continue
        family = exhibit_family(exhibit) if exhibit.parent_id or exhibit.children.exists() else [exhibit]
        for member in family:
            if member.pk not in seen and (_producible(member) or member.pk == exhibit.pk):
                seen.add(member.pk)
                out.append(member)
    return out


def _producible(member: Exhibit) -> bool:
    if member.status == Exhibit.Status.READY:
        return True
    return (member.status == Exhibit.Status.DUPLICATE and member.parent_id is not None
            and member.duplicate_of_id is not None and member.content.status == Exhibit.Status.READY)


def _top(exhibit: Exhibit, by_id: dict[int, Exhibit]) -> int:
    current = exhibit
    for _ in range(100):
        if current.parent_id is None:
            break
        current = by_id.get(current.parent_id) or Exhibit.objects.only("id", "parent_id").get(pk=current.parent_id)
    return current.pk


def add_family_and_email_fields(rows: list[dict], documents: list[tuple[Exhibit, bool]]) -> None:
    """Fill FAMILY_FIELDS and EMAIL_FIELDS of the DAT ``rows``, one per entry of ``documents`` (the exhibit and
    whether its own pages are produced), in production order."""
    by_id = {exhibit.pk: exhibit for exhibit, _ in documents}
    tops = [_top(exhibit, by_id) for exhibit, _ in documents]
    family_rows: dict[int, list[dict]] = {}
    for top, row in zip(tops, rows):
        family_rows.setdefault(top, []).append(row)
    first_bates = {exhibit.pk: row["BEGBATES"] for (exhibit, _), row in zip(documents, rows)}
    children = {}
    for exhibit, _ in documents:
        if exhibit.parent_id in by_id:
            children[exhibit.parent_id] = children.get(exhibit.parent_id, 0) + 1
    messages = {record.exhibit_id: record for record in EmailMessage.objects.filter(exhibit_id__in=list(by_id))}
    for (exhibit, own_pages), top, row in zip(documents, tops, rows):
        family = family_rows[top]
        if len(family) > 1:
            row.update(BEGATTACH=family[0]["BEGBATES"], ENDATTACH=family[-1]["ENDBATES"],
                       PARENT_BATES=first_bates.get(exhibit.parent_id, ""),
                       ATTACHMENT_COUNT=children.get(exhibit.pk, 0))
        record = messages.get(exhibit.pk)
        if record is not None and own_pages:
            sent = record.sent_at.astimezone(UTC) if record.sent_at else None
            row.update(FROM=record.sender, TO=record.to, CC=record.cc, BCC=record.bcc, SUBJECT=record.subject,
                       DATESENT=f"{sent:%m/%d/%Y}" if sent else "", TIMESENT=f"{sent:%H:%M:%S}" if sent else "")
