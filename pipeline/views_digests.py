"""Pages for exhibit digests: an exhibit's digest panel (loaded into the exhibit page, which ``matters`` renders
without knowing the pipeline), the matter's list of digests, and the buttons that queue them.

Thin: membership is checked by the matter's selectors (a non-member gets 404), the work is in
:mod:`pipeline.digests.services`. A digest is always shown as model output, never as evidence.
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from matters.selectors import evidence_exhibits, exhibit_for_user, matter_for_user

from .digests.forms import DigestRequestForm
from .digests.selectors import exhibit_digest, matter_digests
from .digests.services import digests_request, summarizer_server


@require_GET
def exhibit_digest_view(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    """The exhibit's digest panel (``digests.html#exhibit-digest``)."""
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    context = {"matter": exhibit.matter, "exhibit": exhibit, "digest": exhibit_digest(exhibit),
               "is_evidence": evidence_exhibits(exhibit.matter).filter(pk=exhibit.pk).exists()}
    return render(request, "pipeline/digests.html#exhibit-digest", context)


@require_GET
def matter_digests_view(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    return render(request, "pipeline/digests.html", {
        "matter": matter, "rows": matter_digests(matter), "form": DigestRequestForm(),
        "summarizer": summarizer_server()})


def _request(request: HttpRequest, matter, exhibit=None) -> None:
    form = DigestRequestForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The request could not be read; try again.")
        return
    try:
        queued = digests_request(matter=matter, user=request.user, exhibit=exhibit, again=form.cleaned_data["again"])
    except (ValidationError, PermissionDenied) as error:
        messages.error(request, " ".join(getattr(error, "messages", [str(error)])))
        return
    messages.success(request, f"{queued} digest{'s' if queued != 1 else ''} queued for the summarizer."
                     if queued else "Nothing to queue: every digest is done or on its way.")


@require_POST
def matter_digests_request_view(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    _request(request, matter)
    return redirect("pipeline:digests", matter.pk)


@require_POST
def exhibit_digest_request_view(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    _request(request, exhibit.matter, exhibit)
    return redirect("matters:exhibit", exhibit.matter_id, exhibit.pk)
