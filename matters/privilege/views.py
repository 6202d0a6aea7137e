"""Pages for privilege and redaction: redaction boxes drawn on a page or picked by search, improper redactions
redacted for real or confirmed, and a production's privilege log (edit, CSV, PDF)."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from matters.audit.services import audit_record
from matters.forms import ButtonForm, ReasonForm
from matters.html_pdf import LayoutLostText
from matters.permissions import require
from matters.privilege.log import EDITABLE, family_of_rows, log_csv_bytes, log_entries, log_entry_update, log_pdf_bytes
from matters.privilege.services import improper_redact, improper_redaction_confirm, redaction_add, redaction_delete
from matters.selectors import exhibit_for_user, matter_for_user, page_for_user
from matters.templatetags.display import bates_range, count, numbers, plural
from matters.validation import form_error_messages, form_outcome_message, form_submit

from .forms import LogEntryForm, ReasonCodeForm, RedactionBoxForm, RedactSearchForm
from .redaction_search import redactions_from_search


@require_POST
def redaction_add_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    """Add a box drawn on the page viewer (``x0``, ``y0``, ``x1``, ``y1`` in points, ``reason``)."""
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    # Refused before the box is read: someone who may not redact learns nothing from the form's checks.
    require(request.user, "change_exhibits", page.exhibit.matter)
    form = RedactionBoxForm(request.POST)
    form_submit(form, lambda data: redaction_add(page=page, rect=form.rect(), reason=data["reason"],
                                                 user=request.user))
    form_outcome_message(request, form, "Redaction box added; it is applied whenever this exhibit is produced.")
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def redaction_delete_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int,
                          redaction_id: int) -> HttpResponse:
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    redaction = page.redactions.filter(pk=redaction_id).first()
    if redaction is None:
        raise Http404("No such redaction.")
    form = ButtonForm(request.POST)
    form_submit(form, lambda _: redaction_delete(redaction=redaction, user=request.user))
    form_outcome_message(request, form, "Redaction box removed.")
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def improper_redact_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    """Put a real redaction over each open improper box of the page, with the reason code given."""
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    form = ReasonCodeForm(request.POST)
    added = form_submit(form, lambda data: improper_redact(page=page, reason=data["reason"], user=request.user))
    form_outcome_message(request, form, "The boxes are now real redactions: their text is removed when produced."
                         if added else "No improper box of this page is open; nothing was added.")
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def improper_confirm_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    form = ReasonForm(request.POST)
    form_submit(form, lambda data: improper_redaction_confirm(page=page, reason=data["reason"], user=request.user))
    form_outcome_message(request, form, "Confirmed: the page may be produced as it is; the reason is in the audit log.")
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_POST
def redact_search_view(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    """Add a redaction over every match of the words or pattern typed, on every page of the exhibit."""
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    form = RedactSearchForm(request.POST)
    added = form_submit(form, lambda data: redactions_from_search(exhibit=exhibit, user=request.user, **data))
    if form.errors:
        messages.error(request, " ".join(form_error_messages(form)))
    elif added:
        pages = sorted({r.page.number for r in added})
        messages.success(request, f"{count(len(added), 'redaction box')} added on {plural('page', len(pages))} "
                                  f"{numbers(pages)}.")
    else:
        messages.warning(request, "Nothing on this exhibit's pages matched; no box was added.")
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
    family = family_of_rows(production)
    for entry in entries:
        document = entry.document
        entry.family = family.get(document.pk, "")
        entry.bates_range = (bates_range(production.bates(document.first_number),
                                         production.bates(document.last_number)) if document.first_number else "")
    if request.method == "POST":
        form = LogEntryForm(request.POST)
        entry = next((e for e in entries if form.is_valid() and e.pk == form.cleaned_data["entry"]), None)
        if entry is None:
            raise Http404("No such log entry.")
        if form_submit(form, lambda data: log_entry_update(entry=entry, user=request.user, **form.values())):
            messages.success(request, "Privilege log updated.")
            return redirect("matters:privilege_log", matter.pk, production.pk)
        # Shown again with what was typed and why it was refused; nothing was saved.
        for name in EDITABLE:
            setattr(entry, name, form[name].value() or "")
        entry.errors = form_error_messages(form)
    return render(request, "matters/privilege/privilege_log.html",
                  {"matter": matter, "production": production, "entries": entries})


@require_GET
def privilege_log_download(request: HttpRequest, matter_id: int, production_id: int, kind: str) -> HttpResponse:
    matter, production = _production(request, matter_id, production_id)
    if kind not in ("csv", "pdf"):
        raise Http404("No such format.")
    try:
        content = log_csv_bytes(production) if kind == "csv" else log_pdf_bytes(production)
    except LayoutLostText as exc:
        messages.error(request, f"The privilege log's PDF was not made: {exc} The CSV has every row.")
        return redirect("matters:privilege_log", matter_id=matter.pk, production_id=production.pk)
    audit_record(action="privilege_log.download", actor=request.user, matter=matter, obj=production,
                 detail={"kind": kind})
    response = HttpResponse(content, content_type="text/csv; charset=utf-8" if kind == "csv" else "application/pdf")
    response["Content-Disposition"] = f'attachment; filename="privilege-log-{production.first}.{kind}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
