"""PostgreSQL search reads each page's stored tsvector (a generated column with its GIN index), so a search
neither matches nor ranks by parsing page text again; SQLite keeps its FTS5 table."""

import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matters.exhibits.search import matter_search, matter_search_results, page_ids_with_phrase, page_ids_with_words
from matters.exhibits.services import exhibit_create
from matters.models import Page

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql", reason="the stored tsvector is PostgreSQL's")]


def _page(matter, attorney, text: str) -> Page:
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(b"%PDF-1.4 stub"), original_name="a.pdf",
                             origin="client", uploaded_by=attorney, enqueue=False)
    exhibit.status = "ready"
    exhibit.save()
    return Page.objects.create(exhibit=exhibit, number=1, text=text, source="pdf", width_pt=612, height_pt=792)


def test_searches_read_the_stored_vector_and_parse_no_page_text(matter, attorney):
    page = _page(matter, attorney, "The lessee defaulted on the equipment lease.")
    with CaptureQueriesContext(connection) as queries:
        assert [hit.page_number for hit in matter_search(matter=matter, query="defaulted lease")] == [1]
        assert page_ids_with_phrase(matter=matter, words=["equipment", "lease"]) == [(page.pk, page.exhibit_id)]
        assert page_ids_with_words(matter=matter, words=["lessee", "lease"]) == [(page.pk, page.exhibit_id)]
    for query in queries.captured_queries:
        assert "search_vector" in query["sql"] and "to_tsvector" not in query["sql"]


def test_the_vector_is_generated_from_the_reading_text_and_follows_its_changes(matter, attorney):
    page = _page(matter, attorney, "The lessee defaulted.")
    with connection.cursor() as cursor:
        cursor.execute("SELECT attgenerated FROM pg_attribute WHERE attrelid = 'matters_page'::regclass "
                       "AND attname = 'search_vector'")
        assert cursor.fetchone() == ("s",)  # stored
    Page.objects.filter(pk=page.pk).update(reading_text="The guarantor paid in full.")
    assert matter_search(matter=matter, query="defaulted") == []
    assert [hit.page_number for hit in matter_search(matter=matter, query="guarantor")] == [1]


def test_the_gin_index_over_the_stored_vector_answers_a_match(matter, attorney):
    _page(matter, attorney, "The lessee defaulted.")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a one-row table would be scanned; ask what else serves
        cursor.execute("EXPLAIN SELECT id FROM matters_page WHERE search_vector @@ "
                       "websearch_to_tsquery('english', 'defaulted')")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "matters_page_search_vector" in plan


def _plan_of(sql: str) -> list[tuple]:
    """The planner's plan for ``sql``: each node's type, table, index and estimated rows and cost, depth first
    (EXPLAIN's JSON without the conditions, which name the words)."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0][0]["Plan"]
    nodes, stack = [], [plan]
    while stack:
        node = stack.pop()
        nodes.append(tuple(node.get(key) for key in ("Node Type", "Relation Name", "Index Name", "Plan Rows",
                                                      "Total Cost")))
        stack.extend(reversed(node.get("Plans", [])))
    return nodes


def _court_pages_and_one_zebra(matter, attorney) -> None:
    """120 pages saying "The court entered judgment.", page 7 also "The zebra escaped.", with the planner's
    statistics read (ANALYZE), which tell it how common each word is."""
    first = _page(matter, attorney, "The court entered judgment.")
    for n in range(2, 121):
        Page.objects.create(exhibit_id=first.exhibit_id, number=n, source="pdf", width_pt=612, height_pt=792,
                            text="The court entered judgment." + (" The zebra escaped." if n == 7 else ""))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE matters_page")


def test_the_search_box_plans_alike_for_a_common_word_and_a_rare_one(matter, attorney):
    """The search box's count and ranking are planned without the words typed. Shown them, PostgreSQL counted a
    common word's matches by walking the pages in order and matching each page's vector (3 to 6 µs a page), which
    for a word on 15% of 200,000 pages read 14,000 of them; unseen, the GIN index answers every word."""
    _court_pages_and_one_zebra(matter, attorney)
    plans = {}
    for word in ("court", "zebra"):
        with CaptureQueriesContext(connection) as queries:
            results = matter_search_results(matter=matter, query=word)
        assert results.matches == (120 if word == "court" else 1)
        plans[word] = [_plan_of(query["sql"]) for query in queries.captured_queries
                       if "search_vector @@" in query["sql"]]
    assert len(plans["court"]) == 2 and plans["court"] == plans["zebra"]


def test_the_verifiers_phrase_lookup_plans_alike_for_a_common_phrase_and_a_missing_one(matter, attorney):
    """A quotation's phrase is looked up planned without its words: shown a phrase of common words, the planner
    read the pages in order until it had enough, every page of the matter when the phrase is nowhere (a quotation
    the draft made up: 850 ms at 200,000 pages)."""
    _court_pages_and_one_zebra(matter, attorney)
    plans = {}
    for words, pages in ((["court", "entered"], 5), (["zebra", "escaped"], 1), (["judgment", "court"], 0)):
        with CaptureQueriesContext(connection) as queries:
            assert len(page_ids_with_phrase(matter=matter, words=words, limit=5)) == pages
        plans[pages] = [_plan_of(query["sql"]) for query in queries.captured_queries]
    assert len(plans[5]) == 1 and plans[5] == plans[1] == plans[0]
