"""Pages of a matter's exhibits: upload, detail, edit, pages and their images. Thin: parse input, call a selector or
service, render.

Every view goes through ``matters.selectors``, which answer 404 to anyone who is not a member of the matter.
"""

import contextlib

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from matters import storage
from matters.audit.services import audit_record, audit_record_once_per
from matters.downloads import file_response
from matters.email.near_duplicates import exhibit_near_duplicates
from matters.email.threads import exhibit_thread
from matters.exhibits.listing import exhibit_list_page
from matters.forms import (
    ButtonForm,
    CitesAsForm,
    ExhibitEditForm,
    ExhibitListForm,
    PasswordForm,
    ReasonForm,
    UploadForm,
)
from matters.permissions import require
from matters.privilege.services import exhibit_privilege_context, page_privilege_context
from matters.provenance import exhibit_override_generated, page_clear_injection
from matters.selectors import (
    exhibit_family,
    exhibit_for_user,
    matter_for_user,
    page_for_user,
)
from matters.validation import form_outcome_message, form_submit

from .services import (
    exhibit_create,
    exhibit_reprocess,
    exhibit_set_cites_as,
    exhibit_submit_password,
    exhibit_update,
)


@require_POST
def exhibit_upload(request: HttpRequest, matter_id: int) -> HttpResponse:
    """Take one file; answer JSON with the exhibit's status and its rendered list row (400 with a reason if the
    request itself is unusable)."""
    matter = matter_for_user(request.user, matter_id)
    require(request.user, "change_exhibits", matter)
    try:
        if len(request.FILES.getlist("file")) > 1:
            return JsonResponse({"error": "Send one file per request; each file gets its own exhibit."}, status=400)
        form = UploadForm(request.POST, request.FILES)
        if not form.is_valid():
            return JsonResponse({"error": _form_errors(form)}, status=400)
        upload = form.cleaned_data["file"]
        exhibit = exhibit_create(
            matter=matter,
            stream=upload,
            original_name=upload.name or "unnamed",
            origin=form.cleaned_data["origin"],
            uploaded_by=request.user,
            custodian=form.cleaned_data["custodian"],
        )
    except OSError as error:  # the body is spooled, and the original stored, in the data directory
        if not storage.is_disk_full(error):
            raise
        for handler in request.upload_handlers:
            # Django's part-spooled body: removed now, not whenever the request object is collected.
            if (spooled := getattr(handler, "file", None)) is not None:
                with contextlib.suppress(OSError):  # flushing its buffer fails again; it is unlinked all the same
                    spooled.close()
        return JsonResponse({"error": storage.DISK_FULL_MESSAGE}, status=507)
    row = render(request, "matters/detail.html#exhibit-row", {"exhibit": exhibit, "matter": matter}).content
    return JsonResponse(
        {
            "exhibit": exhibit.pk,
            "label": exhibit.label,
            "status": exhibit.status,
            "reason": exhibit.reason,
            "duplicate_of": exhibit.duplicate_of_id,
            "row_html": row.decode("utf-8"),
        },
        status=201,
    )


def _form_errors(form) -> str:
    return " ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


@require_GET
def exhibit_detail(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    pages = list(exhibit.pages.all())
    family = exhibit_family(exhibit)
    return render(
        request,
        "matters/exhibits/exhibit.html",
        {
            "matter": exhibit.matter,
            "exhibit": exhibit,
            "pages": pages,
            "flagged_pages": [page for page in pages if page.reading_flag],
            "family": family if len(family) > 1 else [],
            "thread": exhibit_thread(exhibit),
            "near_duplicates": exhibit_near_duplicates(exhibit),
            "edit_form": ExhibitEditForm(initial={"label": exhibit.label, "title": exhibit.title,
                                                  "transcript_cite": exhibit.transcript_cite}),
            "cites_as_form": CitesAsForm(initial={"cites_as": exhibit.cites_as}),
            "password_form": PasswordForm(),
        } | exhibit_privilege_context(exhibit),
    )


@require_POST
def exhibit_edit(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    require(request.user, "change_exhibits", exhibit.matter)
    form = ExhibitEditForm(request.POST)
    if form.is_valid():
        try:
            exhibit_update(exhibit=exhibit, updated_by=request.user, **form.cleaned_data)
            messages.success(request, "Saved.")
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
    else:
        messages.error(request, _form_errors(form))
    return redirect(exhibit)


@require_POST
def exhibit_cites_as(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    require(request.user, "set_cites_as", exhibit.matter)
    form = CitesAsForm(request.POST)
    if form.is_valid():
        try:
            exhibit_set_cites_as(exhibit=exhibit, updated_by=request.user, cites_as=form.cleaned_data["cites_as"])
            messages.success(request, "Saved how drafts cite this exhibit.")
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
    else:
        messages.error(request, _form_errors(form))
    return redirect(exhibit)


@require_POST
def exhibit_password(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    require(request.user, "change_exhibits", exhibit.matter)
    form = PasswordForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError(_form_errors(form))
        exhibit_submit_password(exhibit=exhibit, password=form.cleaned_data["password"], submitted_by=request.user)
        messages.success(request, "Password received; the file is queued for processing again.")
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect(exhibit)


@require_POST
def exhibit_reprocess_view(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    require(request.user, "change_exhibits", exhibit.matter)
    form = ButtonForm(request.POST)
    form_submit(form, lambda _: exhibit_reprocess(exhibit=exhibit, requested_by=request.user))
    form_outcome_message(request, form, "The file is queued for processing again.")
    return redirect(exhibit)


@require_POST
def exhibit_override_generated_view(request: HttpRequest, matter_id: int, exhibit_id: int) -> HttpResponse:
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    form = ReasonForm(request.POST)
    form_submit(form, lambda data: exhibit_override_generated(exhibit=exhibit, user=request.user,
                                                              reason=data["reason"]))
    form_outcome_message(request, form, "The file now counts as evidence; the reason is in the audit log.")
    return redirect(exhibit)


@require_POST
def page_clear_injection_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    form = ReasonForm(request.POST)
    form_submit(form, lambda data: page_clear_injection(page=page, user=request.user, reason=data["reason"]))
    form_outcome_message(request, form, "The flag is cleared; the reason is in the audit log.")
    return redirect("matters:page", matter_id, exhibit_id, number)


@require_GET
def exhibit_original(request: HttpRequest, matter_id: int, exhibit_id: int) -> FileResponse:
    """Serve the original bytes as an attachment with the detected type; recorded in the audit log."""
    exhibit = exhibit_for_user(request.user, matter_id, exhibit_id)
    source = exhibit.duplicate_of or exhibit
    path = storage.blob_path(source.sha256, quarantined=source.quarantined)
    if not path.exists():
        raise Http404("The stored original is missing.")
    audit_record(
        action="exhibit.original_download",
        actor=request.user,
        matter=exhibit.matter,
        obj=exhibit,
        file_sha256=exhibit.sha256,
    )
    response = file_response(
        request,
        path.open("rb"),
        as_attachment=True,
        filename=exhibit.original_name or f"exhibit-{exhibit.pk}",
        content_type=exhibit.mime_type or "application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_GET
def page_view(request: HttpRequest, matter_id: int, exhibit_id: int, number: int) -> HttpResponse:
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    exhibit = page.exhibit
    context = {"matter": exhibit.matter, "exhibit": exhibit, "page": page} | page_privilege_context(page)
    if request.htmx:  # the figure asking again whether its image is ready
        return render(request, "matters/exhibits/page.html#page-figure", context)
    audit_record(action="page.view", actor=request.user, matter=exhibit.matter, obj=page, file_sha256=exhibit.sha256)
    return render(
        request,
        "matters/exhibits/page.html",
        context | {
            "previous": number - 1 if number > 1 else None,
            "next": number + 1 if number < exhibit.page_count else None,
        },
    )


@require_GET
def page_image(request: HttpRequest, matter_id: int, exhibit_id: int, number: int, size: str) -> FileResponse:
    page = page_for_user(request.user, matter_id, exhibit_id, number)
    folder = {"full": "pages", "thumb": "thumbs"}.get(size)
    if folder is None:
        raise Http404("No such image size.")
    path = storage.derived_dir(page.exhibit_id) / folder / f"{page.number:04d}.jpg"
    if not path.exists():
        raise Http404("This page has no image.")
    # Page images are case material as much as the page view: audited once per user, exhibit and hour.
    audit_record_once_per(window_s=3600, action="page.image", actor=request.user, matter=page.exhibit.matter,
                          obj=page.exhibit, file_sha256=page.exhibit.sha256, detail={"page": page.number})
    return file_response(request, path.open("rb"), content_type="image/jpeg")  # never cached: lawdesk.middleware


@require_GET
def exhibit_rows(request: HttpRequest, matter_id: int) -> HttpResponse:
    """The exhibit list's rows, for a page that cannot keep a WebSocket open: page ``?page=`` of the list, as the
    matter page shows it."""
    matter = matter_for_user(request.user, matter_id)
    list_form = ExhibitListForm(request.GET)
    review = list_form.cleaned_data["review"] if list_form.is_valid() else ""
    exhibits = exhibit_list_page(matter, request.GET.get("page"), review=review).object_list
    return render(request, "matters/detail.html#exhibit-rows", {"matter": matter, "exhibits": exhibits})

