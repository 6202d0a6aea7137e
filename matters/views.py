"""Pages of the case file at the level of the matter: the list of matters, a new matter, a matter's page with its
exhibits and search. Thin: parse input, call a selector or service, render.

Every view goes through ``matters.selectors``, which answer 404 to anyone who is not a member of the matter.
"""

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from matters.exhibits.bates_search import matter_bates_search
from matters.exhibits.listing import exhibit_list_page, matter_exhibit_counts
from matters.exhibits.search import matter_search_results
from matters.forms import MatterForm, SearchForm
from matters.models import UPLOAD_ORIGINS, Origin
from matters.retention.selectors import matter_hold_record
from matters.selectors import matter_for_user, matters_for_user
from matters.services import matter_create

ORIGIN_CHOICES = [(o.value, o.label) for o in map(Origin, UPLOAD_ORIGINS)]


@require_GET
def matter_list(request: HttpRequest) -> HttpResponse:
    return render(
        request, "matters/list.html", {"matters": matters_for_user(request.user), "form": MatterForm()}
    )


@require_POST
@permission_required("matters.upload_exhibit", raise_exception=True)
def matter_new(request: HttpRequest) -> HttpResponse:
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
    exhibit_page = exhibit_list_page(matter, request.GET.get("page"))
    context = {
        "matter": matter,
        "exhibits": exhibit_page.object_list,
        "exhibit_page": exhibit_page,
        "counts": matter_exhibit_counts(matter),
        "origins": ORIGIN_CHOICES,
        "custodians": matter.custodians.all(),
        "query": query,
        "results": results,
        "bates": bates,
        "hold": matter_hold_record(matter),
    }
    if request.htmx and request.htmx.target == "exhibit-list":  # the pager under the list
        return render(request, "matters/detail.html#exhibit-list", context)
    return render(request, "matters/detail.html", context)
