"""The provenance firewall: what LawDesk generated is recorded, recognised when it comes back, and kept out of
the evidence; exhibit text that talks to a model is flagged.

Two failures from real use drive this: an evidence builder fed the system's own earlier outputs back in as
client evidence, and models "grounded" new drafts on text they had written themselves.
"""

import hashlib
import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from rapidfuzz import fuzz

from matters.audit.services import audit_record

from .models import GENERATED_ORIGINS, Exhibit, GeneratedDocument, Matter, Origin, Page
from .permissions import require
from .validation import clean_reason

# Phrases that address instructions to a language model rather than state facts. A match flags the page for an
# attorney; it never deletes anything.
_INJECTION_PATTERNS = [
    r"\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|earlier|all)\b.{0,20}\b(instructions?|prompts?|rules?)",
    r"\bas (the|an?) (drafting |legal |AI |language[- ]model )?(assistant|model|AI)\b.{0,40}\b(must|should|will)\b",
    r"\byou are (now )?(an?|the) (AI|assistant|language model|chatbot)\b",
    r"\b(system|developer) (prompt|message|instructions?)\b",
    r"<\|?(im_start|im_end|start_of_turn|end_of_turn|system)\|?>|\[/?INST\]|<<SYS>>",
    r"\b(new|updated|override) instructions?\s*:",
]
_INJECTION = re.compile("|".join(f"(?:{p})" for p in _INJECTION_PATTERNS), re.IGNORECASE | re.DOTALL)


def injection_reason_for(text: str) -> str:
    """A reason if ``text`` addresses instructions to a model, quoting the words that did; else ''."""
    match = _INJECTION.search(text)
    if match is None:
        return ""
    quoted = " ".join(match.group(0).split())[:120]
    return f"This page addresses instructions to an AI model (“{quoted}”): possible prompt injection."


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def generated_record(*, matter: Matter, origin: str, title: str, text: str = "", content: bytes | None = None,
                     sha256: str = "") -> GeneratedDocument:
    """Record something LawDesk generated (a draft version, a production file, ...). ``content`` or ``sha256``
    identifies its bytes. Raises ValidationError for an evidence origin."""
    if origin not in GENERATED_ORIGINS:
        raise ValidationError(f"{origin!r} is not an origin of generated material.")
    digest = sha256 or (sha256_bytes(content) if content is not None else "")
    return GeneratedDocument.objects.create(matter=matter, origin=origin, title=title[:300], sha256=digest, text=text)


def generated_match_for(sha256: str) -> GeneratedDocument | None:
    """The generated document with these exact bytes, in any matter."""
    return GeneratedDocument.objects.filter(sha256=sha256).exclude(sha256="").first()


def hash_match_reason(match: GeneratedDocument, exhibit_matter_id: int) -> str:
    """The notice for an upload whose bytes LawDesk generated. Within the same matter it names the document;
    otherwise it says only that LawDesk generated the bytes: neither the other matter nor what kind of document
    it was is revealed to people who may not be members of it."""
    if match.matter_id != exhibit_matter_id:
        return ("LawDesk generated this file itself (its bytes match material LawDesk produced). It is kept but is "
                "not evidence; an attorney can override this with a reason.")
    return (f"This file is byte for byte LawDesk's own {match.get_origin_display().lower()} (“{match.title}”). It "
            "is kept but is not evidence; an attorney can override this with a reason.")


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def exhibit_check_near_duplicate(exhibit: Exhibit) -> bool:
    """Mark a ready exhibit generated if its text is nearly identical to a generated draft (or other generated
    text) of its matter; the threshold is LAWDESK_NEAR_DUPLICATE_RATIO (0-1). Returns whether it was marked."""
    if exhibit.generated_reason or exhibit.origin not in {o.value for o in Origin} - GENERATED_ORIGINS:
        return False
    text = _normalised(" ".join(exhibit.pages.order_by("number").values_list("text", flat=True)))
    if len(text) < 200:
        return False
    threshold = settings.LAWDESK_NEAR_DUPLICATE_RATIO * 100
    for generated in exhibit.matter.generated_documents.exclude(text=""):
        other = _normalised(generated.text)
        if abs(len(other) - len(text)) > (1 - settings.LAWDESK_NEAR_DUPLICATE_RATIO) * max(len(other), len(text)):
            continue  # lengths too far apart for the ratio to reach the threshold
        score = fuzz.ratio(text, other, score_cutoff=threshold)
        if score:
            with transaction.atomic():
                Exhibit.objects.filter(pk=exhibit.pk).update(
                    generated_match=generated,
                    updated_at=timezone.now(),
                    generated_reason=(
                        f"This file's text is {score:.0f}% the same as LawDesk's own "
                        f"{generated.get_origin_display().lower()} “{generated.title}”. It is kept but is not "
                        "evidence; an attorney can override this with a reason."),
                )
                audit_record(action="exhibit.marked_generated", matter=exhibit.matter, obj=exhibit,
                             file_sha256=exhibit.sha256, detail={"generated": generated.pk, "similarity": score})
            exhibit.refresh_from_db()
            return True
    return False


def exhibit_override_generated(*, exhibit: Exhibit, user, reason: str) -> Exhibit:
    """Count a marked exhibit as evidence after all (an opposing brief quoting ours at length). Attorneys only;
    the reason is recorded in the audit log. Raises ValidationError without a reason or a marking."""
    require(user, "decide_evidence", exhibit.matter)
    if not exhibit.generated_reason:
        raise ValidationError("This exhibit is not marked as generated.")
    reason = clean_reason(reason, what="why this file is evidence")
    with transaction.atomic():
        Exhibit.objects.filter(pk=exhibit.pk).update(generated_override_reason=reason, generated_override_by=user,
                                                           updated_at=timezone.now())
        exhibit.refresh_from_db()
        audit_record(action="exhibit.generated_override", actor=user, matter=exhibit.matter, obj=exhibit,
                     file_sha256=exhibit.sha256, detail={"reason": reason, "marking": exhibit.generated_reason})
    return exhibit


def page_clear_injection(*, page: Page, user, reason: str) -> Page:
    """An attorney's decision that a flagged page is ordinary evidence. Raises ValidationError without a reason."""
    require(user, "decide_evidence", page.exhibit.matter)
    reason = clean_reason(reason, what="why this page is safe to use as evidence")
    with transaction.atomic():
        Page.objects.filter(pk=page.pk).update(injection_cleared_reason=reason, injection_cleared_by=user)
        page.refresh_from_db()
        audit_record(action="page.injection_cleared", actor=user, matter=page.exhibit.matter, obj=page,
                     detail={"reason": reason, "flag": page.injection_reason})
    return page
