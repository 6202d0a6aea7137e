"""Pages for productions received from other parties: the upload, the field-mapping preview and the import
report."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from matters.incoming.forms import CANONICAL_FIELDS, IncomingMappingForm, IncomingUploadForm
from matters.incoming.services import incoming_confirm, incoming_receive
from matters.models import IncomingProduction
from matters.permissions import require
from matters.productions.overlaps import bates_overlaps
from matters.selectors import matter_for_user
from matters.validation import form_error_messages, form_submit


@require_http_methods(["POST"])
def incoming_upload(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    require(request.user, "receive_productions", matter)
    form = IncomingUploadForm(request.POST, request.FILES)
    incoming = form_submit(form, lambda data: incoming_receive(matter=matter, uploads=data["files"],
                                                               origin=data["origin"], user=request.user))
    if incoming is None:
        messages.error(request, " ".join(form_error_messages(form)))
        return redirect(reverse("matters:productions", args=[matter.pk]))
    return redirect(reverse("matters:incoming", args=[matter.pk, incoming.pk]))


@require_http_methods(["GET", "POST"])
def incoming_detail(request: HttpRequest, matter_id: int, incoming_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    incoming = matter.incoming_productions.filter(pk=incoming_id).first()
    if incoming is None:
        raise Http404("No such production.")
    awaiting = incoming.status == IncomingProduction.Status.AWAITING_CONFIRMATION
    form = IncomingMappingForm(request.POST if request.method == "POST" and awaiting else None,
                               header=list(incoming.header or []))
    if form.is_bound:
        require(request.user, "receive_productions", matter)
        if form_submit(form, lambda _: incoming_confirm(incoming=incoming, field_map=form.field_map(),
                                                         user=request.user)):
            return redirect(reverse("matters:incoming", args=[matter.pk, incoming.pk]))
    documents = (matter.exhibits.filter(pages__incoming_bates__incoming=incoming).distinct().order_by("label_seq"))
    # Numbers shared with a production made or received after this one was imported are found now.
    shared = [o.message() for o in bates_overlaps(matter) if o.involves(f"in:{incoming.pk}")]
    context = {"matter": matter, "incoming": incoming, "fields": CANONICAL_FIELDS, "documents": documents,
               "mapping_errors": form_error_messages(form) if form.is_bound else [],
               "discrepancies": list(dict.fromkeys([*incoming.report, *shared]))}
    if request.htmx:
        return render(request, "matters/incoming/incoming.html#incoming-status", context)
    return render(request, "matters/incoming/incoming.html", context)
