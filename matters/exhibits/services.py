"""Writes to the case file's exhibits. Views, tasks and commands call these and nothing else."""

import string
from pathlib import Path
from typing import BinaryIO

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_record
from matters.drafts.verifier.authorities import suggest_cites_as
from matters.models import UPLOAD_ORIGINS, Custodian, Exhibit, Matter, Origin
from matters.permissions import require
from matters.provenance import generated_match_for, hash_match_reason
from matters.tasks import ingest_exhibit as ingest_exhibit_task

from .sniff import ACCEPTED_DESCRIPTION, sniff


def format_label(seq: int, style: str) -> str:
    """Return the label for the ``seq``-th exhibit (1-based): ``7`` or, for alpha, A..Z, AA..AZ, ... (spreadsheet
    style, as courts continue lettered exhibits past Z)."""
    if style != Matter.LabelStyle.ALPHA:
        return str(seq)
    letters = ""
    while seq > 0:
        seq, remainder = divmod(seq - 1, 26)
        letters = string.ascii_uppercase[remainder] + letters
    return letters


def _default_title(original_name: str) -> str:
    stem = Path(original_name.replace("\\", "/")).name
    stem = stem.rsplit(".", 1)[0] if "." in stem.strip(".") else stem
    return stem.strip()[:300] or "Untitled"


def exhibit_create(
    *,
    matter: Matter,
    stream: BinaryIO,
    original_name: str,
    origin: str,
    uploaded_by: AbstractBaseUser | None,
    enqueue: bool = True,
    custodian: str = "",
) -> Exhibit:
    """Store an upload and register it as an exhibit of ``matter``; return the Exhibit.

    ``custodian`` names who the file was collected from (the matter's Custodian of that name, made on first use);
    empty is nobody.

    The bytes are copied in chunks to the content-addressed store and the type is decided by content. Outcomes:
    an accepted type gets the next label and status ``queued`` (and, with ``enqueue``, an ingest task once the
    transaction commits); an empty file is ``failed``; an unaccepted type is ``rejected`` and kept in quarantine;
    a file already in the matter is ``duplicate`` with ``duplicate_of`` set and is not stored again.
    Raises ValidationError for an origin that is not an upload origin; PermissionDenied for a user who may not
    upload to the matter (:mod:`matters.permissions`).
    """
    require(uploaded_by, "change_exhibits", matter)
    if origin not in UPLOAD_ORIGINS:
        raise ValidationError({"origin": f"{origin!r} is not an origin for uploaded material."})
    custodian_name = " ".join(custodian.split())
    if len(custodian_name) > 200:
        raise ValidationError({"custodian": "A custodian's name is at most 200 characters."})
    named = custodian_for(matter, custodian_name) if custodian_name else None
    return _create(Exhibit(matter=matter, origin=origin, uploaded_by=uploaded_by, custodian=named), stream,
                   original_name, enqueue)


def exhibit_create_family_member(*, parent: Exhibit, stream: BinaryIO, original_name: str, position: int,
                                 enqueue: bool = True) -> Exhibit:
    """Store a file found inside ``parent`` (an email's attachment, a message attached to it) as the
    ``position``-th child of its family (1-based, the order it is attached in); return it.

    The child takes the parent's matter, origin, custodian and uploader, and is processed like any upload (a
    message attached to a message is unpacked in turn). No permission is checked: the parent's upload was the act
    a person was allowed to do."""
    member = Exhibit(matter=parent.matter, origin=parent.origin, uploaded_by=parent.uploaded_by,
                     custodian=parent.custodian, parent=parent, family_position=position,
                     family_seq=parent.family_seq, family_path=f"{parent.family_path}{position:04d}.")
    return _create(member, stream, original_name, enqueue)


def exhibit_create_from_mailbox(*, mailbox: Exhibit, stream: BinaryIO, original_name: str,
                                enqueue: bool = True) -> Exhibit:
    """Store one message of ``mailbox`` (an exhibit of kind ``mailbox``) as an exhibit of its own, a family of
    its own, with the mailbox's matter, origin, custodian and uploader; return it. No permission is checked: the
    mailbox's upload was the act a person was allowed to do."""
    message = Exhibit(matter=mailbox.matter, origin=mailbox.origin, uploaded_by=mailbox.uploaded_by,
                      custodian=mailbox.custodian)
    return _create(message, stream, original_name, enqueue)


def custodian_for(matter: Matter, name: str) -> Custodian:
    """Return the matter's custodian called ``name`` (spaces collapsed), made on first use."""
    custodian, _ = Custodian.objects.get_or_create(matter=matter, name=" ".join(name.split())[:200])
    return custodian


def _create(template: Exhibit, stream: BinaryIO, original_name: str, enqueue: bool) -> Exhibit:
    staged = storage.stage_stream(stream)
    name = original_name[:500]
    try:
        sniffed = sniff(staged.path, staged.head) if staged.size_bytes else None
        try:
            exhibit = _register(template, staged, sniffed, name, enqueue)
        except IntegrityError:
            # Another upload of the same bytes won the race; registering again finds it and records a duplicate.
            exhibit = _register(template, staged, sniffed, name, enqueue)
        if enqueue and exhibit.status == Exhibit.Status.QUEUED:
            transaction.on_commit(lambda: enqueue_ingest(exhibit.pk))
    finally:
        storage.discard_staged(staged)
    return exhibit


def _register(template: Exhibit, staged: storage.StagedFile, sniffed, name: str, enqueue: bool) -> Exhibit:
    matter, origin, uploaded_by = template.matter, template.origin, template.uploaded_by
    with transaction.atomic():
        exhibit = Exhibit(
            matter=matter,
            origin=origin,
            original_name=name,
            title=_default_title(name),
            sha256=staged.sha256,
            size_bytes=staged.size_bytes,
            mime_type=sniffed.mime_type if sniffed else "",
            kind=sniffed.kind if sniffed else Exhibit.Kind.OTHER,
            uploaded_by=uploaded_by,
            custodian=template.custodian,
            parent=template.parent,
            family_position=template.family_position,
            family_seq=template.family_seq,
            family_path=template.family_path,
        )
        existing = (
            Exhibit.objects.select_for_update()
            .filter(matter=matter, sha256=staged.sha256)
            .exclude(status=Exhibit.Status.DUPLICATE)
            .first()
        )
        if existing is not None:
            exhibit.status = Exhibit.Status.DUPLICATE
            exhibit.duplicate_of = existing
            exhibit.kind = existing.kind
            exhibit.quarantined = existing.quarantined
            exhibit.reason = (
                f"The same file (SHA-256 {staged.sha256[:12]}…) is already in this matter as "
                f"{existing.display_label}, “{existing.title}”. It was not stored twice."
            )
        elif sniffed is None:
            exhibit.status = Exhibit.Status.FAILED
            exhibit.reason = "The file is empty (0 bytes). Nothing was received; upload it again."
            exhibit.quarantined = True
        elif sniffed.kind == Exhibit.Kind.OTHER:
            exhibit.status = Exhibit.Status.REJECTED
            exhibit.quarantined = True
            exhibit.reason = sniffed.refusal or (
                f"This file is a {sniffed.description}, which is not accepted: "
                f"upload {ACCEPTED_DESCRIPTION}. The file is kept unchanged in quarantine."
            )
        else:
            _assign_next_label(exhibit)
            if (match := generated_match_for(staged.sha256)) is not None:
                exhibit.generated_match = match
                exhibit.generated_reason = hash_match_reason(match, matter.pk)
        if existing is None:
            storage.commit_staged(staged, quarantined=exhibit.quarantined)
        if enqueue and exhibit.status == Exhibit.Status.QUEUED:
            exhibit.queued_at = timezone.now()  # with the row, so no stall sweep misses a task never written
        exhibit.save()
        audit_record(
            action="exhibit.upload",
            actor=uploaded_by,
            matter=matter,
            obj=exhibit,
            file_sha256=staged.sha256,
            detail={
                "original_name": name,
                "size_bytes": staged.size_bytes,
                "type": exhibit.mime_type,
                "origin": origin,
                "custodian": exhibit.custodian.name if exhibit.custodian else "",
                "parent": exhibit.parent_id,
                "status": exhibit.status,
                "generated": exhibit.generated_reason,
            },
        )
    return exhibit


def _assign_next_label(exhibit: Exhibit) -> None:
    matter = Matter.objects.select_for_update().get(pk=exhibit.matter_id)
    seq = (matter.exhibits.aggregate(top=Max("label_seq"))["top"] or 0) + 1
    label = format_label(seq, matter.label_style)
    while matter.exhibits.filter(label=label).exists():  # a label edited by hand may already use it
        seq += 1
        label = format_label(seq, matter.label_style)
    exhibit.label_seq = seq
    exhibit.label = label
    if exhibit.parent_id is None:
        exhibit.family_seq = seq


def enqueue_ingest(exhibit_id: int) -> None:
    """Queue an exhibit for processing on the ``documents`` queue (call it from ``transaction.on_commit``)."""
    ingest_exhibit_task.enqueue(exhibit_id)


def exhibit_update(*, exhibit: Exhibit, updated_by: AbstractBaseUser, title: str, label: str,
                   transcript_cite: str | None = None) -> Exhibit:
    """Change an exhibit's title and label, and the short form it is cited by as a transcript (``Roe Dep.``; None
    leaves it). Raises ValidationError if the label is empty or taken in the matter; PermissionDenied for a user
    who may not edit the matter's exhibits."""
    require(updated_by, "change_exhibits", exhibit.matter)
    label = label.strip()
    title = title.strip()
    if exhibit.label_seq is None and label:
        raise ValidationError({"label": f"A {exhibit.status} file is not an exhibit and takes no label."})
    if not label and exhibit.label:
        raise ValidationError({"label": "An exhibit label cannot be empty."})
    if label and Exhibit.objects.filter(matter=exhibit.matter, label=label).exclude(pk=exhibit.pk).exists():
        raise ValidationError({"label": f"Exhibit {label} already exists in this matter."})
    before = {"title": exhibit.title, "label": exhibit.label, "transcript_cite": exhibit.transcript_cite}
    exhibit.title = title or exhibit.title
    exhibit.label = label
    if transcript_cite is not None:
        exhibit.transcript_cite = " ".join(transcript_cite.split())
    exhibit.full_clean()
    with transaction.atomic():
        exhibit.save(update_fields=["title", "label", "transcript_cite", "updated_at"])
        audit_record(
            action="exhibit.edit",
            actor=updated_by,
            matter=exhibit.matter,
            obj=exhibit,
            detail={"before": before, "after": {"title": exhibit.title, "label": exhibit.label,
                                                "transcript_cite": exhibit.transcript_cite}},
        )
    return exhibit


def exhibit_submit_password(*, exhibit: Exhibit, password: str, submitted_by: AbstractBaseUser) -> Exhibit:
    """Queue a password-protected PDF or Office file again with its password.

    The password is written to a file readable only by the server (never to the database or the task queue) and
    is deleted as soon as the worker has tried it. Raises ValidationError if the exhibit is not waiting for one;
    PermissionDenied for a user who may not change the matter's exhibits.
    """
    require(submitted_by, "change_exhibits", exhibit.matter)
    if exhibit.status != Exhibit.Status.NEEDS_PASSWORD:
        raise ValidationError("This exhibit is not waiting for a password.")
    if not password:
        raise ValidationError({"password": "Enter the file's password."})
    storage.write_secret(storage.password_path(exhibit.pk), password)
    with transaction.atomic():
        now = timezone.now()
        Exhibit.objects.filter(pk=exhibit.pk).update(status=Exhibit.Status.QUEUED, reason="", queued_at=now,
                                                     takeovers=0, updated_at=now)
        exhibit.refresh_from_db()
        audit_record(action="exhibit.password_submitted", actor=submitted_by, matter=exhibit.matter, obj=exhibit)
        transaction.on_commit(lambda: enqueue_ingest(exhibit.pk))
    return exhibit


def exhibit_reprocess(*, exhibit: Exhibit, requested_by: AbstractBaseUser) -> Exhibit:
    """Queue a failed exhibit again (after an operator raised a limit or installed a converter, say).
    Raises ValidationError for any other status; PermissionDenied for a user who may not change exhibits."""
    require(requested_by, "change_exhibits", exhibit.matter)
    if exhibit.status != Exhibit.Status.FAILED or exhibit.label_seq is None:
        raise ValidationError(f"Only a failed exhibit can be processed again; this one is {exhibit.status}.")
    with transaction.atomic():
        # A person's retry counts takeovers afresh (LAWDESK_RECOVERY_MAX_TAKEOVERS).
        now = timezone.now()
        Exhibit.objects.filter(pk=exhibit.pk).update(status=Exhibit.Status.QUEUED, reason="", progress_page=0,
                                                     queued_at=now, takeovers=0, updated_at=now)
        exhibit.refresh_from_db()
        audit_record(action="exhibit.reprocess", actor=requested_by, matter=exhibit.matter, obj=exhibit,
                     file_sha256=exhibit.sha256)
        transaction.on_commit(lambda: enqueue_ingest(exhibit.pk))
    return exhibit


def exhibit_set_cites_as(*, exhibit: Exhibit, updated_by: AbstractBaseUser, cites_as: str) -> Exhibit:
    """Set how drafts cite ``exhibit`` (``Exhibit.cites_as``: an authority's own citation, a docket entry such as
    ``ECF No. 45-2``, a record document's short name such as ``Compl.``), audited with the value before and
    after. Attorneys of the matter only (PermissionDenied); ValidationError for a value over 300 characters."""
    require(updated_by, "set_cites_as", exhibit.matter)
    cites_as = " ".join((cites_as or "").split())
    before = exhibit.cites_as
    exhibit.cites_as = cites_as
    exhibit.full_clean()
    with transaction.atomic():
        exhibit.save(update_fields=["cites_as", "updated_at"])
        audit_record(action="exhibit.cites_as", actor=updated_by, matter=exhibit.matter, obj=exhibit,
                     detail={"before": before, "after": cites_as})
    return exhibit


def exhibit_prefill_cites_as(*, exhibit: Exhibit) -> str:
    """Prefill an authority exhibit's empty "cites as" value from its first page (the citation and caption it
    shows of itself: :func:`matters.drafts.verifier.authorities.suggest_cites_as`); return the value ('' when none)."""
    if exhibit.cites_as or exhibit.origin != Origin.AUTHORITY:
        return exhibit.cites_as
    first = exhibit.pages.order_by("number").values_list("text", flat=True).first() or ""
    value = suggest_cites_as(first)[:300]
    if value:
        Exhibit.objects.filter(pk=exhibit.pk).update(cites_as=value)
        exhibit.cites_as = value
        audit_record(action="exhibit.cites_as", matter=exhibit.matter, obj=exhibit,
                     detail={"before": "", "after": value, "prefilled": True})
    return value
