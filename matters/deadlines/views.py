"""The deadlines section of a matter's page: count and save one, delete one. Thin: the services in
:mod:`matters.deadlines.services` check the membership and the role, count, and audit."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from matters.deadlines.forms import DeadlineForm
from matters.deadlines.selectors import deadline_of_matter, matter_deadlines
from matters.deadlines.services import deadline_delete, deadline_save
from matters.permissions import require
from matters.selectors import matter_for_user
from matters.validation import form_refusal
from matters.views import matter_page


def _section(request: HttpRequest, matter, form: DeadlineForm, notice: str = "", status: int = 200) -> HttpResponse:
    return render(request, "matters/detail.html#deadlines",
                  {"matter": matter, "deadlines": matter_deadlines(matter), "deadline_form": form,
                   "deadline_notice": notice}, status=status)


@require_POST
def deadline_new_view(request: HttpRequest, matter_id: int) -> HttpResponse:
    """Count the period the form describes and save it on the matter; a refusal goes on the field at fault."""
    matter = matter_for_user(request.user, matter_id)
    # Refused before the form is read: someone who may not save deadlines learns nothing from its checks.
    require(request.user, "save_deadlines", matter)
    form = DeadlineForm(request.POST)
    if form.is_valid():
        try:
            deadline = deadline_save(matter=matter, user=request.user, **form.cleaned_data)
        except ValidationError as error:
            form_refusal(form, error)
        else:
            notice = f"{deadline.title} saved. {deadline.steps[-1]}"
            if request.htmx:
                return _section(request, matter, DeadlineForm(), notice)
            messages.success(request, notice)
            return redirect(f"{matter.get_absolute_url()}#deadlines")
    if request.htmx:
        return _section(request, matter, form)
    return matter_page(request, matter, deadline_form=form, status=400)


@require_POST
def deadline_delete_view(request: HttpRequest, matter_id: int, deadline_id: int) -> HttpResponse:
    """Delete a saved deadline (refused while the matter is on legal hold, with the reason)."""
    matter = matter_for_user(request.user, matter_id)
    deadline = deadline_of_matter(matter, deadline_id)
    try:
        deadline_delete(deadline=deadline, user=request.user)
        notice, error = f"The deadline “{deadline.title}” was deleted.", ""
    except ValidationError as refusal:
        notice, error = "", " ".join(refusal.messages)
    if request.htmx:
        return _section(request, matter, DeadlineForm(), notice or error)
    (messages.error if error else messages.success)(request, error or notice)
    return redirect(f"{matter.get_absolute_url()}#deadlines")
