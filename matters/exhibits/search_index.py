"""The SQLite FTS5 index of page text, kept in step with ``matters_page`` by triggers.

SQLite cannot add most columns in place, so Django rebuilds a table to alter it, and the rebuild drops the
table's triggers. Every migration that alters ``matters_page`` must end with ``RunPython(reinstall_page_fts)``.
The index reads ``matters_page.reading_text`` (the reading form, :mod:`matters.exhibits.reading`); before migration 0017
it read ``text``, and :func:`reinstall_page_fts` installs the triggers for whichever layout the index has.

Since migration 0027 the index also holds each page's matter (:func:`index_matter`), so that a search names its
matter inside the full-text query and reads only that matter's matches.
"""

from .reading import reading_form


def triggers(column: str = "reading_text") -> list[str]:
    """The three triggers that keep the index of ``column`` in step with ``matters_page``."""
    return [
        f"""CREATE TRIGGER matters_page_fts_insert AFTER INSERT ON matters_page BEGIN
               INSERT INTO matters_page_fts(rowid, {column}) VALUES (new.id, new.{column}); END""",
        f"""CREATE TRIGGER matters_page_fts_delete AFTER DELETE ON matters_page BEGIN
               INSERT INTO matters_page_fts(matters_page_fts, rowid, {column})
               VALUES ('delete', old.id, old.{column}); END""",
        f"""CREATE TRIGGER matters_page_fts_update AFTER UPDATE OF {column} ON matters_page BEGIN
               INSERT INTO matters_page_fts(matters_page_fts, rowid, {column})
               VALUES ('delete', old.id, old.{column});
               INSERT INTO matters_page_fts(rowid, {column}) VALUES (new.id, new.{column}); END""",
    ]


# The index as migration 0002 made it, over the stored text.
TRIGGERS = triggers("text")
_NAMES = ("matters_page_fts_insert", "matters_page_fts_delete", "matters_page_fts_update")

# A search in a small matter beside a large one used to read every matching page of every matter from the index
# and drop the other matters' pages after joining them to their exhibits: at 50,000 pages in one matter, a common
# word cost a search in a 100-page matter as much as one in the large matter. With the matter as a second indexed
# column, the query ``matter:"7" AND reading_text:(...)`` intersects the word's pages with the matter's pages
# inside FTS5, which seeks through the longer list by rowid instead of reading it.
#
# The table keeps its own copy of the text (no ``content=`` table). An external-content table would need a view
# joining pages to their exhibits for the matter column, and SQLite refuses to rename a table a view reads, which
# every later migration that alters ``matters_page`` does (Django rebuilds the table); its delete trigger would
# also need the page's matter, read from an exhibit that may already be gone. Here a delete needs only the rowid.
MATTER_LAYOUT = "CREATE VIRTUAL TABLE matters_page_fts USING fts5(reading_text, matter, " \
                "tokenize='porter unicode61 remove_diacritics 2')"
_PAGE_MATTER = "(SELECT matter_id FROM matters_exhibit WHERE id = new.exhibit_id)"
MATTER_TRIGGERS = [
    f"""CREATE TRIGGER matters_page_fts_insert AFTER INSERT ON matters_page BEGIN
           INSERT INTO matters_page_fts(rowid, reading_text, matter)
           VALUES (new.id, new.reading_text, {_PAGE_MATTER}); END""",
    """CREATE TRIGGER matters_page_fts_delete AFTER DELETE ON matters_page BEGIN
           DELETE FROM matters_page_fts WHERE rowid = old.id; END""",
    f"""CREATE TRIGGER matters_page_fts_update AFTER UPDATE OF reading_text, exhibit_id ON matters_page BEGIN
           DELETE FROM matters_page_fts WHERE rowid = old.id;
           INSERT INTO matters_page_fts(rowid, reading_text, matter)
           VALUES (new.id, new.reading_text, {_PAGE_MATTER}); END""",
]
# Pages indexed a few at a time (an exhibit's, in one transaction) leave FTS5 with many small segments, and a query
# reads each segment's list of each of its words: at 1,000 pages ingested 20 at a time, the verifier's phrase query
# for an uncited quotation took three to four times as long as once the segments are merged (0.2-0.33 ms against
# 0.07 ms a query; a 100-page brief makes about 560 of them). FTS5's 'merge' command with a positive budget merges
# segments of a level that holds enough of them, writing at most about that many database pages, so the step is
# bounded whatever the size of the index (about 5 ms at 1,000 pages); 'optimize' rewrites the whole index.
MERGE_PAGES = 500


def merge_page_index(connection) -> None:
    """Merge the small segments of the page index (SQLite FTS5), a bounded step taken when an exhibit's pages have
    been indexed (:func:`matters.drafts.verifier.facts.exhibit_index_facts`). PostgreSQL's GIN index over
    ``search_vector`` needs nothing of the kind: this does nothing there."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO matters_page_fts(matters_page_fts, rank) VALUES ('merge', %s)", [MERGE_PAGES])


_MATTER_FILL = """INSERT INTO matters_page_fts(rowid, reading_text, matter)
    SELECT p.id, p.reading_text, e.matter_id FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id"""


def drop_page_fts_triggers(apps, schema_editor) -> None:
    """Drop the index's triggers before a migration makes SQLite rebuild a table they read by name
    (``matters_page`` for a new column with a default, ``matters_exhibit`` for a new foreign key): the rebuild
    drops them anyway, and :func:`reinstall_page_fts` at the migration's end brings them back with the index
    rebuilt. Nothing to do on PostgreSQL."""
    if schema_editor.connection.vendor != "sqlite":
        return
    for name in _NAMES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")


def reinstall_page_fts(apps, schema_editor) -> None:
    """(Re)create the triggers and rebuild the index from the table; nothing to do on PostgreSQL."""
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("PRAGMA table_info(matters_page_fts)")
        columns = [row[1] for row in cursor.fetchall()]
    for name in _NAMES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
    if "matter" in columns:
        for statement in MATTER_TRIGGERS:
            schema_editor.execute(statement)
        schema_editor.execute("DELETE FROM matters_page_fts")
        schema_editor.execute(_MATTER_FILL)
        return
    for statement in triggers(columns[0] if columns else "reading_text"):
        schema_editor.execute(statement)
    schema_editor.execute("INSERT INTO matters_page_fts(matters_page_fts) VALUES ('rebuild')")


def index_reading_text(apps, schema_editor) -> None:
    """Fill ``reading_text`` of every page, then index it: on SQLite a new FTS5 table over ``reading_text``, on
    PostgreSQL a GIN index of its ``tsvector`` in place of the one over ``text``."""
    Page = apps.get_model("matters", "Page")
    for page in Page.objects.only("id", "text").iterator(chunk_size=500):
        Page.objects.filter(pk=page.pk).update(reading_text=reading_form(page.text))
    _index_column(apps, schema_editor, "reading_text", drop="matters_page_text_fts", create="matters_page_reading_fts")


def index_matter(apps, schema_editor) -> None:
    """On SQLite rebuild the FTS5 table with each page's matter as a second indexed column (``MATTER_LAYOUT``),
    its triggers, and the index of every existing page. Nothing on PostgreSQL, whose search filters by matter
    beside its GIN index."""
    if schema_editor.connection.vendor != "sqlite":
        return
    for name in _NAMES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
    schema_editor.execute("DROP TABLE IF EXISTS matters_page_fts")
    schema_editor.execute(MATTER_LAYOUT)
    reinstall_page_fts(apps, schema_editor)


def unindex_matter(apps, schema_editor) -> None:
    """Undo :func:`index_matter`: the external-content index over ``reading_text`` alone, as migration 0017
    made it."""
    if schema_editor.connection.vendor != "sqlite":
        return
    _index_column(apps, schema_editor, "reading_text", drop="matters_page_text_fts", create="matters_page_reading_fts")


def index_stored_text(apps, schema_editor) -> None:
    """Undo :func:`index_reading_text`: the index over ``text`` again, as migration 0002 made it, so that
    ``reading_text`` can be dropped (SQLite refuses to drop a column a trigger reads)."""
    _index_column(apps, schema_editor, "text", drop="matters_page_reading_fts", create="matters_page_text_fts")


def _index_column(apps, schema_editor, column: str, *, drop: str, create: str) -> None:
    """Make the full-text index read ``column`` of matters_page: on PostgreSQL the GIN index ``create`` over its
    ``tsvector`` in place of ``drop``; on SQLite the FTS5 table and its triggers rebuilt over it."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {drop}")
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {create} ON matters_page "
                              f"USING GIN (to_tsvector('english', {column}))")
        return
    for name in _NAMES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
    schema_editor.execute("DROP TABLE IF EXISTS matters_page_fts")
    schema_editor.execute(
        f"""CREATE VIRTUAL TABLE matters_page_fts USING fts5({column}, content='matters_page',
           content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')""")
    reinstall_page_fts(apps, schema_editor)


# PostgreSQL: the page's tsvector stored beside its text. An index over the expression to_tsvector(reading_text)
# answers "which pages hold this word", but a frequent word matches most pages, the planner then scans the table
# and every matching page's text is parsed again, once to match and once more for ts_rank (about 1.4 s for one
# common word over 5,000 pages). A stored generated column is parsed once, when the text is written.
SEARCH_VECTOR_COLUMN = "search_vector"


def store_search_vector(apps, schema_editor) -> None:
    """On PostgreSQL add ``matters_page.search_vector``, a stored generated ``tsvector`` of ``reading_text``, with
    its GIN index, in place of the expression index over ``to_tsvector(reading_text)``. Nothing on SQLite, whose
    FTS5 table already holds its index. The column is not a model field: the searches read it in SQL
    (:mod:`matters.search`), and PostgreSQL keeps it in step with ``reading_text`` on every write."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"ALTER TABLE matters_page ADD COLUMN IF NOT EXISTS {SEARCH_VECTOR_COLUMN} tsvector "
        "GENERATED ALWAYS AS (to_tsvector('english', reading_text)) STORED")
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS matters_page_search_vector ON matters_page "
                          f"USING GIN ({SEARCH_VECTOR_COLUMN})")
    schema_editor.execute("DROP INDEX IF EXISTS matters_page_reading_fts")


def drop_search_vector(apps, schema_editor) -> None:
    """Undo :func:`store_search_vector`: the expression index over ``reading_text`` again, the column dropped."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE INDEX IF NOT EXISTS matters_page_reading_fts ON matters_page "
                          "USING GIN (to_tsvector('english', reading_text))")
    schema_editor.execute("DROP INDEX IF EXISTS matters_page_search_vector")
    schema_editor.execute(f"ALTER TABLE matters_page DROP COLUMN IF EXISTS {SEARCH_VECTOR_COLUMN}")
