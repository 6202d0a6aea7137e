"""PostgreSQL search reads each page's stored tsvector (a generated column with its GIN index), so a search
neither matches nor ranks by parsing page text again; SQLite keeps its FTS5 table."""

import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matters.exhibits.search import matter_search, page_ids_with_phrase, page_ids_with_words
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
