"""Writes for drafts: versions, verification, waivers and confirmations of findings, approval.

Every version is recorded as generated material (origin ``draft``), so its text coming back as an upload is kept
out of the evidence. Approval is refused here, not only in the page, while a blocking finding is open.
"""

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from typing import BinaryIO

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.db.models import Max
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_record
from matters.models import (
    AuditEntry,
    Draft,
    DraftVersion,
    Exhibit,
    Finding,
    Matter,
    Origin,
    Page,
    Production,
    ReviewAttack,
)
from matters.permissions import require
from matters.provenance import generated_record
from matters.validation import clean_reason

from .verifier.assertions import uncited_assertions
from .verifier.check import verify_text
from .word_merge import MIN_COMMON_WORDS, Merged, merge
from .word_reading import WordDocument, WordUnreadable, read_word

# A title made from a job's instructions: long enough to tell drafts apart in a list.
TITLE_MAX_CHARS = 120
TITLE_FIELD_CHARS = 300  # Draft.title's max_length


def draft_title_from(text: str, *, limit: int = TITLE_MAX_CHARS) -> str:
    """Return ``text`` on one line as a title of at most ``limit`` characters, cut after a whole word with an
    ellipsis (never mid-word: "...appeal is pending, re" becomes "...appeal is pending…")."""
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    cut = words[: limit - 1]
    if words[limit - 1] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-–—") + "…"


def draft_rename(*, draft: Draft, title: str, user: AbstractBaseUser) -> Draft:
    """Give ``draft`` a new title (whitespace collapsed), recorded in the audit log with the old one. Attorneys
    and assistants of the matter, who may edit drafts, may rename them: raise PermissionDenied for anyone else,
    ValidationError for an empty title or one past 300 characters."""
    require(user, "edit_drafts", draft.matter)
    title = " ".join(title.split())
    if not title:
        raise ValidationError({"title": "A draft needs a title; the old one was kept."})
    if len(title) > TITLE_FIELD_CHARS:
        raise ValidationError({"title": f"A title has at most {TITLE_FIELD_CHARS} characters; this one has "
                                        f"{len(title)}."})
    if title == draft.title:
        return draft
    with transaction.atomic():
        old = draft.title
        draft.title = title
        draft.save(update_fields=["title"])
        audit_record(action="draft.rename", actor=user, matter=draft.matter, obj=draft,
                     detail={"from": old, "to": title})
    return draft


def draft_create(*, matter: Matter, title: str, text: str, author_kind: str, kind: str = "",
                 author: AbstractBaseUser | None = None, model_name: str = "", server_name: str = "",
                 provenance: dict | None = None) -> DraftVersion:
    """Create a draft with its first version (not yet verified); return the version."""
    with transaction.atomic():
        draft = Draft.objects.create(matter=matter, title=title[:300], kind=kind, created_by=author)
        return draft_version_create(draft=draft, text=text, author_kind=author_kind, author=author,
                                    model_name=model_name, server_name=server_name, provenance=provenance)


def draft_version_create(*, draft: Draft, text: str, author_kind: str, author: AbstractBaseUser | None = None,
                         model_name: str = "", server_name: str = "", provenance: dict | None = None,
                         word: dict | None = None) -> DraftVersion:
    """Append a version to ``draft``. ``author_kind`` is ``model`` (with ``model_name``/``server_name`` and the
    pipeline's ``provenance``: job and stage records) or ``person`` (with ``author``; ``word``: what the Word
    file it was made from said, :func:`draft_version_from_word`). Raises ValidationError for an unknown author
    kind; PermissionDenied for an author who may not edit the matter's drafts."""
    require(author, "edit_drafts", draft.matter)
    if author_kind not in DraftVersion.AuthorKind.values:
        raise ValidationError(f"Unknown author kind {author_kind!r}.")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    with transaction.atomic():
        Draft.objects.select_for_update().filter(pk=draft.pk).first()
        number = (draft.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        generated = generated_record(matter=draft.matter, origin=Origin.DRAFT, title=f"{draft.title} v{number}",
                                     text=text, content=text.encode("utf-8"))
        version = DraftVersion.objects.create(
            draft=draft, number=number, text=text, sha256=digest, author_kind=author_kind,
            author=author if author_kind == DraftVersion.AuthorKind.PERSON else None,
            model_name=model_name, server_name=server_name, generated=generated, provenance=provenance or {},
            word=word or {},
        )
        detail = {"draft": draft.pk, "number": number, "author_kind": author_kind, "model": model_name,
                  "server": server_name}
        if word:
            detail["word"] = {key: word.get(key) for key in ("sha256", "name", "size_bytes", "exported_from")}
        audit_record(action="draft.version", actor=author, matter=draft.matter, obj=version, file_sha256=digest,
                     detail=detail)
    return version


@dataclass
class WordVersion:
    """What :func:`draft_version_from_word` made: the new version, what became of the paragraphs (``merged``),
    and how many of the version's paragraphs the verifier judged again (``checked_paragraphs`` of
    ``paragraphs``; the others kept their findings)."""

    version: DraftVersion
    merged: Merged
    paragraphs: int
    checked_paragraphs: int


def _exported_from(word: WordDocument, base: DraftVersion) -> str:
    """The SHA-256 of the version of ``base``'s draft the Word file was exported from ('' when it names none);
    raise ValidationError when it names another draft's version, or a version older than ``base`` that a later
    one changed outside Word (uploading it would undo that change)."""
    if not word.version_sha256s:
        return ""
    draft = base.draft
    mine = {v.sha256: v for v in draft.versions.filter(sha256__in=word.version_sha256s)}
    sha = next((sha for sha in word.version_sha256s if sha in mine), "")
    if not sha:
        other = (DraftVersion.objects.filter(draft__matter=draft.matter, sha256__in=word.version_sha256s)
                 .exclude(draft=draft).select_related("draft").first())
        if other is not None:
            raise ValidationError(f"This Word file is the export of “{other.draft.title}”, version {other.number}, "
                                  f"not of “{draft.title}”. Upload it on that draft's review page.")
        return ""
    for later in draft.versions.filter(number__gt=mine[sha].number, number__lte=base.number).order_by("number"):
        if (later.word or {}).get("exported_from") != sha:
            raise ValidationError(
                f"This Word file was exported from version {mine[sha].number}, and version {later.number} was "
                f"made since, outside this Word file: taking the file as version {base.number + 1} would undo "
                f"version {later.number}'s changes. Export the latest version and make the edits in that file.")
    return sha


def _word_comments(word: WordDocument, merged: Merged, text: str) -> list[dict]:
    """Each comment with where its paragraph is in the new text (``start``/``end``, None for a comment whose
    paragraph is gone: anchored only in deleted text) and the start of that paragraph, in document order."""
    out, placed = [], set()
    for index, paragraph in enumerate(word.paragraphs):
        start, end = merged.paragraphs[index]
        for comment_id in paragraph.comments:
            if comment_id in word.comments and comment_id not in placed:
                placed.add(comment_id)
                anchored = end > start
                out.append({"id": comment_id, **word.comments[comment_id], "start": start if anchored else None,
                            "end": end if anchored else None,
                            "paragraph": " ".join(text[start:end].split())[:160] if anchored else ""})
    out += [{"id": cid, **comment, "start": None, "end": None, "paragraph": ""}
            for cid, comment in word.comments.items() if cid not in placed]
    return out


def draft_version_from_word(*, base: DraftVersion, upload: BinaryIO, original_name: str,
                            user: AbstractBaseUser | None) -> WordVersion:
    """Make the next version of ``base``'s draft from the DOCX an attorney edited in Word (``upload``, a binary
    stream; ``original_name`` as the browser sent it), verify it, and carry the reviewer's attacks over.

    The file is read as Word shows it (:mod:`matters.drafts.word_reading`) and merged over ``base`` paragraph by
    paragraph (:mod:`matters.drafts.word_merge`): an unchanged paragraph keeps its text, so the verifier judges
    only the changed ones and the paragraphs whose claims depend on them. The upload is kept byte for byte as an
    original (``originals/``), recorded as LawDesk's own draft material, and named in the version's audit entry;
    the comments are stored with the version (``DraftVersion.word``). A refused upload is kept byte for byte in
    quarantine and its refusal is in the audit log (``draft.word_refused``).

    Raises PermissionDenied for someone who may not edit the matter's drafts; ValidationError, with the reason,
    when ``base`` is not the latest version, the file is not a DOCX, is password-protected or damaged, is another
    draft's export or an export older than a later edit, has no paragraph of MIN_COMMON_WORDS words or more in
    common with ``base`` (not a version of this draft), or changes nothing."""
    draft, matter = base.draft, base.draft.matter
    require(user, "edit_drafts", matter)
    staged = storage.stage_stream(upload)
    name = original_name[:500]

    def refuse(reason: str):
        storage.commit_staged(staged, quarantined=True)
        audit_record(action="draft.word_refused", actor=user, matter=matter, obj=draft, file_sha256=staged.sha256,
                     detail={"version": base.number, "name": name, "size_bytes": staged.size_bytes,
                             "reason": reason})
        raise ValidationError(reason)

    try:
        latest = draft.versions.order_by("-number").first()
        if latest.pk != base.pk:
            refuse(f"Version {latest.number} was saved after version {base.number}, which this file was uploaded "
                   "on; nothing was made. Upload it on the latest version's page.")
        try:
            word = read_word(staged.path)
            exported_from = _exported_from(word, base)
        except (WordUnreadable, ValidationError) as problem:
            refuse(" ".join(problem.messages) if isinstance(problem, ValidationError) else str(problem))
        merged = merge(base.text, word)
        if not merged.common:
            refuse(f"“{name}” has no paragraph in common with version {base.number} of “{draft.title}” (none of "
                   f"its paragraphs of {MIN_COMMON_WORDS} words or more is unchanged), so it is not a version of "
                   "this draft. Upload the Word file exported from this draft and edited in Word.")
        if not merged.text.strip():
            refuse("The Word file holds no text; nothing was made.")
        if merged.text == base.text and not word.comments:
            refuse(f"The Word file's text is version {base.number}'s, word for word, and it has no comments: "
                   "there is nothing to make a version of.")
        storage.commit_staged(staged, quarantined=False)
        info = {"sha256": staged.sha256, "name": name, "size_bytes": staged.size_bytes,
                "exported_from": exported_from, "base": base.number, "kept": merged.kept, "changed": merged.changed,
                "added": merged.added, "removed": merged.removed, "insertions": word.changes.insertions,
                "deletions": word.changes.deletions, "comments": _word_comments(word, merged, merged.text)}
        with transaction.atomic():
            version = draft_version_create(draft=draft, text=merged.text, author_kind=DraftVersion.AuthorKind.PERSON,
                                           author=user, word=info)
            # The Word file itself, coming back as an exhibit, is recognised as the draft it is.
            generated_record(matter=matter, origin=Origin.DRAFT, title=f"{draft.title} v{version.number} (Word)",
                             sha256=staged.sha256)
            attacks_carry(from_version=base, to_version=version)
    finally:
        storage.discard_staged(staged)
    counts: dict = {}
    results = verify_text(matter=matter, text=version.text, counts=counts)
    draft_verify(version=version, results=results)
    return WordVersion(version, merged, counts["paragraphs"], counts["checked_paragraphs"])


def _finding_key(kind: str, verdict: str, text: str, occurrence: int) -> str:
    raw = json.dumps([kind, verdict, " ".join(text.split()), occurrence])
    return hashlib.sha256(raw.encode()).hexdigest()


def _model_assertions(version: DraftVersion, results: list) -> list:
    """:func:`uncited_assertions` of a model's ``version``, read only outside the spans LawDesk wrote from the
    matter record (``record_spans`` in its provenance: a caption, a signature block), each stretch between them on
    its own, so no sentence runs from a caption into the model's text. Offsets are into the version's text."""
    text = version.text
    record = sorted((int(s), int(e)) for s, e in (version.provenance or {}).get("record_spans") or [])
    if not record:
        return uncited_assertions(text, results)
    stretches, at = [], 0
    for start, end in record:
        if start > at:
            stretches.append((at, start))
        at = max(at, end)
    if at < len(text):
        stretches.append((at, len(text)))
    found = []
    for start, end in stretches:
        inside = [dataclasses.replace(f, start=f.start - start, end=f.end - start) for f in results
                  if start <= f.start and f.end <= end]
        found += [dataclasses.replace(f, start=f.start + start, end=f.end + start)
                  for f in uncited_assertions(text[start:end], inside)]
    return found


def draft_verify(*, version: DraftVersion, results: list | None = None) -> list[Finding]:
    """Run the verifier on ``version`` and store its findings (replacing earlier ones of this version).

    A waiver or confirmation carries over to the same claim (same kind, text, verdict and occurrence) from this
    version's earlier run or from the previous version, and records where it came from. ``results``: what
    :func:`verify_text` gave for this version's text, when the caller ran it already, outside its transaction.
    """
    matter = version.draft.matter
    if results is None:
        results = verify_text(matter=matter, text=version.text)
    if version.author_kind == DraftVersion.AuthorKind.MODEL:
        # A model's sentence stating a fact with nothing to check it against is a finding too (issue 27).
        results = sorted([*results, *_model_assertions(version, results)], key=lambda f: (f.start, f.end))
    resolved: dict[str, Finding] = {}
    previous = version.draft.versions.filter(number__lt=version.number).order_by("-number").first()
    for source in ([previous] if previous else []) + [version]:
        for finding in source.findings.filter(status__in=[Finding.Status.WAIVED, Finding.Status.CONFIRMED]):
            resolved[finding.key] = finding
    seen: dict[tuple[str, str, str], int] = {}
    rows = []
    for result in results:
        ident = (result.kind, result.status, " ".join(result.text.split()))
        occurrence = seen.get(ident, 0)
        seen[ident] = occurrence + 1
        key = _finding_key(result.kind, result.status, result.text, occurrence)
        row = Finding(version=version, kind=result.kind, status=result.status, verdict=result.status,
                      start=result.start, end=result.end, text=result.text, message=result.message,
                      sources=result.sources, detail=result.detail, key=key)
        earlier = resolved.get(key)
        if earlier is not None and result.status != Finding.Status.GROUNDED:
            row.status = earlier.status
            row.resolution_reason = earlier.resolution_reason
            row.resolved_by_id = earlier.resolved_by_id
            row.resolved_at = earlier.resolved_at
            row.carried_from = earlier if earlier.version_id != version.pk else earlier.carried_from
        rows.append(row)
    with transaction.atomic():
        version.findings.all().delete()
        Finding.objects.bulk_create(rows)
        DraftVersion.objects.filter(pk=version.pk).update(verified_at=timezone.now(),
                                                          verified_under=_reading_of(matter.pk))
        version.refresh_from_db()
        counts: dict[str, int] = {}
        for row in rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        audit_record(action="draft.verify", matter=matter, obj=version, file_sha256=version.sha256,
                     detail={"findings": counts, "blocking": sum(r.status in Finding.BLOCKING_STATUSES for r in rows)})
    return list(version.findings.all())


# What of the matter decides how a draft is read (a bare rule's set, numeric dates, amounts): kept with each
# verification (``DraftVersion.verified_under``), and a change of any makes the version stale.
_READING_FIELDS = ("court", "date_order", "number_format")


def _reading_of(matter_id: int) -> dict[str, str]:
    """The matter's :data:`_READING_FIELDS` as stored now (read again: a caller's matter may be an old copy)."""
    return Matter.objects.filter(pk=matter_id).values(*_READING_FIELDS).first() or {}


def draft_stale_reason(*, version: DraftVersion) -> str:
    """Why ``version``'s findings may no longer hold, or '' when they do: the matter's court, order of numeric
    dates or number format changed; an exhibit of the matter (evidence or authority) added or changed; a production
    finished or served; a page flagged as a possible prompt injection cleared as evidence; or a deadline saved or
    deleted, after the version was last verified. (A version verified before its reading was kept has only the
    rest.) A version never verified, or approved, is not stale (approval verified it again)."""
    if version.verified_at is None or version.approved_at is not None:
        return ""
    matter = version.draft.matter
    under, now = version.verified_under or {}, _reading_of(matter.pk)
    for name in _READING_FIELDS:
        if name in under and under[name] != now.get(name):
            field = Matter._meta.get_field(name)
            shown = dict(field.choices) if field.choices else {}
            before, after = (shown.get(v, v) or "none" for v in (under[name], now.get(name)))
            return (f"The matter's {field.verbose_name} changed from “{before}” to “{after}” after this version was "
                    "verified")
    # Ready exhibits only: one being read changes with every page it stores, and the verifier reads none of it
    # until it is ready (then its updated_at is after the verification again).
    changed = (Exhibit.objects.filter(matter=matter, updated_at__gt=version.verified_at, status=Exhibit.Status.READY)
               .exclude(origin__in=[Origin.DRAFT, Origin.REVIEW]).order_by("label_seq", "id").first())
    if changed is not None:
        return (f"Exhibit {changed.label} ({changed.title or changed.original_name}) was added or changed after "
                "this version was verified")
    production = Production.objects.filter(matter=matter).filter(
        models.Q(finished_at__gt=version.verified_at) | models.Q(served_at__gt=version.verified_at)).first()
    if production is not None:
        return f"Production {production} was made or served after this version was verified"
    # A flagged page is no evidence until an attorney clears it; clearing changes no exhibit, only the page.
    cleared = AuditEntry.objects.filter(matter=matter, action="page.injection_cleared",
                                        at__gt=version.verified_at).order_by("seq").first()
    if cleared is not None:
        page = Page.objects.filter(pk=cleared.object_id).select_related("exhibit").first()
        where = f"Page {page.number} of Exhibit {page.exhibit.label}" if page is not None else "A page"
        return (f"{where}, flagged as a possible prompt injection, was cleared as evidence after this version was "
                "verified")
    # A deadline the draft states is checked against the saved ones; a deletion leaves no row, only its entry.
    changed_deadline = AuditEntry.objects.filter(
        matter=matter, action__in=["deadline.save", "deadline.delete"], at__gt=version.verified_at).first()
    if changed_deadline is not None:
        verb = "saved" if changed_deadline.action == "deadline.save" else "deleted"
        title = changed_deadline.detail.get("title", "")
        return f"The deadline “{title}” was {verb} after this version was verified"
    return ""


class StaleEdit(ValidationError):
    """An edit made on a version that is no longer the draft's latest: ``latest`` is the version saved since."""

    def __init__(self, message: str, latest: DraftVersion):
        super().__init__(message)
        self.latest = latest


def draft_version_edit(*, base: DraftVersion, text: str, user: AbstractBaseUser) -> DraftVersion | None:
    """Save ``text`` (line breaks as ``\n``) as the next version of ``base``'s draft, written by ``user``; carry
    the reviewer's attacks over (re-anchored; those whose quoted span is gone become outdated) and verify it.
    Returns the new version, or None when the text is ``base``'s own (nothing to save). Only the draft's latest
    version may be edited: StaleEdit (a ValidationError carrying the latest version) when another was saved
    since; ValidationError for an empty text; PermissionDenied for a user who may not edit the matter's
    drafts."""
    require(user, "edit_drafts", base.draft.matter)
    with transaction.atomic():
        latest = base.draft.versions.select_for_update().order_by("-number").first()
        if latest.pk != base.pk:
            raise StaleEdit(f"Version {latest.number} was saved while you edited version {base.number}; your text "
                            "was not saved. Copy your changes into the latest version.", latest)
        if not text.strip():
            raise ValidationError("The draft is empty; nothing was saved.")
        if text == base.text:
            return None
        version = draft_version_create(draft=base.draft, text=text, author_kind=DraftVersion.AuthorKind.PERSON,
                                       author=user)
        attacks_carry(from_version=base, to_version=version)
    draft_verify(version=version)
    return version


def draft_reverify_if_stale(*, version: DraftVersion) -> str:
    """Verify ``version`` again when it is its draft's latest and :func:`draft_stale_reason` says its findings may
    no longer hold; return the reason ('' when nothing changed or it is an earlier version, kept as it was
    verified). Waivers and confirmations carry over as in :func:`draft_verify`."""
    if version.draft.versions.filter(number__gt=version.number).exists():
        return ""
    if not draft_stale_reason(version=version):
        return ""
    # Two page loads at once (two tabs, a refresh) must not verify together: each replaces the findings, and a
    # waiver given meanwhile would be lost. The version's row is locked and the question asked again under it.
    with transaction.atomic():
        locked = DraftVersion.objects.select_for_update().get(pk=version.pk)
        reason = draft_stale_reason(version=locked)
        if reason:
            draft_verify(version=locked)
    version.refresh_from_db()
    return reason


def _require_attorney(user: AbstractBaseUser, matter: Matter) -> None:
    if user is None:
        raise PermissionDenied("Only an attorney may approve drafts, waive or confirm findings.")
    require(user, "approve_draft", matter)


def _resolve(finding: Finding, *, user, reason: str, resolution: str, status: str, action: str) -> Finding:
    """Record ``status`` on ``finding`` when :data:`RESOLUTIONS` allows ``resolution`` for it, on the latest
    version only (an earlier version is kept as it was verified: a waiver there would reach no approval)."""
    version = finding.version
    matter = version.draft.matter
    _require_attorney(user, matter)
    reason = clean_reason(reason)
    if version.approved_at is not None:
        raise ValidationError("This version is approved; edit the draft to make a new version instead.")
    if version.draft.versions.filter(number__gt=version.number).exists():
        raise ValidationError(f"Version {version.number} is not the latest: act on the latest version.")
    if finding_resolution(finding) != resolution:
        raise ValidationError(f"A finding that is {finding.get_status_display().lower()} cannot be {status}.")
    with transaction.atomic():
        Finding.objects.filter(pk=finding.pk).update(status=status, resolution_reason=reason, resolved_by=user,
                                                     resolved_at=timezone.now())
        finding.refresh_from_db()
        audit_record(action=action, actor=user, matter=matter, obj=finding, file_sha256=finding.version.sha256,
                     detail={"version": finding.version_id, "kind": finding.kind, "verdict": finding.verdict,
                             "text": finding.text, "reason": reason})
    return finding


# What an attorney may do with an open finding of each status: the one home of the rule, read by the review page.
RESOLUTIONS: dict[str, str] = {
    Finding.Status.UNGROUNDED: "waive", Finding.Status.UNREADABLE: "waive", Finding.Status.AMBIGUOUS: "waive",
    Finding.Status.NEEDS_RECORD_CITE: "waive",
    # A citation the matter's authorities do not hold is confirmed (checked elsewhere), never waived; so is a pin
    # cite its authority's exhibit cannot check (not blocking: confirming records that it was checked elsewhere).
    Finding.Status.UNVERIFIED_AUTHORITY: "confirm", Finding.Status.PIN_UNCHECKED: "confirm",
}


def finding_resolution(finding: Finding) -> str:
    """``"waive"``, ``"confirm"`` or ``""`` (nothing to resolve) for ``finding``, by :data:`RESOLUTIONS`."""
    return RESOLUTIONS.get(finding.status, "")


def finding_waive(*, finding: Finding, user: AbstractBaseUser, reason: str) -> Finding:
    """Waive one ungrounded or unreadable (or ambiguous / needs-record-cite) finding of the draft's latest version
    with a written reason. Attorneys only; raises PermissionDenied or ValidationError. An unverified authority is
    confirmed, not waived."""
    return _resolve(finding, user=user, reason=reason, resolution="waive", status=Finding.Status.WAIVED,
                    action="finding.waive")


def finding_confirm(*, finding: Finding, user: AbstractBaseUser, reason: str) -> Finding:
    """Confirm one citation the matter's authorities do not hold (``unverified_authority``), with a reason such as
    "checked in Westlaw on 2026-11-30". One citation at a time: there is no bulk confirmation."""
    return _resolve(finding, user=user, reason=reason, resolution="confirm", status=Finding.Status.CONFIRMED,
                    action="finding.confirm")


def _model_provenance(version: DraftVersion) -> list[dict]:
    """The provenance of every model-written version up to ``version`` (the job and stage records that made
    the text an attorney approves, through any edits since)."""
    return [{"version": v.number, **v.provenance}
            for v in version.draft.versions.filter(number__lte=version.number, author_kind="model")
            if v.provenance]


# A model's version sharing this share of its 6-word runs with its own prompt's instructions (pipeline's
# ``prompt_echo_share`` in the version's provenance) is approved only with an attorney's reason.
PROMPT_ECHO_APPROVAL_SHARE = 0.2


def prompt_echo_share(version: DraftVersion) -> float:
    """The share (0 to 1) of a model's version that repeats its own prompt's instructions (0 for a person's)."""
    return float((version.provenance or {}).get("prompt_echo_share") or 0)


def approval_needs_echo_reason(version: DraftVersion) -> bool:
    """Whether approving ``version`` needs an attorney's reason because it largely repeats its prompt."""
    return prompt_echo_share(version) >= PROMPT_ECHO_APPROVAL_SHARE


# How a job marks a section it could not write (pipeline.stages.motion): a gap, never a document to approve.
NOT_WRITTEN = "[NOT WRITTEN:"


def approval_needs_read_confirmation(version: DraftVersion) -> bool:
    """Whether approving ``version`` needs the attorney's confirmation of having read it in full: a model's
    version in which the verifier grounded nothing (no ``grounded`` finding), so that nothing in it was checked."""
    return (version.author_kind == DraftVersion.AuthorKind.MODEL
            and not version.findings.filter(verdict=Finding.Status.GROUNDED).exists())


def draft_approve(*, version: DraftVersion, user: AbstractBaseUser, record: dict | None = None,
                  override_reason: str = "", read_confirmed: bool = False) -> DraftVersion:
    """Approve ``version``: verify it again (the evidence may have changed), refuse while a blocking finding is
    open, and refuse a model's version that largely repeats its prompt (``provenance["prompt_echo_share"]`` at
    least PROMPT_ECHO_APPROVAL_SHARE) unless ``override_reason`` says why it is the document; then record the
    approval (user, time, the version's SHA-256, ``record`` such as the job's stage records, the override) in
    the audit log. A model's version in which the verifier could check nothing (no grounded finding) is approved
    only with ``read_confirmed``: the attorney confirms having read it, and the approval records that. Raises
    PermissionDenied or ValidationError."""
    matter = version.draft.matter
    _require_attorney(user, matter)
    if version.approved_at is not None:
        raise ValidationError("This version is already approved.")
    latest = version.draft.versions.order_by("-number").first()
    if latest is not None and latest.pk != version.pk:
        raise ValidationError(f"Version {version.number} is not the latest (version {latest.number} is).")
    gap = version.text.find(NOT_WRITTEN)
    if gap >= 0:
        raise ValidationError(
            f"Version {version.number} still holds a section LawDesk could not write (“{version.text[gap:gap + 90]}"
            "…”). Write that section in the draft, then approve the version that holds it.")
    draft_verify(version=version)
    open_blocking = list(version.open_blocking())
    if open_blocking:
        first = open_blocking[0]
        raise ValidationError(
            f"{len(open_blocking)} blocking finding(s) are open; the first is “{first.text}”: {first.message} "
            "Fix the draft, or waive or confirm each with a reason, before approving."
        )
    echo = prompt_echo_share(version)
    override_reason = override_reason.strip()
    if approval_needs_echo_reason(version) and not override_reason:
        raise ValidationError(
            f"{echo:.0%} of version {version.number} repeats the instructions its model was given: it may be the "
            "prompt coming back rather than a draft. Read it, and approve only with a reason why it is the document."
        )
    if override_reason:
        record = {**(record or {}), "prompt_echo_override": override_reason, "prompt_echo_share": echo}
    if approval_needs_read_confirmation(version):
        if not read_confirmed:
            raise ValidationError(
                f"Nothing in version {version.number} could be checked against the record or the authorities: "
                "the verifier grounded none of it. Read it in full, and approve only confirming you have.")
        record = {**(record or {}), "read_confirmed": True, "nothing_checked": True}
    with transaction.atomic():
        DraftVersion.objects.filter(pk=version.pk).update(approved_at=timezone.now(), approved_by=user)
        version.refresh_from_db()
        audit_record(action="draft.approve", actor=user, matter=matter, obj=version, file_sha256=version.sha256,
                     detail={"draft": version.draft_id, "number": version.number, "sha256": version.sha256,
                             "findings": version.findings.count(), "provenance": _model_provenance(version),
                             **(record or {})})
    return version


def anchor_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` (a span a reviewer quoted) is in ``text``: exactly, or word for word ignoring case,
    punctuation and spacing (a model re-types quotation marks and line breaks); None when it is not there."""
    quote = quote.strip().strip("\"“”'‘’")
    if not quote:
        return None
    # Whole words, both ways: a quoted "name" is not the inside of "renamed".
    lead, tail = (r"\b" if quote[0].isalnum() else ""), (r"\b" if quote[-1].isalnum() else "")
    exact = re.search(lead + re.escape(quote) + tail, text)
    if exact:
        return exact.start(), exact.end()
    words = re.findall(r"\w+", quote)
    if not words:
        return None
    match = re.search(r"\b" + r"\W+".join(re.escape(w) for w in words) + r"\b", text, re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def draft_add_attacks(*, version: DraftVersion, attacks: list[dict]) -> list[ReviewAttack]:
    """Store a reviewer's attacks on ``version`` (each ``{quote, attack, severity, suggested_fix}``), anchored to
    the spans they quote, and record them as generated material (origin ``review``). Severities other than
    low/medium/high are read as medium."""
    rows = []
    for item in attacks:
        quote = str(item.get("quote", ""))
        span = anchor_quote(version.text, quote)
        severity = str(item.get("severity", "medium")).lower()
        rows.append(ReviewAttack(
            version=version, quote=quote, attack=str(item.get("attack", "")),
            severity=severity if severity in ReviewAttack.Severity.values else ReviewAttack.Severity.MEDIUM,
            suggested_fix=str(item.get("suggested_fix", "")), start=span[0] if span else None,
            end=span[1] if span else None))
    with transaction.atomic():
        ReviewAttack.objects.bulk_create(rows)
        generated_record(matter=version.draft.matter, origin=Origin.REVIEW,
                         title=f"Review of {version.draft.title} v{version.number}",
                         text=json.dumps(attacks, ensure_ascii=False))
    return list(version.attacks.all())


def attacks_carry(*, from_version: DraftVersion, to_version: DraftVersion) -> list[ReviewAttack]:
    """Re-anchor ``from_version``'s attacks on ``to_version`` (an edit): an attack whose quoted span is still in
    the new text points at it; one whose span is gone is kept, outdated (no span)."""
    rows = []
    for attack in from_version.attacks.all():
        span = anchor_quote(to_version.text, attack.quote)
        rows.append(ReviewAttack(version=to_version, quote=attack.quote, attack=attack.attack,
                                 severity=attack.severity, suggested_fix=attack.suggested_fix,
                                 start=span[0] if span else None, end=span[1] if span else None,
                                 carried_from=attack))
    ReviewAttack.objects.bulk_create(rows)
    return list(to_version.attacks.all())
