"""Turn an email exhibit (a message or a mailbox) into what the ingest child reads: its display PDF, its metadata,
and its family's other members as exhibits of their own.

:func:`email_prepare` runs in the worker before the ingest child, which then reads the display PDF written here as
it reads any PDF (text layer, pages, previews). A message's pages are its header block and body
(:mod:`matters.email.render`); each attachment becomes a child exhibit (:func:`matters.exhibits.services.
exhibit_create_family_member`), processed like any upload, an attached message unpacked in turn down to
``LAWDESK_EMAIL_MAX_DEPTH``. A mailbox's page lists its messages, each of which becomes an exhibit of its own. The
same message collected from a second custodian (same Message-ID and normalised body) is not a second exhibit: the
first gains the custodian and the second is marked a duplicate of it. The threads the message touches are updated
and their inclusive messages marked again; its near-duplicates are linked. See docs/email.md.
"""

import io
import mailbox
import re
from dataclasses import dataclass, field
from datetime import UTC
from email import policy
from email.parser import BytesHeaderParser
from pathlib import Path

from django.conf import settings

from matters import storage
from matters.exhibits.services import exhibit_create_family_member, exhibit_create_from_mailbox
from matters.exhibits.sniff import ICS_MIME, MSG_MIME
from matters.models import EmailMessage, Exhibit

from .calendar import read_calendar
from .containers import ArchiveLimits, unpacked_attachments
from .near_duplicates import message_near_duplicates_update
from .outlook import parse_msg
from .parse import ParsedMessage, normalised_body_sha256, normalised_subject, parse_eml
from .render import calendar_pdf, listing_pdf, message_pdf
from .threads import message_threads_update


@dataclass
class Prepared:
    """What :func:`email_prepare` leaves for processing: ``status`` "read" (the display PDF is written; the child
    reads it next), "failed" (with ``reason``) or "duplicate" (``duplicate_of`` holds the message it repeats);
    ``notes`` for the exhibit; ``members``: ids of the exhibits it made (attachments, a mailbox's messages)."""

    status: str
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    members: list[int] = field(default_factory=list)
    duplicate_of: Exhibit | None = None


def email_prepare(*, exhibit: Exhibit, enqueue_members: bool = True) -> Prepared:
    """Prepare an exhibit of kind ``email`` or ``mailbox`` for the ingest child (see the module docstring).
    ``enqueue_members``: queue the exhibits made for processing (the worker), or leave them for the caller to
    process (the command line). Never raises for a bad message: what fails is in the result."""
    if exhibit.kind == Exhibit.Kind.MAILBOX:
        return _prepare_mailbox(exhibit, enqueue_members)
    if exhibit.mime_type == ICS_MIME:
        return _prepare_calendar(exhibit)
    return _prepare_message(exhibit, enqueue_members)


def _prepare_calendar(exhibit: Exhibit) -> Prepared:
    """A calendar item (an invitation's ``.ics``): its page shows its events; it has no message record and no
    attachments of its own (those are the message's that carried it)."""
    limit_mb = settings.LAWDESK_EMAIL_MAX_MB
    if exhibit.size_bytes > limit_mb * 1024 * 1024:
        return Prepared("failed", f"The calendar item is {exhibit.size_bytes / 1024 / 1024:.0f} MiB, over the limit "
                                  f"of {limit_mb} MiB (LAWDESK_EMAIL_MAX_MB); it was not read. The original is kept "
                                  "unchanged; an operator may raise the limit and process it again.")
    calendar = read_calendar(storage.blob_path(exhibit.sha256).read_bytes())
    if not calendar.items:
        return Prepared("failed", " ".join(calendar.problems))
    _write_display(exhibit, calendar_pdf(calendar, calendar.problems))
    return Prepared("read", notes=list(calendar.problems))


def _prepare_message(exhibit: Exhibit, enqueue_members: bool) -> Prepared:
    limit_mb = settings.LAWDESK_EMAIL_MAX_MB
    if exhibit.size_bytes > limit_mb * 1024 * 1024:
        return Prepared("failed", f"The message is {exhibit.size_bytes / 1024 / 1024:.0f} MiB, over the limit of "
                                  f"{limit_mb} MiB for one message (LAWDESK_EMAIL_MAX_MB); it was not read. The "
                                  "original is kept unchanged; an operator may raise the limit and process it again.")
    source = storage.blob_path(exhibit.sha256)
    parsed = parse_msg(source) if exhibit.mime_type == MSG_MIME else parse_eml(source.read_bytes())
    if parsed.body_kind == "unreadable":
        return Prepared("failed", parsed.problems[0])
    body_sha256 = normalised_body_sha256(parsed.body)
    if (first := _same_message(exhibit, parsed, body_sha256)) is not None:
        return _duplicate(exhibit, first, parsed)
    notes = list(parsed.problems) + ([parsed.security] if parsed.security else [])
    members, member_notes = _attachments(exhibit, parsed, enqueue_members)
    notes += member_notes
    record = _record(exhibit, parsed, body_sha256)
    _write_display(exhibit, message_pdf(parsed, notes))
    message_threads_update(record)
    record.refresh_from_db(fields=["thread_key"])
    message_near_duplicates_update(record)
    return Prepared("read", notes=notes, members=members)


def _same_message(exhibit: Exhibit, parsed: ParsedMessage, body_sha256: str) -> Exhibit | None:
    """The matter's earlier exhibit of this message (same Message-ID and normalised body), if any. A message
    without a Message-ID is never called the same as another: nothing identifies it but its bytes."""
    if not parsed.message_id:
        return None
    found = (EmailMessage.objects.filter(exhibit__matter=exhibit.matter, message_id=parsed.message_id,
                                         body_sha256=body_sha256)
             .exclude(exhibit=exhibit).exclude(exhibit__status=Exhibit.Status.DUPLICATE)
             .select_related("exhibit").order_by("exhibit_id").first())
    return found.exhibit if found else None


def _duplicate(exhibit: Exhibit, first: Exhibit, parsed: ParsedMessage) -> Prepared:
    if exhibit.custodian_id:
        first.message.custodians.add(exhibit.custodian_id)
    from_whom = f" from {exhibit.custodian.name}" if exhibit.custodian_id else ""
    reason = (f"The same message (Message-ID {parsed.message_id}, same body) is already in this matter as "
              f"{first.display_label}, “{first.title}”; this copy{from_whom} was not made a second exhibit"
              f"{' and its custodian was added to it' if exhibit.custodian_id else ''}. The copy's original is kept.")
    return Prepared("duplicate", reason, duplicate_of=first)


def _attachments(exhibit: Exhibit, parsed: ParsedMessage, enqueue: bool) -> tuple[list[int], list[str]]:
    """Make each attachment a child exhibit (once: a message processed again keeps the children it has);
    return their ids and the notes on what was not made."""
    notes = []
    if not parsed.attachments:
        return [], notes
    depth_limit = settings.LAWDESK_EMAIL_MAX_DEPTH
    if exhibit.family_depth >= depth_limit:
        notes.append(f"This message is nested {exhibit.family_depth} messages deep, the limit "
                     f"(LAWDESK_EMAIL_MAX_DEPTH = {depth_limit}): its {len(parsed.attachments)} attachment(s) are "
                     "listed above but were not made exhibits. They are in the original, kept unchanged.")
        return [], notes
    attachments, archive_notes = unpacked_attachments(parsed.attachments, ArchiveLimits(
        max_depth=settings.LAWDESK_ARCHIVE_MAX_DEPTH, max_members=settings.LAWDESK_ARCHIVE_MAX_MEMBERS,
        max_total_bytes=settings.LAWDESK_ARCHIVE_MAX_MB * 1024 * 1024))
    notes += archive_notes
    count_limit = settings.LAWDESK_EMAIL_MAX_ATTACHMENTS
    if len(attachments) > count_limit:
        notes.append(f"This message has {len(attachments)} attachments (the files of an archive counted each); the "
                     f"first {count_limit} (LAWDESK_EMAIL_MAX_ATTACHMENTS) were made exhibits, the others are kept "
                     "in the original.")
    existing = set(exhibit.children.values_list("family_position", flat=True))
    members = []
    for position, attachment in enumerate(attachments[:count_limit], start=1):
        if position in existing:
            continue
        if attachment.data is None:
            notes.append(f"Attachment {position}, “{attachment.name}”, could not be read: {attachment.reason}. "
                         "It is in the original, kept unchanged.")
            continue
        if attachment.reason:
            notes.append(f"Attachment {position}, “{attachment.name}”: {attachment.reason}.")
        child = exhibit_create_family_member(parent=exhibit, stream=io.BytesIO(attachment.data),
                                             original_name=attachment.name, position=position, enqueue=enqueue)
        members.append(child.pk)
    return members, notes


def _record(exhibit: Exhibit, parsed: ParsedMessage, body_sha256: str) -> EmailMessage:
    sent = parsed.sent_at
    offset = sent.utcoffset() if sent is not None else None
    record, _ = EmailMessage.objects.update_or_create(exhibit=exhibit, defaults={
        "source_format": parsed.source_format,
        "message_id": parsed.message_id[:998],
        "in_reply_to": parsed.in_reply_to[:998],
        "references": parsed.references[:500],
        "sender": parsed.sender, "to": parsed.to, "cc": parsed.cc, "bcc": parsed.bcc,
        "subject": parsed.subject,
        "subject_normalised": normalised_subject(parsed.subject),
        "date_header": parsed.date_header[:300],
        "sent_at": sent.astimezone(UTC) if sent is not None else None,
        "sent_utc_offset_min": int(offset.total_seconds() // 60) if offset is not None else None,
        "attachment_names": parsed.attachment_names,
        "native_sha256": exhibit.sha256,
        "body_sha256": body_sha256,
        "body_text": parsed.body,
        "body_recorded": True,
    })
    if exhibit.custodian_id:
        record.custodians.add(exhibit.custodian_id)
    return record


def _write_display(exhibit: Exhibit, pdf: bytes) -> None:
    out_dir = storage.derived_dir(exhibit.pk)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "display.pdf").write_bytes(pdf)


def _prepare_mailbox(exhibit: Exhibit, enqueue_members: bool) -> Prepared:
    limit_mb = settings.LAWDESK_MAILBOX_MAX_MB
    if exhibit.size_bytes > limit_mb * 1024 * 1024:
        return Prepared("failed", f"The mailbox is {exhibit.size_bytes / 1024 / 1024:.0f} MiB, over the limit of "
                                  f"{limit_mb} MiB (LAWDESK_MAILBOX_MAX_MB); it was not read. The original is kept "
                                  "unchanged; an operator may raise the limit and process it again.")
    source = storage.blob_path(exhibit.sha256)
    stem = Path(exhibit.original_name.replace("\\", "/")).name or "mailbox"
    limit = settings.LAWDESK_MAILBOX_MAX_MESSAGES
    notes, rows, members = [], [], []
    done = {name for name in Exhibit.objects.filter(matter=exhibit.matter, original_name__startswith=f"{stem}, "
                                                                                                      "message ")
            .values_list("original_name", flat=True)}
    try:
        box = mailbox.mbox(source, create=False)
        keys = box.keys()
    except Exception as exc:  # mailbox raises OSError and parser errors for a damaged file
        return Prepared("failed", f"The mailbox could not be read ({type(exc).__name__}); the original is kept "
                                  "unchanged.")
    if len(keys) > limit:
        notes.append(f"The mailbox holds {len(keys)} messages; the first {limit} (LAWDESK_MAILBOX_MAX_MESSAGES) were "
                     "made exhibits. The others are in the original, kept unchanged.")
    try:
        for number, key in enumerate(keys[:limit], start=1):
            name = f"{stem}, message {number}.eml"
            try:
                data = _unquote_from_lines(box.get_bytes(key))
            except Exception as exc:
                notes.append(f"Message {number} of the mailbox could not be read ({type(exc).__name__}).")
                continue
            rows.append(f"{number}. {_listing_row(data)}")
            if name in done:
                continue
            member = exhibit_create_from_mailbox(mailbox=exhibit, stream=io.BytesIO(data), original_name=name,
                                                 enqueue=enqueue_members)
            members.append(member.pk)
            rows[-1] += f" ({member.display_label if member.label else member.get_status_display()})"
    finally:
        box.close()
    _write_display(exhibit, listing_pdf(f"Mailbox {stem}: {len(keys)} message(s)", rows))
    return Prepared("read", notes=notes, members=members)


_QUOTED_FROM = re.compile(rb"^>(>*From )", re.MULTILINE)


def _unquote_from_lines(data: bytes) -> bytes:
    """A mailbox message's bytes as its sender wrote them: a mail program that stores a mailbox puts ">" before a
    body line beginning "From " (and, in the mboxrd form, before every already quoted one) so it is not read as
    the next message's separator; one ">" comes off again here (RFC 4155 section 2, the mboxrd rule)."""
    return _QUOTED_FROM.sub(rb"\1", data)


def _listing_row(data: bytes) -> str:
    """A mailbox message as its listing shows it: Date, From, Subject, from its headers alone."""
    try:
        headers = BytesHeaderParser(policy=policy.default).parsebytes(data)
        values = [str(headers.get(name) or "") for name in ("Date", "From", "Subject")]
    except Exception:
        values = ["(headers unreadable)"]
    return " · ".join(" ".join(value.split()) for value in values if value) or "(no headers)"
