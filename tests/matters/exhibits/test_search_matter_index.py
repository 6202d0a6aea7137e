"""SQLite's full-text index holds each page's matter, and a search names its matter inside the FTS5 query: the
index yields only the matter's own matches, however many pages of other matters hold the words."""

from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matters.exhibits.search import matter_search, matter_search_results, page_ids_with_phrase, page_ids_with_words
from matters.exhibits.search_index import index_matter, unindex_matter
from matters.models import Page
from matters.services import matter_create
from tests.factories import PageFactory

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 index is SQLite's")]

TEXT = "The lessee defaulted on the equipment lease."


@pytest.fixture
def large(attorney):
    """Another matter whose pages all hold the words searched for: more of them than of ``matter``'s."""
    other = matter_create(name="Large v. Matter", created_by=attorney)
    for _ in range(12):
        PageFactory(exhibit__matter=other, text=TEXT)
    return other


def _indexed() -> set[tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT rowid, matter FROM matters_page_fts")
        return {(row[0], int(row[1])) for row in cursor.fetchall()}


def _pages() -> set[tuple[int, int]]:
    return set(Page.objects.values_list("id", "exhibit__matter_id"))


def _fts_rows(match: str) -> set[int]:
    """The rowids the index alone yields for a MATCH expression, before any join to pages or exhibits."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT rowid FROM matters_page_fts WHERE matters_page_fts MATCH %s", [match])
        return {row[0] for row in cursor.fetchall()}


def test_the_index_yields_only_the_matters_own_matches(matter, large):
    own = {PageFactory(exhibit__matter=matter, text=TEXT).pk for _ in range(2)}
    with CaptureQueriesContext(connection) as queries:
        results = matter_search_results(matter=matter, query="defaulted lease")
        assert {hit.page_number for hit in matter_search(matter=matter, query='"equipment lease"')} == {1}
        assert {p for p, _ in page_ids_with_phrase(matter=matter, words=["equipment", "lease"])} == own
        assert {p for p, _ in page_ids_with_words(matter=matter, words=["lessee", "lease"])} == own
    assert results.matches == 2
    matches = [q["sql"].split("MATCH ", 1)[1].split(" AND e.matter_id", 1)[0] for q in queries.captured_queries]
    assert len(matches) == 5
    for match in matches:
        # The SQL as run, its parameter quoted inline: the FTS5 expression alone, with no join, finds only own pages.
        assert _fts_rows(match.strip("'").replace("''", "'")) == own


def test_a_number_typed_is_a_word_of_the_text_not_a_matter(matter, large):
    PageFactory(exhibit__matter=matter, text="Nothing numbered here.")
    assert matter_search(matter=matter, query=str(matter.pk)) == []
    numbered = PageFactory(exhibit__matter=matter, text=f"Paragraph {large.pk} of the lease.")
    assert [(h.exhibit_id, h.page_number) for h in matter_search(matter=matter, query=str(large.pk))] == [
        (numbered.exhibit_id, numbered.number)]


def test_the_index_follows_inserts_edits_and_deletes(matter, large):
    page = PageFactory(exhibit__matter=matter, text=TEXT)
    assert _indexed() == _pages()
    page.text = "The lessor cured the default."
    page.save()
    assert _indexed() == _pages()
    assert [h.page_number for h in matter_search(matter=matter, query="lessor")] == [page.number]
    assert matter_search(matter=matter, query="equipment") == []
    page.exhibit.delete()
    large.exhibits.first().delete()
    assert _indexed() == _pages() and len(_pages()) == 11


def test_the_migration_indexes_existing_pages_with_their_matters(matter, large):
    PageFactory(exhibit__matter=matter, text=TEXT)
    with connection.cursor() as cursor:
        editor = SimpleNamespace(connection=connection, execute=cursor.execute)
        unindex_matter(None, editor)
        cursor.execute("PRAGMA table_info(matters_page_fts)")
        assert [row[1] for row in cursor.fetchall()] == ["reading_text"]
        index_matter(None, editor)
    assert _indexed() == _pages() and len(_pages()) == 13
    assert matter_search_results(matter=matter, query="lease").matches == 1
