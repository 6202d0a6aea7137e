"""The page index's triggers survive every migration: SQLite rebuilds a table to add a column with a default or a
foreign key, which drops the triggers that keep the full-text index (matters.exhibits.search_index) in step with
``matters_page``, and a page added after such a migration was then never found by a search (a migration adding
``Page.text_key`` did this until it put them back)."""

import pytest
from django.db import connection

from matters.exhibits.search import matter_search
from tests.factories import ExhibitFactory, MatterFactory

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL keeps a stored tsvector column, no triggers")
def test_the_migrated_database_has_the_page_index_triggers():
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'matters_page'")
        names = {row[0] for row in cursor.fetchall()}
    assert {"matters_page_fts_insert", "matters_page_fts_delete", "matters_page_fts_update"} <= names


def test_a_page_added_after_migrating_is_found_by_search():
    matter = MatterFactory()
    exhibit = ExhibitFactory(matter=matter, pages=["The quincunx of the orchard was planted in 1921."])
    hits = matter_search(matter=matter, query="quincunx")
    assert [hit.exhibit_id for hit in hits] == [exhibit.pk]
