"""The matter page lists a large matter's files a page at a time; the counts above the list still cover them all."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from matters.exhibits.listing import EXHIBITS_PER_PAGE
from matters.models import Exhibit

pytestmark = pytest.mark.django_db
ROW = 'data-status="ready"'


def _ready_exhibits(matter, user, count: int) -> None:
    Exhibit.objects.bulk_create(
        Exhibit(matter=matter, label=str(n), label_seq=n, title=f"Filing {n:04d}", origin="client",
                original_name=f"filing-{n}.pdf", sha256=f"{n:064x}", size_bytes=1, kind="pdf", status="ready",
                page_count=3, uploaded_by=user)
        for n in range(1, count + 1)
    )


def test_matter_page_shows_the_first_page_of_files_and_counts_them_all(client, attorney, matter):
    _ready_exhibits(matter, attorney, EXHIBITS_PER_PAGE + 5)
    client.force_login(attorney)
    url = reverse("matters:detail", args=[matter.pk])
    page = client.get(url).content.decode()
    assert page.count(ROW) == EXHIBITS_PER_PAGE
    assert "Filing 0001" in page and f"Filing {EXHIBITS_PER_PAGE + 1:04d}" not in page
    assert f"{EXHIBITS_PER_PAGE + 5} files: {EXHIBITS_PER_PAGE + 5} evidence" in page
    assert f'hx-get="{url}?page=2"' in page and f'href="{url}?page=2"' in page


def test_page_two_of_the_list_comes_as_a_partial_to_htmx_and_whole_without_it(client, attorney, matter):
    _ready_exhibits(matter, attorney, EXHIBITS_PER_PAGE + 5)
    client.force_login(attorney)
    url = reverse("matters:detail", args=[matter.pk])
    partial = client.get(url, {"page": 2}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="exhibit-list").content.decode()
    assert partial.count(ROW) == 5
    assert f"Filing {EXHIBITS_PER_PAGE + 1:04d}" in partial and "Filing 0001" not in partial
    assert partial.lstrip().startswith('<div id="exhibit-list">') and "<h1>" not in partial
    assert f'hx-get="{url}?page=1"' in partial  # back to the first page
    whole = client.get(url, {"page": 2}).content.decode()
    assert "<h1>" in whole and whole.count(ROW) == 5


def test_rows_endpoint_answers_the_page_asked_for(client, attorney, matter):
    _ready_exhibits(matter, attorney, EXHIBITS_PER_PAGE + 5)
    client.force_login(attorney)
    url = reverse("matters:exhibit_rows", args=[matter.pk])
    assert client.get(url).content.decode().count(ROW) == EXHIBITS_PER_PAGE
    assert client.get(url, {"page": 2}).content.decode().count(ROW) == 5
    assert client.get(url, {"page": "99"}).content.decode().count(ROW) == 5  # past the end: the last page


def test_a_matter_that_fits_on_one_page_has_no_pager(client, attorney, matter):
    _ready_exhibits(matter, attorney, 3)
    client.force_login(attorney)
    page = client.get(reverse("matters:detail", args=[matter.pk])).content.decode()
    assert page.count(ROW) == 3 and "?page=2" not in page


def test_the_matter_page_costs_the_same_queries_for_a_hundred_files_as_for_three(client, attorney, matter):
    client.force_login(attorney)
    url = reverse("matters:detail", args=[matter.pk])
    _ready_exhibits(matter, attorney, 3)
    client.get(url)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    Exhibit.objects.filter(matter=matter).delete()
    _ready_exhibits(matter, attorney, EXHIBITS_PER_PAGE + 5)
    with CaptureQueriesContext(connection) as many:
        client.get(url)
    assert len(many.captured_queries) == len(few.captured_queries)


def test_the_search_box_gets_its_results_without_the_list_being_read(client, attorney, matter):
    _ready_exhibits(matter, attorney, 3)
    client.force_login(attorney)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("matters:detail", args=[matter.pk]), {"q": "lease"}, HTTP_HX_REQUEST="true",
                              HTTP_HX_TARGET="search-results")
    assert response.content.decode().lstrip().startswith('<div id="search-results">')
    assert not [q for q in queries.captured_queries if 'FROM "matters_exhibit" WHERE' in q["sql"]
                and "COUNT" in q["sql"].upper()]


def test_the_matter_page_counts_its_files_once_and_its_pager_says_how_many(client, attorney, matter):
    _ready_exhibits(matter, attorney, EXHIBITS_PER_PAGE + 5)
    client.force_login(attorney)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("matters:detail", args=[matter.pk])).content.decode()
    # The counts above the list (one GROUP BY) give the pager its total: no COUNT of the whole list besides.
    counting = [q["sql"] for q in queries.captured_queries if 'FROM "matters_exhibit"' in q["sql"]
                and "COUNT(" in q["sql"].upper()]
    assert len(counting) == 2 and all("GROUP BY" in sql for sql in counting), counting
    assert f"Files 1–{EXHIBITS_PER_PAGE} of {EXHIBITS_PER_PAGE + 5}" in page
    # Filtered, the list counts what the filter leaves.
    filtered = client.get(reverse("matters:detail", args=[matter.pk]), {"review": "inclusive"}).content.decode()
    assert "No case materials yet." in filtered and "Files 1–" not in filtered
