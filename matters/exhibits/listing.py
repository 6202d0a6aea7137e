"""The matter page's exhibit list, one page of rows at a time.

A matter of tens of thousands of pages has thousands of files; rendering every row made the matter page about
250 KB of HTML and some 60 ms of server CPU per view at 616 files. The list is cut into pages of
``EXHIBITS_PER_PAGE`` rows (Django's :class:`~django.core.paginator.Paginator`, in the order of
:func:`matters.selectors.exhibits_of_matter`); the counts above it still cover every file of the matter.
"""

from django.core.paginator import Page, Paginator

from matters.models import Matter
from matters.selectors import exhibit_counts, exhibits_of_matter

EXHIBITS_PER_PAGE = 100
# The fields exhibit_counts reads, and the matter (the related manager sets it on each row: deferred, it would
# cost a query per row).
_COUNTED_FIELDS = ("id", "matter", "status", "origin", "generated_reason", "generated_override_reason")


def exhibit_list_page(matter: Matter, number: str | int | None) -> Page:
    """Return page ``number`` (1-based; as typed in ``?page=``) of ``matter``'s exhibits, ``EXHIBITS_PER_PAGE``
    rows each. A number that is not a number gives the first page and one past the end gives the last, as
    :meth:`Paginator.get_page` does, so a stale link still shows rows."""
    return Paginator(exhibits_of_matter(matter), EXHIBITS_PER_PAGE).get_page(number)


def matter_exhibit_counts(matter: Matter) -> dict[str, int]:
    """The counts of :func:`matters.selectors.exhibit_counts` over every exhibit of ``matter`` (not only the
    page shown), reading only the fields they need."""
    return exhibit_counts(matter.exhibits.only(*_COUNTED_FIELDS))
