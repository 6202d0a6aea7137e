"""Turn a queued exhibit into pages of text, then page images: the worker's side of ingest.

:func:`exhibit_process` claims a queued exhibit, runs the parser/OCR child (:mod:`matters.exhibits.ingest.runner`),
stores each page as it arrives with persisted progress (page k of n), and ends in ``ready`` or another glossary
status with a reason. A failure touches only this exhibit. Text is what makes an exhibit ready and searchable; the page
images for viewers come after, from :func:`exhibit_render_previews`, so they never delay it.
"""

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from PIL import Image

from matters import storage
from matters.audit.services import audit_record
from matters.drafts.verifier.facts import exhibit_index_facts
from matters.drafts.verifier.transcripts import suggest_transcript_cite
from matters.email.intake import Prepared, email_prepare
from matters.leases import LeaseKeeper, lease_expiry, lease_watch_schedule, worker_id
from matters.models import Exhibit, Page
from matters.privilege.services import improper_redactions_record
from matters.progress import exhibit_changed
from matters.provenance import exhibit_check_near_duplicate, injection_reason_for
from matters.tasks import render_previews as render_previews_task

from .ingest.runner import run_child
from .ingest.spec import Spec
from .reading import is_transcript
from .services import exhibit_prefill_cites_as

logger = logging.getLogger(__name__)


def _claim(exhibit_id: int, owner: str) -> Exhibit | None:
    with transaction.atomic():
        claimed = Exhibit.objects.filter(pk=exhibit_id, status=Exhibit.Status.QUEUED).update(
            status=Exhibit.Status.PROCESSING, progress_page=0, page_count=0, reason="", lease_owner=owner,
            updated_at=timezone.now(),
            lease_expires_at=lease_expiry(settings.LAWDESK_DOCUMENT_LEASE_S),
        )
        if not claimed:
            return None
        exhibit = Exhibit.objects.select_related("matter").get(pk=exhibit_id)
        audit_record(
            action="exhibit.status",
            matter=exhibit.matter,
            obj=exhibit,
            file_sha256=exhibit.sha256,
            detail={"from": Exhibit.Status.QUEUED, "to": Exhibit.Status.PROCESSING},
        )
    return exhibit


def _spec(exhibit: Exhibit, password_file: str = "") -> Spec:
    return Spec(
        source=str(storage.blob_path(exhibit.sha256)),
        kind=exhibit.kind,
        out_dir=str(storage.derived_dir(exhibit.pk)),
        original_name=exhibit.original_name,
        password_file=password_file,
        ocr_dpi=settings.LAWDESK_OCR_DPI,
        ocr_workers=settings.LAWDESK_OCR_WORKERS,
        ocr_lang=settings.LAWDESK_OCR_LANG,
        max_image_pixels=Image.MAX_IMAGE_PIXELS or 0,
        max_sheet_cells=settings.LAWDESK_SHEET_MAX_CELLS,
        data_dir=str(settings.DATA_DIR),
        readers_unsandboxed=settings.LAWDESK_READERS_UNSANDBOXED,
    )


def exhibit_process(*, exhibit_id: int, previews: str = "enqueue", members: str = "enqueue") -> Exhibit:
    """Process the exhibit if it is ``queued`` (otherwise return it unchanged) and return it in its final state.

    Once ready, its page images are made by a ``render_previews`` task (``previews="enqueue"``), right here
    (``"inline"``, for the command line), or not at all (``"skip"``). The exhibits an email or a mailbox is
    unpacked into (attachments, messages: :mod:`matters.email.intake`) are queued (``members="enqueue"``) or
    processed here, after it, in the same way (``"inline"``). While it works the worker holds the
    exhibit's lease (``LAWDESK_DOCUMENT_LEASE_S``, :mod:`matters.leases`); if it dies, :mod:`matters.recovery`
    queues the exhibit again, and a worker that lost its lease stops without writing the exhibit's end.
    """
    owner = worker_id()
    exhibit = _claim(exhibit_id, owner)
    if exhibit is None:
        return Exhibit.objects.get(pk=exhibit_id)
    lease_watch_schedule("exhibit", exhibit.pk)
    keeper = LeaseKeeper(model=Exhibit, pk=exhibit.pk, owner=owner, lease_s=settings.LAWDESK_DOCUMENT_LEASE_S,
                         live={"status": Exhibit.Status.PROCESSING})
    with keeper:
        exhibit, made = _process(exhibit, owner, keeper, previews, members)
    if members == "inline":
        for member_id in made:
            exhibit_process(exhibit_id=member_id, previews=previews, members=members)
    return exhibit


def _process(exhibit: Exhibit, owner: str, keeper: LeaseKeeper, previews: str,
             members: str) -> tuple[Exhibit, list[int]]:
    """Read the exhibit; return it and the ids of the exhibits it was unpacked into (an email's attachments)."""
    _notify(exhibit)
    storage.discard_derived(exhibit.pk)
    Page.objects.filter(exhibit=exhibit).delete()
    password_file = storage.password_path(exhibit.pk)
    spec = _spec(exhibit, str(password_file) if password_file.exists() else "")
    final_status, reason, notes = Exhibit.Status.FAILED, "", []
    pages_pdf = pages_ocr = 0
    prepared = None
    if exhibit.kind in (Exhibit.Kind.EMAIL, Exhibit.Kind.MAILBOX):
        try:
            prepared = email_prepare(exhibit=exhibit, enqueue_members=members == "enqueue")
        except Exception as exc:  # as for the child: the worker survives any message; the exhibit says why
            logger.exception("email intake of exhibit %s failed", exhibit.pk)
            prepared = Prepared("failed", f"The message could not be read: processing stopped on an internal "
                                          f"error ({type(exc).__name__}). The original is kept unchanged.")
        if prepared.status != "read":
            return _end_unread(exhibit, owner, keeper, prepared), prepared.members
    try:
        for event in run_child(
            spec, memory_mb=settings.LAWDESK_INGEST_MEMORY_MB, timeout_s=settings.LAWDESK_INGEST_TIMEOUT_S
        ):
            if keeper.lost:
                # Another worker took the exhibit over after this one's lease expired: its pages are the ones kept.
                logger.warning("exhibit %s was taken over by another worker; this one stops", exhibit.pk)
                return Exhibit.objects.get(pk=exhibit.pk), []
            kind = event["event"]
            if kind == "start":
                notes = list(event.get("notes", []))
                Exhibit.objects.filter(pk=exhibit.pk).update(page_count=event["pages"], updated_at=timezone.now(),
                                                             word_changes=event.get("word_changes", {}))
            elif kind == "page":
                page = Page.objects.create(
                    exhibit=exhibit,
                    number=event["number"],
                    text=event["text"],  # reading_text is made from it on save
                    source=event["source"],
                    text_key=event.get("text_key", "") if event["source"] == Page.Source.PDF else "",
                    ocr_confidence=event["ocr_confidence"],
                    ocr_rotation_deg=event["ocr_rotation_deg"],
                    unread_ink=bool(event.get("ink")) and not event["text"].strip(),
                    width_pt=event["width_pt"],
                    height_pt=event["height_pt"],
                    injection_reason=injection_reason_for(event["text"]),
                )
                if event.get("improper_redaction"):
                    improper_redactions_record(page=page, found=event["improper_redaction"])
                pages_pdf += event["source"] == Page.Source.PDF
                pages_ocr += event["source"] == Page.Source.OCR
                # updated_at moves with every page: a row left by a version without leases is judged by it.
                Exhibit.objects.filter(pk=exhibit.pk).update(progress_page=event["number"], updated_at=timezone.now())
                _notify(exhibit)
            elif kind == "done":
                final_status, notes = Exhibit.Status.READY, list(event.get("notes", []))
                if prepared is not None:
                    notes = prepared.notes + notes
            elif kind == "error":
                final_status, reason = event["status"], event["reason"]
    except Exception as exc:  # the worker must survive anything a file does; the exhibit records why
        logger.exception("ingest of exhibit %s failed", exhibit.pk)
        final_status, reason = Exhibit.Status.FAILED, f"Processing stopped on an internal error: {exc}"
    finally:
        password_file.unlink(missing_ok=True)

    keeper.stop()
    made = prepared.members if prepared is not None else []
    if keeper.lost:
        return Exhibit.objects.get(pk=exhibit.pk), made
    if final_status != Exhibit.Status.READY:
        Page.objects.filter(exhibit=exhibit).delete()
        pages_pdf = pages_ocr = 0
    with transaction.atomic():
        if not Exhibit.objects.filter(pk=exhibit.pk, lease_owner=owner, status=Exhibit.Status.PROCESSING).update(
            status=final_status,
            reason=reason,
            notes=notes,
            pages_pdf=pages_pdf,
            pages_ocr=pages_ocr,
            previews_ready=False,
            updated_at=timezone.now(),
            lease_owner="",
            lease_expires_at=None,
        ):
            return Exhibit.objects.get(pk=exhibit.pk), made  # taken over between the last beat and now
        exhibit.refresh_from_db()
        audit_record(
            action="exhibit.status",
            matter=exhibit.matter,
            obj=exhibit,
            file_sha256=exhibit.sha256,
            detail={"from": Exhibit.Status.PROCESSING, "to": final_status, "reason": reason},
        )
    if exhibit.status == Exhibit.Status.READY:
        exhibit_check_near_duplicate(exhibit)
        exhibit_index_facts(exhibit)
        exhibit_prefill_cites_as(exhibit=exhibit)
        _prefill_transcript_cite(exhibit)
    _notify(exhibit)
    if exhibit.status == Exhibit.Status.READY:
        if previews == "inline":
            exhibit_render_previews(exhibit_id=exhibit.pk)
            exhibit.refresh_from_db()
        elif previews == "enqueue":
            transaction.on_commit(lambda: render_previews_task.enqueue(exhibit.pk))
    return exhibit, made


def _end_unread(exhibit: Exhibit, owner: str, keeper: LeaseKeeper, prepared: Prepared) -> Exhibit:
    """End an email exhibit that is not read further: ``failed`` with the reason, or ``duplicate`` of the
    message it repeats (its label given up, as a duplicate upload has none)."""
    keeper.stop()
    if keeper.lost:
        return Exhibit.objects.get(pk=exhibit.pk)
    status = Exhibit.Status.DUPLICATE if prepared.status == "duplicate" else Exhibit.Status.FAILED
    changes = {"status": status, "reason": prepared.reason, "notes": prepared.notes, "previews_ready": False,
               "updated_at": timezone.now(), "lease_owner": "", "lease_expires_at": None}
    if status == Exhibit.Status.DUPLICATE:
        changes |= {"duplicate_of": prepared.duplicate_of, "label": "", "label_seq": None}
        if exhibit.parent_id is None:
            changes["family_seq"] = None
    with transaction.atomic():
        if not Exhibit.objects.filter(pk=exhibit.pk, lease_owner=owner, status=Exhibit.Status.PROCESSING).update(
                **changes):
            return Exhibit.objects.get(pk=exhibit.pk)
        exhibit.refresh_from_db()
        audit_record(action="exhibit.status", matter=exhibit.matter, obj=exhibit, file_sha256=exhibit.sha256,
                     detail={"from": Exhibit.Status.PROCESSING, "to": status, "reason": prepared.reason})
    _notify(exhibit)
    return exhibit


def exhibit_render_previews(*, exhibit_id: int) -> bool:
    """Make the viewer image and thumbnail of every page of a ready exhibit; return whether they were made.

    Runs in a child process with the ingest limits. A failure leaves the exhibit ready (its text is what counts)
    and is logged; the viewer then shows the text without an image.
    """
    exhibit = Exhibit.objects.filter(pk=exhibit_id, status=Exhibit.Status.READY).first()
    if exhibit is None:
        return False
    made = False
    for event in run_child(
        _spec(exhibit),
        memory_mb=settings.LAWDESK_INGEST_MEMORY_MB,
        timeout_s=settings.LAWDESK_INGEST_TIMEOUT_S,
        job="previews",
    ):
        if event["event"] == "previews":
            made = True
        elif event["event"] == "error":
            logger.warning("page images of exhibit %s were not made: %s", exhibit.pk, event["reason"])
    Exhibit.objects.filter(pk=exhibit.pk).update(previews_ready=made)
    _notify(exhibit)
    return made


def _prefill_transcript_cite(exhibit: Exhibit) -> None:
    """An exhibit read as a transcript (a page of lines numbered 1-25 among its first five) gets the short form a
    brief cites it by, from its caption (``Roe Dep.``), unless a person set one; they may change it."""
    if exhibit.transcript_cite:
        return
    texts = list(exhibit.pages.order_by("number").values_list("text", flat=True)[:5])
    if not any(is_transcript(text) for text in texts):
        return
    exhibit.transcript_cite = suggest_transcript_cite("\n".join(texts[:2]))
    Exhibit.objects.filter(pk=exhibit.pk).update(transcript_cite=exhibit.transcript_cite)


def _notify(exhibit: Exhibit) -> None:
    try:
        exhibit_changed(matter_id=exhibit.matter_id, exhibit_id=exhibit.pk)
    except Exception:  # a missing Redis must not fail the ingest; the persisted progress is still there
        logger.warning("could not push progress for exhibit %s", exhibit.pk, exc_info=True)
