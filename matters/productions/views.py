"""Pages for Bates productions: the matter's productions with voided ranges and gaps, a new production,
downloads. Productions received from other parties have their own pages (:mod:`matters.incoming.views`)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from matters.audit.services import audit_record
from matters.downloads import file_response
from matters.models import PrivilegeBasis, Production
from matters.permissions import may, require
from matters.productions.delivery import production_files, production_serve
from matters.productions.forms import DESIGNATIONS, ProductionForm, ServeForm
from matters.productions.overlaps import bates_overlaps
from matters.productions.reservation import (
    PREFIX_HTML_PATTERN,
    default_exhibits,
    default_prefix,
    production_create,
)
from matters.selectors import matter_for_user
from matters.templatetags.display import bates_range
from matters.validation import form_outcome_message, form_refusal, form_submit


def ranges_report(matter) -> list[dict]:
    """Every reserved range per prefix in number order, with the gaps between them, for the productions list."""
    rows, previous = [], {}
    for production in matter.productions.order_by("prefix", "first_number"):
        last = previous.get(production.prefix)
        if last is not None and production.first_number > last + 1:
            rows.append({"gap": True, "first": production.bates(last + 1),
                         "last": production.bates(production.first_number - 1)})
        rows.append({"gap": False, "production": production})
        previous[production.prefix] = max(last or 0, production.last_number)
    return rows


@require_http_methods(["GET", "POST"])
def productions(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    candidates = list(default_exhibits(matter))
    form = ProductionForm(request.POST if request.method == "POST" else None, candidates=candidates,
                          initial={"prefix": default_prefix(matter)})
    status = 200
    if request.method == "POST":
        require(request.user, "start_productions", matter)
        if form.is_valid():
            try:
                production = production_create(matter=matter, created_by=request.user,
                                               **form.production_arguments())
            except ValidationError as error:
                form_refusal(form, error)
            else:
                messages.success(request, f"Production {bates_range(production.first, production.last)} started.")
                return redirect(reverse("matters:productions", args=[matter.pk]))
        status = 400
    overlaps = bates_overlaps(matter)
    context = {
        "matter": matter, "rows": ranges_report(matter), "candidates": candidates, "designations": DESIGNATIONS,
        "positions": Production.Position.choices, "cover_choices": Production.CoverSheets.choices,
        "privilege_bases": PrivilegeBasis.choices,
        "stamping": matter.productions.filter(status=Production.Status.STAMPING).exists(),
        "can_serve": may(request.user, "serve_production", matter),
        "incoming": matter.incoming_productions.order_by("-created_at"),
        "prefix_pattern": PREFIX_HTML_PATTERN,
        "overlaps": overlaps,
        "overlapping": {int(key[4:]) for o in overlaps for key in (o.a[0], o.b[0]) if key.startswith("out:")},
        "form": form,
    }
    if request.htmx:
        return render(request, "matters/productions/productions.html#production-rows", context)
    return render(request, "matters/productions/productions.html", context, status=status)


@require_GET
def production_download(request: HttpRequest, matter_id: int, production_id: int, kind: str) -> FileResponse:
    matter = matter_for_user(request.user, matter_id)
    production = matter.productions.filter(pk=production_id, status=Production.Status.DONE).first()
    path = production_files(production).get(kind) if production else None
    if path is None or not path.exists():
        raise Http404("No such production file.")
    audit_record(action="production.download", actor=request.user, matter=matter, obj=production,
                 file_sha256=production.pdf_sha256 if kind == "pdf" else production.zip_sha256, detail={"kind": kind})
    content_type = "application/pdf" if kind == "pdf" else "application/zip"
    response = file_response(request, path.open("rb"), as_attachment=True, filename=path.name,
                             content_type=content_type)
    response["X-Content-Type-Options"] = "nosniff"
    return response




@require_http_methods(["POST"])
def production_serve_view(request: HttpRequest, matter_id: int, production_id: int) -> HttpResponse:
    """Record that a finished production was served (attorneys only; the service checks and audits)."""
    matter = matter_for_user(request.user, matter_id)
    production = matter.productions.filter(pk=production_id).first()
    if production is None:
        raise Http404("No such production.")
    form = ServeForm(request.POST)
    form_submit(form, lambda data: production_serve(production=production, user=request.user, **data))
    form_outcome_message(request, form,
                         f"Production {bates_range(production.first, production.last)} recorded as served.")
    return redirect(reverse("matters:productions", args=[matter.pk]))
