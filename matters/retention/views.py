"""The retention section of a matter's page: legal hold on and off, and purge. Thin: the services in
:mod:`matters.retention.services` and :mod:`matters.retention.purge` check the role, the hold and the typed name,
and audit."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from matters.permissions import require
from matters.retention.forms import HoldForm, PurgeForm
from matters.retention.selectors import matter_hold_record
from matters.retention.services import matter_hold, matter_hold_lift
from matters.selectors import matter_for_user
from matters.validation import form_error_messages, form_submit

from .purge import matter_purge


def _retention_section(request: HttpRequest, matter, error: str = "", notice: str = "") -> HttpResponse:
    return render(request, "matters/detail.html#retention", {"matter": matter, "retention_error": error,
                                                               "retention_notice": notice,
                                                               "hold": matter_hold_record(matter)})


@require_POST
def matter_hold_view(request: HttpRequest, matter_id: int) -> HttpResponse:
    """Put the matter on legal hold (``action=hold``) or lift it (``action=lift``), with ``reason``."""
    matter = matter_for_user(request.user, matter_id)
    require(request.user, "hold_matter", matter)
    form = HoldForm(request.POST)
    changed = form_submit(form, lambda data: (matter_hold_lift if data["action"] == "lift" else matter_hold)(
        matter=matter, user=request.user, reason=data["reason"]))
    error = " ".join(form_error_messages(form))
    notice = "" if changed is None else ("The matter is on legal hold." if changed.legal_hold
                                         else "The legal hold is lifted.")
    matter = changed or matter
    if request.htmx:
        return _retention_section(request, matter, error, notice)
    (messages.error if error else messages.success)(request, error or notice)
    return redirect(matter)


@require_POST
def matter_purge_view(request: HttpRequest, matter_id: int) -> HttpResponse:
    """Purge the matter once its name is typed again in ``confirm_name``; then back to the list of matters."""
    matter = matter_for_user(request.user, matter_id)
    require(request.user, "hold_matter", matter)
    form = PurgeForm(request.POST)
    # One optional text field: its emptiness or mismatch is the service's to say, on the field.
    report = form_submit(form, lambda data: matter_purge(matter=matter, user=request.user, **data))
    if report is None:
        error = " ".join(form_error_messages(form))
        if request.htmx:
            return _retention_section(request, matter, error=error)
        messages.error(request, error)
        return redirect(matter)
    rows = sum(report.rows.values())
    messages.success(request, f"{matter.name} was purged: {rows} records and {len(report.files)} files removed; "
                              "its audit log keeps the record of the purge.")
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = reverse("matters:list")
        return response
    return redirect("matters:list")
