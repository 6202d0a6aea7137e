"""Pages for drafts: the matter's drafts, the review page of a version (text with findings and attacks beside
it, the side panel with the source page), edits, waivers and confirmations, approval, exports, and the version
history with diffs. Thin: every rule lives in ``matters.drafts.services`` and ``matters.drafts.exports``.

Every view finds the matter through ``matters.selectors.matter_for_user`` first, so a non-member gets 404 for
every URL here before any permission is looked at. Buttons an attorney alone may use are hidden from others,
and the services refuse them anyway.
"""

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from matters.audit.services import audit_record
from matters.drafts.markdown import render_html
from matters.drafts.services import (
    StaleEdit,
    approval_needs_echo_reason,
    approval_needs_read_confirmation,
    draft_approve,
    draft_rename,
    draft_reverify_if_stale,
    draft_version_edit,
    draft_version_from_word,
    finding_confirm,
    finding_resolution,
    finding_waive,
    prompt_echo_share,
)
from matters.forms import ReasonForm
from matters.models import Draft, DraftVersion, Finding
from matters.permissions import may, require
from matters.selectors import matter_for_user
from matters.templatetags.display import count
from matters.validation import form_error_messages, form_submit

from .exports import EXPORT_KINDS, draft_export
from .forms import DraftApproveForm, DraftEditForm, DraftExportForm, DraftRenameForm, WordVersionForm
from .review import (
    ATTACK_KIND,
    ReviewFilter,
    VersionRow,
    margin,
    review_counts,
    review_counts_of,
    segments,
    version_diff,
    version_history,
)
from .review_html import draft_text_html, margin_html
from .review_sources import source_refs, source_view


def _draft_for(user, matter_id: int, draft_id: int) -> Draft:
    matter = matter_for_user(user, matter_id)
    draft = matter.drafts.filter(pk=draft_id).select_related("matter").first()
    if draft is None:
        raise Http404("No such draft.")
    return draft


def _version_for(user, matter_id: int, draft_id: int, number: int | None) -> DraftVersion:
    """The version ``number`` of a draft of a matter ``user`` is a member of (the latest when None); 404 else."""
    matter = matter_for_user(user, matter_id)
    # One query for the draft and its version: a draft of another matter has no version here either.
    versions = DraftVersion.objects.filter(draft_id=draft_id, draft__matter=matter).select_related(
        "draft__matter", "author", "approved_by")
    version = versions.order_by("-number").first() if number is None else versions.filter(number=number).first()
    if version is None:
        raise Http404("No such draft or version.")
    return version


def _review_url(version: DraftVersion, item: str = "") -> str:
    url = reverse("matters:draft_version", args=[version.draft.matter_id, version.draft_id, version.number])
    return f"{url}?item={item}&open=1" if item else url


def _panel(request: HttpRequest, version: DraftVersion, key: str, *, open_source: bool, source_index: int = 0,
           error: str = "") -> dict | None:
    """The side panel's context for margin key ``f<id>`` or ``a<id>``; None for a key of no such item."""
    if len(key) < 2 or key[0] not in "fa" or not key[1:].isdigit():
        return None
    if key[0] == "a":
        attack = version.attacks.filter(pk=int(key[1:])).first()
        if attack is None:
            return None
        inside = [] if attack.outdated else version.findings.filter(start__lt=attack.end, end__gt=attack.start)
        overlapping = [{"key": f"f{f.pk}", "finding": f} for f in inside]
        return {"key": key, "attack": attack, "overlapping": overlapping, "error": error}
    finding = version.findings.select_related("resolved_by").filter(pk=int(key[1:])).first()
    if finding is None:
        return None
    refs = source_refs(version.draft.matter, finding)
    source_index = min(max(source_index, 0), max(len(refs) - 1, 0))
    shown = None
    if open_source and refs:
        shown = source_view(finding, refs[source_index], list(version.findings.all()))
        page = shown.ref.page
        audit_record(action="page.view", actor=request.user, matter=version.draft.matter, obj=page,
                     file_sha256=page.exhibit.sha256, detail={"from": "draft_review", "finding": finding.pk})
    return {"key": key, "finding": finding, "refs": refs, "source_index": source_index, "shown": shown,
            "action": finding_resolution(finding), "error": error}


def _base_context(request: HttpRequest, version: DraftVersion, review_filter: ReviewFilter,
                  panel: dict | None, history: list[VersionRow] | None = None) -> dict:
    """What the panel needs (and the rest of the page builds on). The latest version's number comes from
    ``history`` (newest first) when the caller has read it."""
    draft = version.draft
    if history is None:
        latest = draft.versions.order_by("-number").values_list("number", flat=True).first()
    else:
        latest = history[0].version.number if history else None
    return {
        "matter": draft.matter, "draft": draft, "version": version, "is_latest": version.number == latest,
        "latest_number": latest, "filter": review_filter, "panel": panel,
        "can_resolve": may(request.user, "approve_draft", draft.matter),
        "echo_needs_reason": approval_needs_echo_reason(version), "echo_share": prompt_echo_share(version),
        "needs_read_confirmation": approval_needs_read_confirmation(version),
        "can_edit": may(request.user, "edit_drafts", draft.matter),
    }


def _review_context(request: HttpRequest, version: DraftVersion, review_filter: ReviewFilter,
                    panel: dict | None = None) -> dict:
    findings = review_filter.findings(version)
    attacks = review_filter.attacks(version)
    anchored = [a for a in attacks if not a.outdated]
    history = version_history(version.draft)
    # Unfiltered, the rows shown are all of the version's: count them rather than read them again.
    counts = review_counts(version) if review_filter.active else review_counts_of(findings, attacks)
    return _base_context(request, version, review_filter, panel, history) | {
        "history": history,
        "counts": counts,
        "draft_text_html": draft_text_html(segments(version.text, findings, anchored)),
        "margin_html": margin_html(version, margin(findings, attacks), filter_active=review_filter.active),
        "export_kinds": EXPORT_KINDS,
        "kind_choices": [*Finding.Kind.choices, (ATTACK_KIND, "Reviewer attacks")],
        "status_choices": Finding.Status.choices,
    }


def _render_review(request: HttpRequest, version: DraftVersion, review_filter: ReviewFilter,
                   panel: dict | None = None, word_form: WordVersionForm | None = None) -> HttpResponse:
    context = _review_context(request, version, review_filter, panel)
    context["word_form"] = word_form or WordVersionForm()
    context["provenance_json"] = json.dumps(version.provenance, indent=2, ensure_ascii=False)
    if request.htmx:
        # The versions table counts the same findings as the counts above the text: a waiver changes both, so
        # the table travels with the body as an out-of-band swap.
        body = render_to_string("matters/drafts/draft_review.html#review-body", context, request)
        versions = render_to_string("matters/drafts/draft_review.html#versions", context | {"oob": True}, request)
        return HttpResponse(body + versions)
    context["formatted"] = mark_safe(render_html(version.text))  # sanitized: formatting tags only
    return render(request, "matters/drafts/draft_review.html", context)


@require_GET
def draft_list(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    rows = []
    for draft in matter.drafts.order_by("-created_at"):
        latest = draft.latest_version
        rows.append({"draft": draft, "latest": latest,
                     "blocking": latest.open_blocking().count() if latest else 0})
    return render(request, "matters/drafts/drafts.html", {"matter": matter, "rows": rows})


@require_GET
def draft_review(request: HttpRequest, matter_id: int, draft_id: int, number: int | None = None) -> HttpResponse:
    """The review page. ``?kind=`` and ``?status=`` (repeatable) filter it; ``?item=f12&open=1`` opens an item's
    panel with its source page (the page works without script that way)."""
    version = _version_for(request.user, matter_id, draft_id, number)
    # Evidence added or a production served since the last verification: the findings are checked again first.
    stale = draft_reverify_if_stale(version=version)
    if stale:
        messages.info(request, f"{stale}; version {version.number} was verified again against the matter as it is "
                               "now.")
    item = request.GET.get("item", "")
    panel = _panel(request, version, item, open_source=request.GET.get("open") == "1") if item else None
    return _render_review(request, version, ReviewFilter.from_query(request.GET), panel)


@require_GET
def review_item(request: HttpRequest, matter_id: int, draft_id: int, number: int, key: str) -> HttpResponse:
    """The side panel of one finding (``f<id>``) or attack (``a<id>``); ``?open=1`` adds its source page,
    ``?source=n`` picks which of its pages (0-based)."""
    version = _version_for(request.user, matter_id, draft_id, number)
    try:
        source_index = int(request.GET.get("source", "0"))
    except ValueError:
        source_index = 0
    panel = _panel(request, version, key, open_source=request.GET.get("open") == "1", source_index=source_index)
    if panel is None:
        raise Http404("No such finding or attack.")
    if not request.htmx:
        return redirect(_review_url(version, key))
    context = _base_context(request, version, ReviewFilter.from_query(request.GET), panel)
    return render(request, "matters/drafts/draft_review.html#panel", context)


@require_POST
def finding_resolve(request: HttpRequest, matter_id: int, draft_id: int, number: int, finding_id: int,
                    action: str) -> HttpResponse:
    """Waive (``action`` ``waive``) or confirm (``confirm``) one finding with the reason typed in the panel."""
    version = _version_for(request.user, matter_id, draft_id, number)
    finding = version.findings.filter(pk=finding_id).first()
    if action not in ("waive", "confirm"):
        raise Http404("No such action.")
    if finding is None:  # verified again since the page was loaded (an approval attempt, another tab)
        gone = "That finding was replaced when the version was verified again; nothing was recorded. Choose it again."
        if request.htmx:
            return _render_review(request, version, ReviewFilter.from_query(request.POST), {"error": gone})
        messages.error(request, gone)
        return redirect(_review_url(version))
    service = finding_waive if action == "waive" else finding_confirm
    form = ReasonForm(request.POST)
    form_submit(form, lambda data: service(finding=finding, user=request.user, reason=data["reason"]))
    error = " ".join(form_error_messages(form))
    if not request.htmx:
        done = f"{finding.get_kind_display()} “{finding.text}”: {action}d; the reason is in the audit log."
        (messages.error if error else messages.success)(request, error or done)
        return redirect(_review_url(version, f"f{finding.pk}"))
    panel = _panel(request, version, f"f{finding.pk}", open_source=False, error=error)
    if panel is not None and error:
        panel["reason"] = form["reason"].value() or ""
    return _render_review(request, version, ReviewFilter.from_query(request.POST), panel)


@require_POST
def draft_edit(request: HttpRequest, matter_id: int, draft_id: int, number: int) -> HttpResponse:
    """Save the edited text as a new version written by this person, verify it at once and carry the reviewer's
    attacks over to it (re-anchored; those whose quoted span is gone become outdated)."""
    base = _version_for(request.user, matter_id, draft_id, number)
    form = DraftEditForm(request.POST)
    form.is_valid()  # a text field alone: always valid; its line breaks made "\n"
    try:
        version = draft_version_edit(base=base, text=form.cleaned_data["text"], user=request.user)
    except StaleEdit as stale:
        messages.error(request, " ".join(stale.messages))
        return redirect(_review_url(stale.latest))
    except ValidationError as refusal:
        messages.error(request, " ".join(refusal.messages))
        return redirect(_review_url(base))
    if version is None:
        messages.info(request, "No change to save.")
        return redirect(_review_url(base))
    blocking = version.open_blocking().count()
    messages.success(request, f"Saved as version {version.number} and verified: {count(blocking, 'blocking finding')} "
                              "open.")
    return redirect(_review_url(version))


@require_POST
def draft_word_upload(request: HttpRequest, matter_id: int, draft_id: int, number: int) -> HttpResponse:
    """Make the next version from the DOCX an attorney edited in Word (:func:`draft_version_from_word`); a
    refusal is shown on the form's field, on the review page of the version it was uploaded on."""
    base = _version_for(request.user, matter_id, draft_id, number)
    require(request.user, "edit_drafts", base.draft.matter)
    form = WordVersionForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            made = draft_version_from_word(base=base, upload=upload, original_name=upload.name, user=request.user)
        except ValidationError as problem:
            form.add_error("file", problem)
        else:
            merged, version = made.merged, made.version
            messages.success(request, (
                f"Saved “{upload.name}” as version {version.number}: {count(merged.changed, 'paragraph')} changed, "
                f"{merged.added} added, {merged.removed} removed, {merged.kept} unchanged; "
                f"{made.checked_paragraphs} of {made.paragraphs} verified again, the others kept their findings. "
                f"{count(version.open_blocking().count(), 'blocking finding')} open."))
            return redirect(_review_url(version))
    return _render_review(request, base, ReviewFilter(), word_form=form)


@require_POST
def draft_rename_view(request: HttpRequest, matter_id: int, draft_id: int) -> HttpResponse:
    """Rename a draft (attorneys and assistants); back to the version the form was on."""
    draft = _draft_for(request.user, matter_id, draft_id)
    form = DraftRenameForm(request.POST)
    form_submit(form, lambda data: draft_rename(draft=draft, title=data["title"], user=request.user))
    if form.errors:
        messages.error(request, " ".join(form_error_messages(form)))
    else:
        messages.success(request, f"Renamed: “{draft.title}”.")
    number = form.cleaned_data.get("number")
    version = draft.versions.filter(number=number).first() if number else None
    return redirect(_review_url(version or draft.latest_version))


@require_POST
def draft_approve_view(request: HttpRequest, matter_id: int, draft_id: int, number: int) -> HttpResponse:
    version = _version_for(request.user, matter_id, draft_id, number)
    form = DraftApproveForm(request.POST)
    form_submit(form, lambda data: draft_approve(version=version, user=request.user, **data))
    if form.errors:
        messages.error(request, "Not approved. " + " ".join(form_error_messages(form)))
    else:
        messages.success(request, f"Version {version.number} approved; the approval is in the audit log.")
    return redirect(_review_url(version))


@require_POST
def draft_export_view(request: HttpRequest, matter_id: int, draft_id: int, number: int, kind: str) -> HttpResponse:
    version = _version_for(request.user, matter_id, draft_id, number)
    form = DraftExportForm({"kind": kind})
    export = form_submit(form, lambda data: draft_export(version=version, user=request.user, kind=data["kind"]))
    if export is None:
        messages.error(request, " ".join(form_error_messages(form)))
        return redirect(_review_url(version))
    response = HttpResponse(export.content, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["X-LawDesk-Audit-Head"] = export.audit_head
    return response


@require_GET
def draft_versions(request: HttpRequest, matter_id: int, draft_id: int) -> HttpResponse:
    """The version history, and the diff between versions ``?a=`` (older) and ``?b=`` (newer): by default the
    latest against the one before it."""
    draft = _draft_for(request.user, matter_id, draft_id)
    history = version_history(draft)
    numbers = [row.version.number for row in history]

    def pick(name: str, default: int | None) -> int | None:
        try:
            value = int(request.GET.get(name, ""))
        except ValueError:
            return default
        return value if value in numbers else default

    newer = pick("b", numbers[0] if numbers else None)
    older = pick("a", numbers[1] if len(numbers) > 1 else newer)
    texts = dict(draft.versions.filter(number__in=[older, newer]).values_list("number", "text"))
    pieces = version_diff(texts.get(older, ""), texts.get(newer, "")) if older and newer else []
    return render(request, "matters/drafts/draft_versions.html", {
        "matter": draft.matter, "draft": draft, "history": history, "older": older, "newer": newer,
        "pieces": pieces, "changed": any(p.op != "=" for p in pieces),
    })
