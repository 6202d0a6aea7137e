"""The matter's audit page: its log (uploads, productions, jobs, waivers, approvals, exports ...), newest first,
and whether its hash chain verifies, with the chain's latest hash (the one every export carries)."""

from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from matters.audit.services import audit_verify
from matters.selectors import matter_for_user

# Groups of actions for the page's filter, by the prefix of ``AuditEntry.action`` (or the whole action).
CATEGORIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "uploads": ("Uploads and exhibits", ("exhibit.", "page.")),
    "productions": ("Productions", ("production.", "incoming_production.")),
    "jobs": ("Jobs", ("job.", "stage.")),
    "waivers": ("Waivers and confirmations", ("finding.",)),
    "drafts": ("Drafts and verification", ("draft.version", "draft.verify")),
    "approvals": ("Approvals", ("draft.approve",)),
    "exports": ("Exports", ("draft.export",)),
    "matter": ("Matter and members", ("matter.",)),
}
ENTRIES_PER_PAGE = 200


def _category_filter(entries, category: str):
    if category not in CATEGORIES:
        return entries
    query = Q()
    for prefix in CATEGORIES[category][1]:
        query |= Q(action__startswith=prefix)
    return entries.filter(query)


@require_GET
def matter_audit(request: HttpRequest, matter_id: int) -> HttpResponse:
    """``?what=<category>`` narrows the list (see CATEGORIES); ``?page=n`` pages through it."""
    matter = matter_for_user(request.user, matter_id)
    category = request.GET.get("what", "")
    entries = _category_filter(matter.audit_entries.filter(chain=f"matter:{matter.pk}").order_by("-seq"), category)
    page = Paginator(entries, ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "matters/audit/audit.html", {
        "matter": matter, "check": audit_verify(matter=matter), "page": page, "category": category,
        "categories": [(key, label) for key, (label, _) in CATEGORIES.items()],
    })
