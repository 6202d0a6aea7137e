"""The matter page's exhibit list, one page of rows at a time.

A matter of tens of thousands of pages has thousands of files; rendering every row made the matter page about
250 KB of HTML and some 60 ms of server CPU per view at 616 files. The list is cut into pages of
``EXHIBITS_PER_PAGE`` rows (Django's :class:`~django.core.paginator.Paginator`, in the order of
:func:`matters.selectors.exhibits_of_matter`); the counts above it still cover every file of the matter.
"""

from django.core.paginator import Page, Paginator
from django.db.models import BooleanField, Count, ExpressionWrapper, Q

from matters.exhibits.rows import for_rows
from matters.models import Exhibit, Matter
from matters.selectors import exhibit_counts_of_groups, exhibits_of_matter

EXHIBITS_PER_PAGE = 100
# Exhibit.marked_generated as SQL.
MARKED_GENERATED = ExpressionWrapper(~Q(generated_reason="") & Q(generated_override_reason=""),
                                     output_field=BooleanField())


def exhibit_list_page(matter: Matter, number: str | int | None, review: str = "", total: int | None = None) -> Page:
    """Return page ``number`` (1-based; as typed in ``?page=``) of ``matter``'s exhibits, ``EXHIBITS_PER_PAGE``
    rows each. A number that is not a number gives the first page and one past the end gives the last, as
    :meth:`Paginator.get_page` does, so a stale link still shows rows. ``review="inclusive"`` lists only the
    inclusive messages (:mod:`matters.email.inclusive`) and the attachments directly under them; "" lists
    everything. ``total``: the number of the matter's exhibits when the caller has just counted them
    (:func:`matter_exhibit_counts`), so that the whole list is not counted twice; ignored under a review filter."""
    exhibits = exhibits_of_matter(matter)
    if review == "inclusive":
        exhibits = exhibits.filter(Q(kind=Exhibit.Kind.EMAIL, message__inclusive=True)
                                   | Q(parent__kind=Exhibit.Kind.EMAIL, parent__message__inclusive=True))
    # The page's ids first, then their rows: an OFFSET over the rows themselves builds every skipped row's joins
    # (26 ms at page 200 of 24,566 files, against 2.5 for the ids, which the index exhibit_family_order holds).
    paginator = Paginator(exhibits.values_list("pk", flat=True), EXHIBITS_PER_PAGE)
    if total is not None and not review:
        paginator.count = total  # a cached_property: the COUNT(*) is not run
    page = paginator.get_page(number)
    ids = list(page.object_list)
    rows = for_rows(matter.exhibits.order_by()).in_bulk(ids)
    page.object_list = [rows[pk] for pk in ids if pk in rows]  # one deleted in between is left out
    return page


def matter_exhibit_counts(matter: Matter) -> dict[str, int]:
    """The counts of :func:`matters.selectors.exhibit_counts_of_groups` over every exhibit of ``matter`` (not only
    the page shown), without reading its rows: one ``GROUP BY`` of the matter's files by status and origin, read
    from the index ``exhibit_counts``, and one of the few marked generated (index ``exhibit_marked_generated``).
    Grouping by the generated mark in the same query made SQLite read every row and sort them: 20 ms at 24,566
    files against 4.7."""
    # COUNT(*), not COUNT(id): the index holds no id on PostgreSQL, which then read every row from the table
    # (6.4 ms at 24,566 files) instead of the index alone (2.6 ms).
    by_status = matter.exhibits.order_by().values_list("status", "origin").annotate(number=Count("*"))
    marked = dict(((status, origin), number) for status, origin, number in (
        matter.exhibits.exclude(generated_reason="").filter(generated_override_reason="").order_by()
        .values_list("status", "origin").annotate(number=Count("*"))))
    groups = []
    for status, origin, number in by_status:
        generated = marked.get((status, origin), 0)
        groups += [(status, origin, True, generated), (status, origin, False, number - generated)]
    return exhibit_counts_of_groups(groups)
