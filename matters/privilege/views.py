"""Pages for privilege and redaction: redaction boxes drawn on a page or picked by search, improper redactions
redacted for real or confirmed, and a production's privilege log (edit, CSV, PDF)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from matters.audit.services import audit_record
from matters.permissions import require
from matters.privilege.log import EDITABLE, log_csv_bytes, log_entries, log_entry_update, log_pdf_bytes
from matters.privilege.services import improper_open, improper_redaction_confirm, redaction_add, redaction_delete
from matters.selectors import exhibit_for_user, matter_for_user, page_for_user
from matters.templatetags.display import bates_range, count, numbers, plural

from .redaction_search import redactions_from_search


@require_POST
def redaction_add_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    """Add a box drawn on the page viewer (``x0``, ``y0``, ``x1``, ``y1`` in points, ``reason``)."""
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    require(request.user, "change_exhibits", page.exhibit.matter)
    try:
        rect = [request.POST.get(k, "") for k in ("x0", "y0", "x1", "y1")]
        redaction_add(page=page, rect=rect, reason=request.POST.get("reason", ""), user=request.user)
        messages.success(request, "Redaction box added; it is applied whenever this exhibit is produced.")
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def redaction_delete_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int,
                          redaction_id: int) -> HttpResponse:
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    require(request.user, "change_exhibits", page.exhibit.matter)
    redaction = page.redactions.filter(pk=redaction_id).first()
    if redaction is None:
        raise Http404("No such redaction.")
    redaction_delete(redaction=redaction, user=request.user)
    messages.success(request, "Redaction box removed.")
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def improper_redact_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    """Put a real redaction over each open improper box of the page, with the reason code given."""
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    require(request.user, "change_exhibits", page.exhibit.matter)
    try:
        for box in improper_open(page):
            redaction_add(page=page, rect=(box.x0 - 1, box.y0 - 1, box.x1 + 1, box.y1 + 1),
                          reason=request.POST.get("reason", ""), user=request.user)
        messages.success(request, "The boxes are now real redactions: their text is removed when produced.")
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def improper_confirm_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    try:
        improper_redaction_confirm(page=page, reason=request.POST.get("reason", ""), user=request.user)
        messages.success(request, "Confirmed: the page may be produced as it is; the reason is in the audit log.")
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def redact_search_view(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    """Add a redaction over every match of the words or pattern typed, on every page of the exhibit."""
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    require(request.user, "change_exhibits", exhibit.matter)
    try:
        added = redactions_from_search(exhibit=exhibit, query=request.POST.get("query", ""),
                                       reason=request.POST.get("reason", ""), user=request.user,
                                       regex=bool(request.POST.get("regex")))
        if added:
            pages = sorted({r.page.number for r in added})
            messages.success(request, f"{count(len(added), 'redaction box')} added on {plural('page', len(pages))} "
                                      f"{numbers(pages)}.")
        else:
            messages.warning(request, "Nothing on this exhibit's pages matched; no box was added.")
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("matters:exhibit", matter_id, exhibit_id)


def _production(request: HttpRequest, matter_id: int, production_id: int):
    matter = matter_for_user(request.user, matter_id)
    production = matter.productions.filter(pk=production_id).first()
    if production is None:
        raise Http404("No such production.")
    return matter, production


@require_http_methods(["GET", "POST"])
def privilege_log_view(request: HttpRequest, matter_id: int, production_id: int) -> HttpResponse:
    """The production's privilege log, its editable fields as one form per row."""
    matter, production = _production(request, matter_id, production_id)
    entries = list(log_entries(production))
    for entry in entries:
        document = entry.document
        entry.bates_range = (bates_range(production.bates(document.first_number),
                                         production.bates(document.last_number)) if document.first_number else "")
    if request.method == "POST":
        entry = next((e for e in entries if str(e.pk) == request.POST.get("entry")), None)
        if entry is None:
            raise Http404("No such log entry.")
        try:
            log_entry_update(entry=entry, user=request.user, **{f: request.POST.get(f, "") for f in EDITABLE})
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
            return redirect("matters:privilege_log", matter.pk, production.pk)
        messages.success(request, "Privilege log updated.")
        return redirect("matters:privilege_log", matter.pk, production.pk)
    return render(request, "matters/privilege/privilege_log.html",
                  {"matter": matter, "production": production, "entries": entries})


@require_GET
def privilege_log_download(request: HttpRequest, matter_id: int, production_id: int, kind: str) -> HttpResponse:
    matter, production = _production(request, matter_id, production_id)
    if kind not in ("csv", "pdf"):
        raise Http404("No such format.")
    content = log_csv_bytes(production) if kind == "csv" else log_pdf_bytes(production)
    audit_record(action="privilege_log.download", actor=request.user, matter=matter, obj=production,
                 detail={"kind": kind})
    response = HttpResponse(content, content_type="text/csv; charset=utf-8" if kind == "csv" else "application/pdf")
    response["Content-Disposition"] = f'attachment; filename="privilege-log-{production.first}.{kind}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
