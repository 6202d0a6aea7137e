"""Pages of the case file at the level of the matter: the list of matters, a new matter, a matter's page with its
exhibits and search. Thin: parse input, call a selector or service, render.

Every view goes through ``matters.selectors``, which answer 404 to anyone who is not a member of the matter.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from matters.deadlines.forms import DeadlineForm
from matters.deadlines.selectors import matter_deadlines
from matters.exhibits.bates_search import matter_bates_search
from matters.exhibits.listing import exhibit_list_page, matter_exhibit_counts
from matters.exhibits.search import matter_search_results
from matters.forms import ExhibitListForm, MatterForm, MemberForm, SearchForm
from matters.models import UPLOAD_ORIGINS, Origin
from matters.permissions import require
from matters.retention.selectors import matter_hold_record
from matters.selectors import matter_for_user, matter_members, matters_for_user
from matters.services import matter_add_member, matter_create, matter_remove_member
from matters.validation import form_refusal

ORIGIN_CHOICES = [(o.value, o.label) for o in map(Origin, UPLOAD_ORIGINS)]


@require_GET
def matter_list(request: HttpRequest) -> HttpResponse:
    return render(
        request, "matters/list.html", {"matters": matters_for_user(request.user), "form": MatterForm()}
    )


@require_POST
def matter_new(request: HttpRequest) -> HttpResponse:
    require(request.user, "create_matters")
    form = MatterForm(request.POST)
    if not form.is_valid():
        return render(request, "matters/list.html", {"matters": matters_for_user(request.user), "form": form})
    matter = matter_create(created_by=request.user, **form.cleaned_data)
    return redirect(matter)


@require_GET
def matter_detail(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    search_form = SearchForm(request.GET or None)
    query = search_form.cleaned_data["q"] if search_form.is_valid() else ""
    results = matter_search_results(matter=matter, query=query) if query else None
    bates = matter_bates_search(matter=matter, query=query) if query else None
    if request.htmx and request.htmx.target == "search-results":  # the search box: its results only
        return render(request, "matters/detail.html#search-results",
                      {"matter": matter, "query": query, "results": results, "bates": bates})
    if request.htmx and request.htmx.target == "exhibit-list":  # the pager under the list
        return render(request, "matters/detail.html#exhibit-list", _exhibit_context(request, matter))
    return matter_page(request, matter, query=query, results=results, bates=bates)


def _exhibit_context(request: HttpRequest, matter, total: int | None = None) -> dict:
    list_form = ExhibitListForm(request.GET)
    review = list_form.cleaned_data["review"] if list_form.is_valid() else ""
    exhibit_page = exhibit_list_page(matter, request.GET.get("page"), review=review, total=total)
    return {"matter": matter, "exhibits": exhibit_page.object_list, "exhibit_page": exhibit_page,
            # A value the box does not offer is shown with the form's reason, and every file is listed.
            "list_form": list_form if "review" in request.GET else ExhibitListForm(),
            "review": review}


def matter_page(request: HttpRequest, matter, *, query: str = "", results=None, bates=None,
                deadline_form: DeadlineForm | None = None, member_form: MemberForm | None = None,
                status: int = 200) -> HttpResponse:
    """The whole matter page; ``deadline_form``, ``member_form``: a form as typed, when it was refused."""
    counts = matter_exhibit_counts(matter)
    context = {
        **_exhibit_context(request, matter, total=counts["total"]),
        "counts": counts,
        "origins": ORIGIN_CHOICES,
        "custodians": matter.custodians.all(),
        "query": query,
        "results": results,
        "bates": bates,
        "hold": matter_hold_record(matter),
        "deadlines": matter_deadlines(matter),
        "deadline_form": deadline_form or DeadlineForm(),
        "member_form": member_form or MemberForm(),
        "members": matter_members(matter),
    }
    return render(request, "matters/detail.html", context, status=status)


@require_POST
def matter_member_view(request: HttpRequest, matter_id: int, action: str) -> HttpResponse:
    """Add (``action="add"``) or remove (``"remove"``) a member of the matter; a refusal goes on the form's
    field, shown in the members section of the matter page."""
    matter = matter_for_user(request.user, matter_id)
    # Refused before the form is read: someone who may not manage members learns nothing from its checks.
    require(request.user, "manage_members", matter)
    form = MemberForm(request.POST)
    notice = ""
    if form.is_valid():
        user = form.cleaned_data["user"]
        try:
            if action == "add":
                matter_add_member(matter=matter, user=user, added_by=request.user)
                notice = f"{user.get_username()} is now a member of this matter."
            else:
                matter_remove_member(matter=matter, user=user, removed_by=request.user)
                notice = f"{user.get_username()} is no longer a member of this matter."
        except ValidationError as error:
            form_refusal(form, error)
    if request.htmx:
        return render(request, "matters/detail.html#members",
                      {"matter": matter, "member_form": MemberForm() if notice else form, "member_notice": notice,
                       "members": matter_members(matter)},
                      status=200 if notice else 400)
    if notice:
        messages.success(request, notice)
        return redirect(f"{matter.get_absolute_url()}#members")
    return matter_page(request, matter, member_form=form, status=400)
