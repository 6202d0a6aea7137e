"""The chronology page of a matter. Thin: membership (a non-member gets 404), the filter form, the selector."""

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from matters.chronology.forms import ChronologyFilterForm
from matters.chronology.selectors import matter_chronology
from matters.selectors import evidence_exhibits, matter_for_user

# Entries per page of the chronology: a matter of thousands of pages has thousands of dates.
PER_PAGE = 200


@require_GET
def chronology(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    form = ChronologyFilterForm(request.GET or None, exhibits=evidence_exhibits(matter).order_by("label_seq", "pk"))
    facts = []
    if form.is_bound and not form.is_valid():
        facts = None  # the form shows what is wrong; no chronology for a filter that cannot be read
    else:
        data = form.cleaned_data if form.is_bound else {}
        facts = matter_chronology(matter, exhibits=[e.pk for e in data.get("exhibit") or []] or None,
                                  start=data.get("start"), end=data.get("end"))
    page = Paginator(facts or [], PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "matters/chronology/chronology.html", {
        "matter": matter, "form": form, "page_obj": page, "total": None if facts is None else len(facts),
        "query": query.urlencode()})
