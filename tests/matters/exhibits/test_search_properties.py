"""The search box's query language (matters/exhibits/query_language.py) on the test database, so on SQLite and on
PostgreSQL alike: what each operator matches on a small matter, the messages for what cannot be read, and a
property: whatever is typed, the search answers with results or a message, never an exception."""

import random
import re

import pytest
from django.db import connection
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from matters.exhibits import search
from matters.exhibits.query_language import (
    MAX_DISTANCE,
    And,
    Near,
    Not,
    Or,
    PageWords,
    Phrase,
    QuerySyntaxError,
    Term,
    first_letters,
    page_matches,
    parse_query,
    prefix_forms,
    relaxed,
)
from matters.exhibits.search import SearchResults, matter_search, matter_search_results
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db

# Positions are counted from 0 in each text; the proximity cases below say which words are how far apart.
TEXTS = [
    "The tenant paid the rent late in March.",                          # 1
    "The landlord sued the tenant for breach of the lease.",            # 2: tenant..breach 2 apart
    "Breach of contract is alleged; the contract was signed in May.",   # 3
    "The driver's negligence caused the accident; a negligent act.",    # 4
    "The offer was made and the acceptance followed within days.",      # 5: offer..acceptance 5 apart
    "Acceptance came before any offer was withdrawn.",                  # 6: acceptance..offer 4 apart
    "The non-compete clause binds the employee.",                       # 7
    "A noncompete agreement was never signed.",                         # 8
    "The pre-trial motion was denied.",                                 # 9
    "Sublease of the premises was forbidden by the lease.",             # 10
]


@pytest.fixture
def pages(matter):
    return ExhibitFactory(matter=matter, pages=TEXTS)


def found(matter, query: str) -> set[int]:
    results = matter_search_results(matter=matter, query=query)
    assert not results.error, results.error
    assert results.ranked and results.matches == len(results.hits)
    numbers = {hit.page_number for hit in results.hits}
    assert {hit.page_number for hit in matter_search(matter=matter, query=query)} == numbers
    return numbers


@pytest.mark.parametrize(("query", "pages_found"), [
    ("tenant", {1, 2}),
    ("tenant rent", {1}),
    ("tenant AND rent", {1}),
    ("tenant OR contract", {1, 2, 3}),
    ("lease NOT sublease", {2}),
    ("lease AND NOT sublease", {2}),
    ("(lease OR contract) NOT breach", {10}),
    ('"breach of contract"', {3}),
    ('"breach of the lease"', {2}),
    ('"breach of contr*"', {3}),
    ("negligen*", {4}),  # "negligence" is indexed as its stem "neglig": the wildcard still finds it
    ("neglig*", {4}),
    ("offer w/5 acceptance", {5, 6}),
    ("offer W/5 acceptance", {5, 6}),
    ("offer w/4 acceptance", {6}),
    ("offer pre/5 acceptance", {5}),
    ("offer PRE/5 acceptance", {5}),
    ("acceptance pre/5 offer", {6}),
    ("acceptance pre/3 offer", set()),
    ("offer pre/5 acceptance NOT withdrawn", {5}),
    ("offer NOT (acceptance pre/5 offer)", {5}),
    ("(tenant OR landlord) w/2 breach", {2}),
    ("accept* w/5 offer", {5, 6}),
    ("non-compete", {7, 8}),
    ("noncompete", {8}),
    ("pre-trial motion", {9}),  # answered 500 on SQLite: FTS5 took no implied AND after a parenthesis
    ("pre-trial w/3 denied", {9}),
    ("tenant or contract", set()),  # lower-case "or" is a word, all required
])
def test_each_operator_matches_the_same_pages_on_both_databases(matter, pages, query, pages_found):
    assert found(matter, query) == pages_found


def test_a_hyphenated_word_before_another_word_is_searched_not_a_server_error(client, attorney, matter, pages):
    client.force_login(attorney)
    response = client.get(reverse("matters:detail", args=[matter.pk]), {"q": "pre-trial motion"},
                          headers={"HX-Request": "true", "HX-Target": "search-results"})
    assert response.status_code == 200
    assert "1 page found for “pre-trial motion”." in response.content.decode()


def test_ordered_proximity_past_the_ranking_bound_counts_only_pages_in_order(matter, pages, monkeypatch):
    after, before = "An offer, then acceptance.", "Acceptance, then an offer."
    exhibit = ExhibitFactory(matter=matter, pages=[before, after, before, after, after])
    monkeypatch.setattr(search, "RANKED_MATCHES_MAX", 2)
    results = matter_search_results(matter=matter, query="offer pre/3 acceptance", limit=2)
    assert not results.ranked and results.matches == 3  # counted up to the bound and one more, in order only
    assert [(hit.exhibit_id, hit.page_number) for hit in results.hits] == [(exhibit.pk, 2), (exhibit.pk, 4)]
    monkeypatch.setattr(search, "RANKED_MATCHES_MAX", 3)
    results = matter_search_results(matter=matter, query="offer pre/3 acceptance")
    assert results.ranked and {hit.page_number for hit in results.hits} == {2, 4, 5}


@pytest.mark.parametrize(("query", "message"), [
    ("tenant AND", "AND needs a word or phrase on each side"),
    ("OR tenant", "OR needs a word or phrase on each side"),
    ("tenant NOT", "NOT needs a word or phrase after it"),
    ("(tenant rent", "is never closed"),
    ("tenant rent)", "has no “(” before it"),
    ("tenant () rent", "Parentheses with nothing between them"),
    ("offer w/ acceptance", "w/ needs a number of words"),
    ("offer w/x acceptance", "w/ needs a number of words"),
    ("offer pre/ acceptance", "pre/ needs a number of words"),
    ("offer w/0 acceptance", f"from 1 to {MAX_DISTANCE} words"),
    ("offer w/51 acceptance", f"from 1 to {MAX_DISTANCE} words"),
    ("offer w/5", "needs a word or phrase on each side"),
    ("NOT tenant", "cannot be only NOT"),
    ("NOT tenant NOT rent", "cannot be only NOT"),
    ("tenant OR NOT rent", "NOT cannot be one of the alternatives of OR"),
    ("tenant rent OR lease", "mixes AND and OR without parentheses"),
    ("tenant OR offer w/5 acceptance", "OR beside w/5 needs parentheses"),
    ("(tenant rent) w/5 lease", "w/5 joins two words"),
    ("offer w/5 acceptance w/5 withdrawn", "w/5 joins two words"),
    ("ne*", "at least 3 letters before the *"),
    ("*ment", "only at the end of a word"),
    ("neg*ence", "only at the end of a word"),
    ("neglig?nce", "? wildcard"),
    ('"bre* of contract"', "can end only the last word"),
    ("offer NEAR acceptance", "NEAR is not an operator"),
    (" ".join(["rent"] * 65), "too long"),
    ("(" * 17 + "rent" + ")" * 17, "parentheses inside each other"),
])
def test_what_cannot_be_read_gets_a_message_on_the_search_page(client, attorney, matter, pages, query, message):
    with pytest.raises(QuerySyntaxError, match=re.escape(message)):
        parse_query(query)
    results = matter_search_results(matter=matter, query=query)
    assert results.error and message in results.error and results.hits == [] and results.searchable
    client.force_login(attorney)
    html = client.get(reverse("matters:detail", args=[matter.pk]), {"q": query},
                      headers={"HX-Request": "true", "HX-Target": "search-results"}).content.decode()
    assert 'id="search-error"' in html and "could not be read" in html and "found for" not in html


def test_free_text_that_is_no_query_is_read_as_words_by_matter_search(matter, pages):
    # A request in words (bench/retrieval.py passes them) may hold an unclosed parenthesis: read as words.
    assert {hit.page_number for hit in matter_search(matter=matter, query="tenant rent (see lease")} == set()
    assert {hit.page_number for hit in matter_search(matter=matter, query="tenant paid (March")} == {1}
    assert {hit.page_number for hit in matter_search(matter=matter, query="tenant OR")} == {1, 2}


def test_the_parser_builds_the_tree_the_language_describes():
    assert parse_query("(a b) OR c") == Or((And((Term("a"), Term("b"))), Term("c")))
    assert parse_query("a AND NOT b") == And((Term("a"), Not(Term("b"))))
    assert parse_query('"Breach of Contract" pre/3 damag*') == Near(
        Phrase(("breach", "of", "contract")), Term("damag", prefix=True), 3, True)
    assert parse_query("non-compete") == Or((Phrase(("non", "compete")), Term("noncompete")))
    assert parse_query("and or not") == And((Term("and"), Term("or"), Term("not")))
    assert parse_query("“tenant paid”") == Phrase(("tenant", "paid"))
    for nothing in ["OR AND NOT *", '"" * -- ?', "NEAR", "“ ”", "( )", "w/5"]:
        assert parse_query(nothing) is None


def test_a_wildcard_also_asks_for_the_words_whose_stem_is_shorter_than_its_letters():
    assert "negligence" in prefix_forms("negligen")
    assert prefix_forms("contract") == ()  # every completion's stem begins with "contract"


# ---- whatever is typed ------------------------------------------------------------------------------------------

_PIECES = ["AND", "OR", "NOT", "AND NOT", "NEAR", "w/", "w/5", "W/1", "pre/3", "PRE/50", "w/0", "pre/51", "w/999999",
           "(", ")", '"', "“", "”", "*", "**", "?", "-", "--", "_", "tenant", "rent", "lease", "negligen*", "ab*",
           "non-compete", "pre-trial", "2024-05", "offer", "acceptance", "the", "\x00", "\x01", "\x1f", "\u00ad",
           "é", "ﬁ", "ǅ", "٣", "²", "𝔘", "\u0301", "'", "\\", ":", "^", "{", "}", "[", "]", "%s", "matter:1"]
_QUERIES = st.one_of(
    st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=8)), max_size=40).map(" ".join),
    st.lists(st.sampled_from(_PIECES), max_size=40).map("".join),
    st.text(max_size=300),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=_QUERIES)
@example(query="tenant " * 5000)
@example(query="(" * 5000 + "tenant" + ")" * 5000)
@example(query="NOT " * 5000 + "tenant")
@example(query="a" * 5000 + "*")
@example(query='"' + "tenant " * 3000 + '"')
@example(query="(negligen* OR accept* OR non-compete) w/50 (pre-trial OR offer*)")
@example(query="tenant w/5 " + "x" * 3000)
def test_any_text_gives_results_or_a_message_never_an_error(matter, pages, query):
    results = matter_search_results(matter=matter, query=query)
    assert isinstance(results, SearchResults)
    assert all(isinstance(hit.page_number, int) for hit in results.hits)
    assert not (results.error and results.hits)
    assert isinstance(results.error, str)
    assert isinstance(matter_search(matter=matter, query=query), list)


_WORDS = ["tenant", "rent", "lease", "offer", "acceptance", "the", "of", "non-compete", "pre-trial", "2024-05", "é",
          "ﬁrm", "ǅemal", "٣", "²", "𝔘nit", "naïve", "x" * 300]
_LEAVES = st.one_of(
    st.sampled_from(_WORDS),
    st.sampled_from(["negligen*", "accept*", "tenan*", "non-comp*", "𝔘ni*", "ﬁrm*"]),
    st.builds(lambda words, last: '"' + " ".join([*words, last]) + '"', st.lists(st.sampled_from(_WORDS), max_size=3),
              st.sampled_from([*_WORDS, "accept*", "tenan*", "non-comp*"])),
)
_NEAR = st.builds(lambda a, op, n, b: f"({a} {op}/{n} {b})", st.one_of(_LEAVES, st.builds("({} OR {})".format, _LEAVES,
                  _LEAVES)), st.sampled_from(["w", "W", "pre", "PRE"]), st.integers(1, 50), _LEAVES)
_VALID = st.recursive(st.one_of(_LEAVES, _NEAR), lambda inner: st.one_of(
    st.builds("({} AND {})".format, inner, inner), st.builds("({} OR {})".format, inner, inner),
    st.builds("({} NOT {})".format, inner, inner), st.builds("({} {})".format, inner, inner)), max_leaves=8)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=_VALID)
def test_every_query_the_language_allows_is_answered_by_the_database(matter, pages, query):
    results = matter_search_results(matter=matter, query=query)
    assert not results.error, (query, results.error)
    assert results.searchable
    hits = matter_search(matter=matter, query=query)
    assert {(h.exhibit_id, h.page_number) for h in hits} == {(h.exhibit_id, h.page_number) for h in results.hits}


@settings(max_examples=200, deadline=None)
@given(query=_VALID, text=st.lists(st.sampled_from(_WORDS + ["Tenant", "OFFER", "Acceptances", "negligently", "É"]),
                                   max_size=60).map(" ".join))
def test_the_order_check_reads_only_the_words_that_can_matter(query, text):
    node = parse_query(query)
    assert page_matches(node, PageWords(text, first_letters(node))) == page_matches(node, PageWords(text))


@pytest.fixture
def word_salad(matter):
    """Thirty pages of the test vocabulary in random order, so proximities and phrases hit and miss."""
    rng = random.Random(5)
    vocabulary = [w for w in _WORDS if len(w) < 20] + ["acceptances", "negligently", "tenants", "offered"]
    return ExhibitFactory(matter=matter, pages=[" ".join(rng.choices(vocabulary, k=40)) for _ in range(30)])


@pytest.mark.skipif(connection.vendor != "sqlite", reason="FTS5's reading against the check that stands in for it")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=_VALID)
def test_the_order_check_reads_pages_as_fts5_does(matter, word_salad, query):
    # On SQLite, pre/N is FTS5's unordered NEAR and then this check: for a query without pre/N both must agree.
    unordered = query.replace("pre/", "w/").replace("PRE/", "w/")
    node = parse_query(unordered)
    assert node == relaxed(node)
    by_index = {hit.page_number for hit in matter_search(matter=matter, query=unordered, limit=100)}
    by_check = {page.number for page in word_salad.pages.all() if page_matches(node, PageWords(page.reading_text))}
    assert by_index == by_check


def test_a_proximity_whose_snippet_fts5_cannot_make_still_shows_its_pages(matter, word_salad):
    # SQLite 3.40's snippet() answers "database disk image is malformed" for this NEAR of overlapping phrases on
    # these pages: the hits come with the words marked from the query's words alone.
    results = matter_search_results(matter=matter, query='(tenant OR "tenant tenant") w/8 lease')
    assert results.matches and not results.error
    assert all("<mark>" in hit.snippet_html for hit in results.hits)


def test_a_wildcard_after_a_phrase_is_refused_with_where_it_goes():
    # Read as punctuation, the * was dropped and the exact phrase searched, without a word.
    with pytest.raises(QuerySyntaxError, match="inside the marks"):
        parse_query('"breach of contr"*')
    assert parse_query('"breach of contr*"') == Phrase(("breach", "of", "contr"), prefix=True)



@pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite reads pages to check the order of pre/N")
def test_pre_n_reads_a_bounded_number_of_pages_and_says_so(matter, word_salad, monkeypatch, client, attorney):
    everything = matter_search_results(matter=matter, query="tenant pre/5 lease")
    assert not everything.partial and everything.matches
    monkeypatch.setattr(search, "PRE_CHECK_MAX", 3)
    bounded = matter_search_results(matter=matter, query="tenant pre/5 lease")
    assert bounded.partial and bounded.matches <= 3
    client.force_login(attorney)
    html = client.get(reverse("matters:detail", args=[matter.pk]), {"q": "tenant pre/5 lease"},
                      headers={"HX-Request": "true", "HX-Target": "search-results"}).content.decode()
    assert "checked on the first 3 pages" in html
