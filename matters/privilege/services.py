"""Privilege and redaction services: redaction boxes on pages, boxes that only look like redactions, withheld
documents, and what a production needs to produce a document withheld or redacted.

Rules: a withheld document keeps its place and its Bates number with one placeholder page (Fed. R. Civ. P.
26(b)(5)(A): the claim is made expressly and the document described in the privilege log); a redaction is
applied for real (:mod:`matters.productions.bates.redact`); a page with an improper redaction
(:mod:`matters.exhibits.ingest.redaction_check`) is produced only once a real redaction covers the box or an
attorney has confirmed it.
Boxes picked by search: :mod:`matters.privilege.redaction_search`.
"""

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_record
from matters.exhibits.ingest.ocr import ocr_page_image
from matters.models import (
    Exhibit,
    ImproperRedaction,
    Page,
    PrivilegeBasis,
    PrivilegeLogEntry,
    ProductionDocument,
    Redaction,
    RedactionReason,
)
from matters.permissions import require
from matters.privilege.log import prefill
from matters.privilege.page_words import centre_of, page_words
from matters.productions.bates.active import remove_active_content, scrub_carriers
from matters.productions.bates.leaks import MIN_SECRET_CHARS, words
from matters.productions.bates.redact import apply_boxes, placeholder_document, redact_as_image, scrub_document

# A real redaction "covers" an improper box when it reaches this close (points) to each of its edges.
COVER_TOLERANCE_PT = 1.0
MIN_BOX_PT = 2.0


def improper_redactions_record(*, page: Page, found: list[dict]) -> list[ImproperRedaction]:
    """Store the improper redactions ingest found on ``page`` (``[{"rect": [x0, y0, x1, y1], "text": ...}]``)
    and record them in the matter's audit log."""
    rows = ImproperRedaction.objects.bulk_create(
        ImproperRedaction(page=page, x0=item["rect"][0], y0=item["rect"][1], x1=item["rect"][2], y1=item["rect"][3],
                          hidden_text=item["text"][:5000])
        for item in found
    )
    exhibit = page.exhibit
    audit_record(action="page.improper_redaction", matter=exhibit.matter, obj=page, file_sha256=exhibit.sha256,
                 detail={"exhibit": exhibit.pk, "page": page.number, "boxes": len(rows)})
    return rows


def _covered(box: ImproperRedaction, redactions: list[Redaction]) -> bool:
    return any(r.x0 <= box.x0 + COVER_TOLERANCE_PT and r.y0 <= box.y0 + COVER_TOLERANCE_PT
               and r.x1 >= box.x1 - COVER_TOLERANCE_PT and r.y1 >= box.y1 - COVER_TOLERANCE_PT for r in redactions)


def improper_open(page: Page) -> list[ImproperRedaction]:
    """The improper redactions of ``page`` that still block a production: not confirmed, not covered by a real
    redaction."""
    return _still_open(list(page.improper_redactions.all()), list(page.redactions.all()))


def _still_open(improper: list[ImproperRedaction], redactions: list[Redaction]) -> list[ImproperRedaction]:
    """Those of a page's ``improper`` redactions that are not confirmed and that none of its ``redactions``
    covers."""
    return [box for box in improper if not box.confirmed_reason and not _covered(box, redactions)]


def production_blockers(exhibits: list[Exhibit], withheld_ids: set[int]) -> list[str]:
    """One message per page that stops a production of ``exhibits``: an open improper redaction on a page of a
    document that is not withheld (a withheld document's pages are not produced)."""
    pages = (Page.objects.filter(exhibit__in=[e.content for e in exhibits if e.pk not in withheld_ids],
                                 improper_redactions__isnull=False)
             .distinct().select_related("exhibit").prefetch_related("improper_redactions", "redactions"))
    messages = []
    for page in pages:
        open_boxes = improper_open(page)
        if open_boxes:
            words = "; ".join(f"“{box.hidden_text[:80]}”" for box in open_boxes)
            messages.append(
                f"{page.exhibit.display_label}, page {page.number}: improper redaction — text under a box is readable "
                f"({words}). Redact it for real on the page, withhold the document, or have an attorney confirm it "
                "with a reason."
            )
    return messages


def improper_redaction_confirm(*, page: Page, reason: str, user) -> int:
    """An attorney confirms that the page's improper redactions may be produced as they are (for example the
    text under the box is not privileged); returns how many boxes were confirmed. Raises PermissionDenied for a
    user who may not serve productions, ValidationError without a reason."""
    require(user, "serve_production", page.exhibit.matter)
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": "Give the reason this page may be produced with its text readable under "
                                         "the box."})
    with transaction.atomic():
        count = page.improper_redactions.filter(confirmed_reason="").update(
            confirmed_reason=reason, confirmed_by=user, confirmed_at=timezone.now())
        audit_record(action="page.improper_redaction_confirm", actor=user, matter=page.exhibit.matter, obj=page,
                     detail={"exhibit": page.exhibit_id, "page": page.number, "boxes": count, "reason": reason})
    return count


def _check_box(page: Page, rect) -> tuple[float, float, float, float]:
    try:
        x0, y0, x1, y1 = (float(v) for v in rect)
    except (TypeError, ValueError) as error:
        raise ValidationError("A redaction box needs four numbers (left, top, right, bottom, in points).") from error
    x0, x1 = (min(max(0.0, v), page.width_pt) for v in sorted((x0, x1)))
    y0, y1 = (min(max(0.0, v), page.height_pt) for v in sorted((y0, y1)))
    if x1 - x0 < MIN_BOX_PT or y1 - y0 < MIN_BOX_PT:
        raise ValidationError(f"The box is not on page {page.number} or is too small to redact anything "
                              f"(the page is {page.width_pt:g} x {page.height_pt:g} points).")
    return round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2)


def redaction_add(*, page: Page, rect, reason: str, user, found_by: str = "") -> Redaction:
    """Add a box (x0, y0, x1, y1 in points on the displayed page) to black out on ``page`` when produced.
    Raises PermissionDenied unless ``user`` may change the matter's exhibits (``change_exhibits``,
    :mod:`matters.permissions`); ValidationError for an unknown reason code (on ``reason``) or a box outside the
    page."""
    require(user, "change_exhibits", page.exhibit.matter)
    return redaction_save(page=page, rect=rect, reason=reason, user=user, found_by=found_by)


def redaction_save(*, page: Page, rect, reason: str, user, found_by: str = "") -> Redaction:
    """:func:`redaction_add` for a caller that has already checked ``user`` (one check for the many boxes of a
    search or of a page's improper redactions). Raises ValidationError as :func:`redaction_add` does."""
    check_reason_code(reason)
    x0, y0, x1, y1 = _check_box(page, rect)
    with transaction.atomic():
        redaction = Redaction.objects.create(page=page, x0=x0, y0=y0, x1=x1, y1=y1, reason=reason,
                                             found_by=found_by[:200], created_by=user)
        audit_record(action="redaction.add", actor=user, matter=page.exhibit.matter, obj=redaction,
                     detail={"exhibit": page.exhibit_id, "page": page.number, "rect": [x0, y0, x1, y1],
                             "reason": reason, "found_by": found_by[:200]})
    return redaction


def check_reason_code(reason: str) -> str:
    """Return ``reason`` if it is a redaction reason code; ValidationError on ``reason`` naming the codes else."""
    if reason not in RedactionReason.values:
        raise ValidationError({"reason": f"Choose a reason code ({', '.join(RedactionReason.values)})."})
    return reason


def improper_redact(*, page: Page, reason: str, user) -> list[Redaction]:
    """Put a real redaction (reason code ``reason``) over each open improper redaction of ``page``
    (:func:`improper_open`), a point wider on each side so it covers the box; all of them or none, each audited
    (``redaction.add``). Returns the redactions added (none when no box is open). Raises PermissionDenied unless
    ``user`` may change the matter's exhibits; ValidationError for an unknown reason code."""
    require(user, "change_exhibits", page.exhibit.matter)
    check_reason_code(reason)
    with transaction.atomic():
        return [redaction_save(page=page, rect=(box.x0 - 1, box.y0 - 1, box.x1 + 1, box.y1 + 1), reason=reason,
                               user=user)
                for box in improper_open(page)]


def redaction_delete(*, redaction: Redaction, user) -> None:
    """Remove a redaction box (productions already made keep theirs). Removing a box lets its words reach the
    next production, so it needs what withholding a document needs: an attorney of the matter
    (``remove_redaction``, :mod:`matters.permissions`); PermissionDenied for anyone else, assistants included,
    whoever drew the box."""
    page = redaction.page
    require(user, "remove_redaction", page.exhibit.matter)
    with transaction.atomic():
        audit_record(action="redaction.delete", actor=user, matter=page.exhibit.matter, obj=redaction,
                     detail={"exhibit": page.exhibit_id, "page": page.number, "rect": list(redaction.rect),
                             "reason": redaction.reason})
        redaction.delete()


# --- productions ---------------------------------------------------------------------------------------------

def check_withheld(withheld: dict[int, dict], user, matter) -> dict[int, dict]:
    """Validate a production's withheld documents: ``{exhibit id: {"basis", "basis_text", "description"}}``.
    Raises ValidationError for a missing basis or description, PermissionDenied for anyone but an attorney of
    the matter (withholding is part of serving a production: :mod:`matters.permissions`)."""
    if withheld:
        require(user, "serve_production", matter)
    checked = {}
    for exhibit_id, item in withheld.items():
        basis, text = item.get("basis", ""), (item.get("basis_text") or "").strip()[:120]
        description = (item.get("description") or "").strip()
        if basis not in PrivilegeBasis.values or (basis == PrivilegeBasis.CUSTOM and not text):
            raise ValidationError("A withheld document needs its privilege basis (attorney-client, work product, "
                                  "or the basis stated in words).")
        if not description:
            raise ValidationError("Describe each withheld document for the privilege log (what it is, without "
                                  "revealing the privileged content).")
        try:
            text.encode("cp1252")
        except UnicodeEncodeError as error:
            raise ValidationError("The stated basis has characters the placeholder page cannot print; write it "
                                  "in Latin letters.") from error
        checked[int(exhibit_id)] = {"basis": basis, "basis_text": text if basis == PrivilegeBasis.CUSTOM else "",
                                    "description": description}
    return checked


def privilege_entries_create(*, documents: list[ProductionDocument], withheld: dict[int, dict]) -> None:
    """Create the privilege log rows of a new production: each withheld document, and each document with
    redaction boxes, prefilled from the document's metadata."""
    redacted = dict(
        (exhibit_id, sorted(set(reasons.split(","))))
        for exhibit_id, reasons in _redaction_reasons([d.exhibit_id for d in documents]).items()
    )
    rows = []
    for document in documents:
        item = withheld.get(document.exhibit_id)
        if item is None and document.exhibit_id not in redacted:
            continue
        rows.append(PrivilegeLogEntry(
            document=document, withheld=item is not None, basis=(item or {}).get("basis", ""),
            basis_text=(item or {}).get("basis_text", ""), description=(item or {}).get("description", ""),
            redaction_reasons="" if item else ", ".join(redacted[document.exhibit_id]),
            **prefill(document.exhibit),
        ))
    PrivilegeLogEntry.objects.bulk_create(rows)


def _redaction_reasons(exhibit_ids: list[int]) -> dict[int, str]:
    reasons: dict[int, set[str]] = {}
    for exhibit_id, reason in Redaction.objects.filter(page__exhibit_id__in=exhibit_ids).values_list(
            "page__exhibit_id", "reason"):
        reasons.setdefault(exhibit_id, set()).add(reason)
    return {k: ",".join(sorted(v)) for k, v in reasons.items()}


def entry_of(document: ProductionDocument) -> PrivilegeLogEntry | None:
    try:
        return document.privilege_entry
    except PrivilegeLogEntry.DoesNotExist:
        return None


def produced_title(document: ProductionDocument) -> str:
    """The title a production may show for a document (index, bookmark, DAT): a withheld one's own title could
    itself reveal privileged content, so it reads as withheld."""
    entry = entry_of(document)
    if entry is not None and entry.withheld:
        return f"Withheld: {entry.basis_label}"
    return document.exhibit.title


@dataclass
class ProducedSource:
    """What a production stamps for one document: the PDF (pages in order), each page's text for TEXT/,
    whether the pages stand for the exhibit's own pages (False for a withheld document's placeholder), and the
    active content removed from it (:func:`matters.productions.bates.active.remove_active_content`)."""

    pdf: pymupdf.Document
    page_texts: list[str]
    own_pages: bool
    removed: list[str] = field(default_factory=list)


def produced_source(document: ProductionDocument) -> ProducedSource:
    """Open the document as it is to be produced: the placeholder page if withheld; else the display PDF with
    every redaction box applied for real (and what the document carries outside its pages scrubbed:
    :func:`scrub_carriers`, :func:`scrub_document`), the text of a redacted page read again from the redacted page
    (OCR for a scanned page); active content removed from every produced document. Raises RedactionFailed if text
    survives a box."""
    exhibit, entry = document.exhibit, entry_of(document)
    if entry is not None and entry.withheld:
        basis = entry.basis_label
        return ProducedSource(placeholder_document(basis), [f"DOCUMENT WITHHELD ON THE BASIS OF PRIVILEGE\n"
                                                            f"Privilege basis: {basis}"], own_pages=False)
    exhibit = exhibit.content  # a family's duplicate attachment is produced with the pages it repeats
    pdf = pymupdf.open(storage.display_pdf(exhibit))
    removed = remove_active_content(pdf)
    pages = list(exhibit.pages.order_by("number").prefetch_related("redactions"))
    texts = [p.text for p in pages]
    reasons: set[str] = set()
    redacted_words: set[str] = set()
    for index, page in enumerate(pages):
        boxes = [(r.rect, r.reason) for r in page.redactions.all()]
        if not boxes:
            continue
        reasons.update(reason for _, reason in boxes)
        redacted_words |= _words_under(page, pdf[index], [pymupdf.Rect(rect) for rect, _ in boxes])
        if not apply_boxes(pdf[index], boxes):
            with pymupdf.open(storage.display_pdf(exhibit)) as original:
                remade = redact_as_image(original[index], boxes)
            pdf.delete_page(index)
            pdf.insert_pdf(remade, start_at=index)
        texts[index] = _text_after_redaction(pdf[index], page)
    if reasons:
        scrub_carriers(pdf, redacted_words)
        scrub_document(pdf)
        _log_redacted(document, entry, reasons)
        _log_without_redacted_words(document, redacted_words)
    elif entry is not None:  # its boxes were removed before the worker stamped it: nothing to log
        PrivilegeLogEntry.objects.filter(pk=entry.pk).delete()
    return ProducedSource(pdf, texts, own_pages=True, removed=removed)


def _log_without_redacted_words(document: ProductionDocument, redacted_words: set[str]) -> None:
    """Empty the prefilled fields of the document's log row (date, author, recipients, type: read from the
    document's metadata and first page) that hold a word redacted from it: the log goes to the other side too.
    The production's leak scan reads every field of the log afterwards."""
    entry = PrivilegeLogEntry.objects.filter(document=document).first()
    if entry is None:
        return
    cleared = {name: "" for name in ("date", "author", "recipients", "document_type")
               if redacted_words & set(words(getattr(entry, name)))}
    if cleared:
        PrivilegeLogEntry.objects.filter(pk=entry.pk).update(**cleared)


def _words_under(page: Page, pdf_page: pymupdf.Page, rects: list[pymupdf.Rect]) -> set[str]:
    """The words (as the leak scan compares them) whose centre is under one of ``rects`` (displayed page): from
    the text layer, or for a scanned page from Tesseract's word boxes (:func:`.page_words.page_words`), so a
    name under a box on a scan is cleared from the privilege log too."""
    under = set()
    for word in page_words(page, pdf_page):
        if any(centre_of(word) in rect for rect in rects):
            under.update(w for w in words(word.text) if len(w) >= MIN_SECRET_CHARS)
    return under


def _log_redacted(document: ProductionDocument, entry: PrivilegeLogEntry | None, reasons: set[str]) -> None:
    """Make the log row say what was applied: boxes may have been added between starting the production and
    the worker stamping it."""
    applied = ", ".join(sorted(reasons))
    if entry is None:
        PrivilegeLogEntry.objects.create(document=document, redaction_reasons=applied, **prefill(document.exhibit))
    elif entry.redaction_reasons != applied:
        PrivilegeLogEntry.objects.filter(pk=entry.pk).update(redaction_reasons=applied)


def _text_after_redaction(pdf_page: pymupdf.Page, page: Page) -> str:
    if page.source != Page.Source.OCR:
        return pdf_page.get_text("text").replace("\x00", "")
    dpi = settings.LAWDESK_OCR_DPI
    pixmap = pdf_page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    with tempfile.TemporaryDirectory(prefix="lawdesk-redact-") as work:
        path = Path(work) / "page.pgm"
        pixmap.save(path)
        return ocr_page_image(path, lang=settings.LAWDESK_OCR_LANG, dpi=dpi).text


# --- pages ----------------------------------------------------------------------------------------------------

def _percent_box(page: Page, box) -> dict:
    return {"left": 100 * box.x0 / page.width_pt, "top": 100 * box.y0 / page.height_pt,
            "width": 100 * (box.x1 - box.x0) / page.width_pt, "height": 100 * (box.y1 - box.y0) / page.height_pt}


def page_privilege_context(page: Page) -> dict:
    """What the page viewer shows about redaction: the page's redaction boxes and improper redactions, each with
    its place in per cent of the page (for overlays on the page image), and the reason codes."""
    # The models' order within one page, without its page -> exhibit -> matter joins.
    redactions = list(page.redactions.order_by("y0", "x0", "id"))
    improper = list(page.improper_redactions.order_by("y0", "x0", "id"))
    open_ids = {box.pk for box in _still_open(improper, redactions)}
    return {
        "redactions": [{"box": r, "place": _percent_box(page, r)} for r in redactions],
        "improper": [{"box": b, "place": _percent_box(page, b), "open": b.pk in open_ids} for b in improper],
        "improper_open": bool(open_ids),
        "reasons": RedactionReason.choices,
    }


def exhibit_privilege_context(exhibit: Exhibit) -> dict:
    """What the exhibit page shows about redaction: pages with improper redactions (and their hidden words),
    the number of redaction boxes per page, and the reason codes for the search form."""
    flagged = ImproperRedaction.objects.filter(page__exhibit=exhibit).select_related("page").order_by("page__number")
    boxes: dict[int, int] = {}
    for number in Redaction.objects.filter(page__exhibit=exhibit).values_list("page__number", flat=True):
        boxes[number] = boxes.get(number, 0) + 1
    return {"improper_boxes": list(flagged), "redaction_counts": sorted(boxes.items()),
            "reasons": RedactionReason.choices}
