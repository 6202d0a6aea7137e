"""The table of authorities' preview for a version of a draft, linked from its review page.

Thin: the table is :func:`matters.drafts.exports.version_table`, its pages :func:`matters.drafts.toa_pages.
toa_paginate` (the brief laid out as the DOCX export prints it). Any member of the matter may look, as at the
review page; a non-member gets 404 (:func:`matters.selectors.matter_for_user`).
"""

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from matters.audit.services import audit_verify

from .exports import preview_footer, version_table
from .toa_pages import toa_paginate
from .views import _version_for


@require_GET
def draft_authorities(request: HttpRequest, matter_id: int, draft_id: int, number: int) -> HttpResponse:
    """The table as the DOCX export would print it now: each heading's entries, their pages in the brief and the
    authority exhibit grounding each; or the refusal listing every citation that keeps it from being built."""
    version = _version_for(request.user, matter_id, draft_id, number)
    draft = version.draft
    table = version_table(version)
    pages_problem = ""
    if table.ok and table.entries:
        title = f"{draft.title} v{version.number}"
        try:
            toa_paginate(table, text=version.text, title=title,
                         footer=preview_footer(version, audit_verify(matter=draft.matter).head_hash))
        except ValidationError as problem:
            pages_problem = " ".join(problem.messages)
    return render(request, "matters/drafts/draft_authorities.html", {
        "matter": draft.matter, "draft": draft, "version": version, "table": table,
        "sections": table.sections(), "pages_problem": pages_problem,
    })
