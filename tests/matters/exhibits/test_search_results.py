"""The search box's results: every match ranked while few pages match; past ``RANKED_MATCHES_MAX`` the first pages
in the order they were added, and the page says which it shows."""

import pytest
from django.urls import reverse

from matters.exhibits import search
from matters.exhibits.search import matter_search, matter_search_results
from matters.services import matter_create
from tests.factories import ExhibitFactory, PageFactory

pytestmark = pytest.mark.django_db

# Pages that all hold "tenant": the first says it most often, so it ranks first whatever the order of insertion.
TEXTS = ["The lease names a landlord and a tenant.",
         "The roof leaked in March.",
         "The tenant paid rent.",
         "Tenant, tenant, tenant: the tenant withheld rent because the tenant's roof leaked.",
         "The tenant moved out in June."]


@pytest.fixture
def pages(matter):
    exhibit = ExhibitFactory(matter=matter)
    return [PageFactory(exhibit=exhibit, text=text) for text in TEXTS]


def test_few_matches_are_all_counted_and_ranked_best_first(matter, pages):
    results = matter_search_results(matter=matter, query="tenant")
    assert results.ranked and results.matches == 4
    assert [hit.page_number for hit in results.hits][0] == 4
    assert sorted(hit.page_number for hit in results.hits) == [1, 3, 4, 5]
    assert results.hits == matter_search(matter=matter, query="tenant")
    assert "<mark>" in results.hits[0].snippet_html


def test_past_the_ranking_bound_the_first_pages_added_are_shown_unranked(matter, pages, monkeypatch):
    monkeypatch.setattr(search, "RANKED_MATCHES_MAX", 2)
    results = matter_search_results(matter=matter, query="tenant", limit=2)
    assert not results.ranked and results.matches == 3  # counted up to the bound and one more, no further
    assert [hit.page_number for hit in results.hits] == [1, 3]  # by page id: the order they were added
    assert results.ranked_max == "2"
    phrase = matter_search_results(matter=matter, query='"tenant paid"')
    assert phrase.ranked and [hit.page_number for hit in phrase.hits] == [3]


def test_another_matters_pages_are_neither_counted_nor_shown(matter, pages, attorney, monkeypatch):
    other = matter_create(name="Other v. Other", created_by=attorney)
    ExhibitFactory(matter=other, pages=["The tenant of the other matter."] * 3)
    monkeypatch.setattr(search, "RANKED_MATCHES_MAX", 4)  # counting the other matter's 3 would pass it
    results = matter_search_results(matter=matter, query="tenant")
    assert results.ranked and results.matches == 4
    assert {hit.exhibit_id for hit in results.hits} == {pages[0].exhibit_id}
    assert matter_search_results(matter=other, query="tenant").matches == 3
    assert matter_search_results(matter=matter, query="nowhere").hits == []


def test_the_search_box_says_whether_it_ranked_the_matches(client, attorney, matter, pages, monkeypatch):
    client.force_login(attorney)
    url = reverse("matters:detail", args=[matter.pk])
    headers = {"HX-Request": "true", "HX-Target": "search-results"}
    html = client.get(url, {"q": "tenant"}, headers=headers).content.decode()
    assert "4 pages found for “tenant”." in html
    monkeypatch.setattr(search, "RANKED_MATCHES_MAX", 2)
    html = client.get(url, {"q": "tenant"}, headers=headers).content.decode()
    assert "More than 2 pages match “tenant”: showing the first 4 in the order they were added" in html
    assert html.count('<li><a href="') == 4


@pytest.mark.parametrize("query", ["OR AND NOT *", '"" * -- ?', "NEAR", "“ ”"])
def test_a_query_of_operators_or_punctuation_alone_has_nothing_to_search_for(query, client, attorney, matter,
                                                                           pages):
    ExhibitFactory(matter=matter, pages=["Not this, or that, and near the other."])
    assert search.search_terms(query) is None
    results = matter_search_results(matter=matter, query=query)
    assert not results.searchable and results.hits == []
    client.force_login(attorney)
    html = client.get(reverse("matters:detail", args=[matter.pk]), {"q": query},
                      headers={"HX-Request": "true", "HX-Target": "search-results"}).content.decode()
    assert "Nothing to search for in" in html and "found for" not in html


def test_or_in_capitals_finds_either_side_and_a_minus_sign_is_no_operator(matter, pages):
    # The former search box dropped OR and searched both words; in the query language it finds either side, alike
    # on both databases.
    either = matter_search_results(matter=matter, query="tenant OR roof*")
    assert either.matches == 5 and sorted(hit.page_number for hit in either.hits) == [1, 2, 3, 4, 5]
    assert matter_search_results(matter=matter, query="tenant roof*").matches == 1
    assert matter_search_results(matter=matter, query="roof* NOT tenant").matches == 1
    assert matter_search_results(matter=matter, query="tenant -roof").matches == 1


def test_an_unclosed_quote_searches_its_words_and_is_echoed_as_typed(client, attorney, matter, pages):
    terms = search.search_terms('"tenant paid')
    assert terms == search.SearchTerms([], [], ["tenant", "paid"])
    assert [hit.page_number for hit in matter_search_results(matter=matter, query='"tenant paid').hits] == [3]
    client.force_login(attorney)
    html = client.get(reverse("matters:detail", args=[matter.pk]), {"q": '"tenant paid <b>'},
                      headers={"HX-Request": "true", "HX-Target": "search-results"}).content.decode()
    assert "found for &quot;tenant paid &lt;b&gt;." in html
