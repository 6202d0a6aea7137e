"""Exports of approved draft versions: DOCX, PDF, and the verification report (PDF) for the attorney's file.

An export is generated material (origin ``export``), never evidence: each file is recorded as a
``GeneratedDocument`` with the SHA-256 of its bytes, so the same file uploaded back is recognised, and in the
matter's audit log. Every export carries the audit chain's head hash at the time it was made (in the footer of
every page, and in the document properties), so a copy kept outside the database can later show that the log
it came from was not rewritten: that hash must still be an entry of the chain, and the chain must still verify.
"""

from dataclasses import dataclass

import pymupdf
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from matters.audit.services import audit_record, audit_verify
from matters.html_pdf import LayoutLostText
from matters.models import DraftVersion, Finding, GeneratedDocument, Origin
from matters.permissions import require
from matters.provenance import generated_record, sha256_bytes

from .export_docx import docx_bytes
from .export_pdf import draft_pdf_bytes, report_pdf_bytes
from .review import version_history
from .toa import TableOfAuthorities, toa_build
from .toa_pages import docx_with_table

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
EXPORT_KINDS = {
    "docx": ("DOCX", DOCX_TYPE, ".docx"),
    "pdf": ("PDF", "application/pdf", ".pdf"),
    "report": ("Verification report (PDF)", "application/pdf", "-verification.pdf"),
}


@dataclass(frozen=True)
class ExportFile:
    """One export as served: its bytes, their SHA-256 (hex), the file name and type, the audit head hash it
    carries, and its record as generated material."""

    content: bytes
    sha256: str
    filename: str
    content_type: str
    audit_head: str
    generated: GeneratedDocument


def pdf_text(content: bytes) -> str:
    """The text of a PDF's pages, ligatures (the layout's "fi", "fl") written out as their letters."""
    flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES
    with pymupdf.open("pdf", content) as document:
        return "\n".join(page.get_text(flags=flags) for page in document)


def _footer(version: DraftVersion, audit_head: str) -> str:
    """Two lines, ASCII only (the PDF footer is written with a base-14 font): the version's SHA-256, then the
    audit log's head hash and the approval."""
    approver = version.approved_by.get_username() if version.approved_by else "-"
    return (f"Version {version.number} SHA-256 {version.sha256}\n"
            f"Audit log head {audit_head} | approved {version.approved_at:%Y-%m-%d %H:%M} UTC by {approver}")


def preview_footer(version: DraftVersion, audit_head: str) -> str:
    """The footer of ``version``'s export as it would be now, for laying the brief out before it is exported: the
    export's own when the version is approved, else the same two lines, as long, saying it is not."""
    if version.approved_at is not None:
        return _footer(version, audit_head)
    return (f"Version {version.number} SHA-256 {version.sha256}\n"
            f"Audit log head {audit_head} | not approved yet (preview)")


def _source_label(source: dict) -> str:
    where = f"Exhibit {source.get('label') or source.get('exhibit')}, p. {source.get('page')}"
    return f"{source['bates']} ({where})" if source.get("bates") else where


def report_context(version: DraftVersion, audit_head: str) -> dict:
    """What the verification report shows: the version (who made it, its SHA-256, the approval), every finding
    in reading order with its status and source pages, the reviewer attacks, and the audit head hash."""
    draft = version.draft
    findings = []
    for finding in version.findings.select_related("resolved_by").order_by("start", "end", "id"):
        findings.append({
            "finding": finding,
            "sources": [_source_label(s) for s in finding.sources or []],
            "resolved_by": finding.resolved_by.get_username() if finding.resolved_by else "",
            "was_blocking": finding.verdict in Finding.BLOCKING_STATUSES,
        })
    history = next((row for row in version_history(draft) if row.version.pk == version.pk), None)
    return {
        "matter": draft.matter, "draft": draft, "version": version, "findings": findings,
        "attacks": list(version.attacks.order_by("start", "id")), "audit_head": audit_head,
        "made_by": history.made_by if history else "", "now": timezone.now(),
        "kinds": dict(Finding.Kind.choices), "statuses": dict(Finding.Status.choices),
    }


def version_table(version: DraftVersion) -> TableOfAuthorities:
    """The table of authorities of ``version``'s text, pages not yet set: its citations as the verifier reads them
    now, an attorney's waivers of citation findings on this version honoured (:func:`matters.drafts.toa.toa_build`)."""
    waived = version.findings.filter(status=Finding.Status.WAIVED, kind__in=(
        Finding.Kind.CASE_CITATION, Finding.Kind.STATUTE_CITATION)).values_list("start", "end")
    return toa_build(matter=version.draft.matter, text=version.text, waived=list(waived))


def draft_export(*, version: DraftVersion, user: AbstractBaseUser, kind: str) -> ExportFile:
    """Export an approved ``version`` as ``kind`` (``docx``, ``pdf`` or ``report``); record it as generated
    material and in the audit log (``draft.export``, with the file's SHA-256 and the head hash it carries).

    A DOCX opens with the brief's table of authorities when it cites any (:mod:`matters.drafts.toa_pages`).

    Raises PermissionDenied unless ``user`` may export the matter's drafts (``export_drafts``, every member:
    :mod:`matters.permissions`); ValidationError for an unknown kind, a version not approved, a
    matter whose audit chain does not verify (an export would then vouch for a log that was altered), or a DOCX
    whose table of authorities cannot be built (a citation no authority of the matter grounds, or one the
    verifier blocks), the message listing each such citation.
    """
    require(user, "export_drafts", version.draft.matter)
    if kind not in EXPORT_KINDS:
        raise ValidationError(f"Unknown export {kind!r}: choose DOCX, PDF or the verification report.")
    if version.approved_at is None:
        raise ValidationError(f"Version {version.number} is not approved. Only an approved version is exported: "
                              "approve it (or the latest version) first.")
    matter = version.draft.matter
    chain = audit_verify(matter=matter)
    if not chain.ok:
        raise ValidationError(f"The matter's audit log does not verify (entry {chain.broken_seq}: {chain.problem}). "
                              "Nothing is exported until that is looked into; run manage.py audit_verify.")
    label, content_type, suffix = EXPORT_KINDS[kind]
    title = f"{version.draft.title} v{version.number}"
    footer = _footer(version, chain.head_hash)
    if kind == "docx":
        # A brief that cites authorities carries its table, built again now and paged as printed; one that cites
        # none is exported as it is.
        table = version_table(version)
        if not table.ok:
            raise ValidationError("Not exported as DOCX. " + table.refusal())
        if table.entries:
            content = docx_with_table(table, text=version.text, title=title, footer=footer)
        else:
            content = docx_bytes(text=version.text, title=title, footer=footer)
        text = version.text
    else:
        try:
            if kind == "pdf":
                content = draft_pdf_bytes(text=version.text, title=title, footer=footer)
                text = version.text
            else:
                content = report_pdf_bytes(context=report_context(version, chain.head_hash),
                                           title=f"Verification report: {title}", footer=footer)
                text = pdf_text(content)
        except LayoutLostText as exc:
            raise ValidationError(f"Not exported as {label}: {exc} The DOCX export keeps every word.") from exc
    digest = sha256_bytes(content)
    with transaction.atomic():
        generated = generated_record(matter=matter, origin=Origin.EXPORT, title=f"{title} ({label})", text=text,
                                     content=content)
        audit_record(action="draft.export", actor=user, matter=matter, obj=version, file_sha256=digest,
                     detail={"kind": kind, "draft": version.draft_id, "number": version.number,
                             "version_sha256": version.sha256, "audit_head": chain.head_hash,
                             "generated": generated.pk})
    filename = f"{slugify(version.draft.title)[:60] or 'draft'}-v{version.number}{suffix}"
    return ExportFile(content=content, sha256=digest, filename=filename, content_type=content_type,
                      audit_head=chain.head_hash, generated=generated)
