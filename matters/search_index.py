"""The SQLite FTS5 index of page text, kept in step with ``matters_page`` by triggers.

SQLite cannot add most columns in place, so Django rebuilds a table to alter it, and the rebuild drops the
table's triggers. Every migration that alters ``matters_page`` must end with ``RunPython(reinstall_page_fts)``.
"""

TRIGGERS = [
    """CREATE TRIGGER matters_page_fts_insert AFTER INSERT ON matters_page BEGIN
           INSERT INTO matters_page_fts(rowid, text) VALUES (new.id, new.text); END""",
    """CREATE TRIGGER matters_page_fts_delete AFTER DELETE ON matters_page BEGIN
           INSERT INTO matters_page_fts(matters_page_fts, rowid, text) VALUES ('delete', old.id, old.text); END""",
    """CREATE TRIGGER matters_page_fts_update AFTER UPDATE OF text ON matters_page BEGIN
           INSERT INTO matters_page_fts(matters_page_fts, rowid, text) VALUES ('delete', old.id, old.text);
           INSERT INTO matters_page_fts(rowid, text) VALUES (new.id, new.text); END""",
]


def reinstall_page_fts(apps, schema_editor) -> None:
    """(Re)create the triggers and rebuild the index from the table; nothing to do on PostgreSQL."""
    if schema_editor.connection.vendor != "sqlite":
        return
    for name in ("matters_page_fts_insert", "matters_page_fts_delete", "matters_page_fts_update"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
    for statement in TRIGGERS:
        schema_editor.execute(statement)
    schema_editor.execute("INSERT INTO matters_page_fts(matters_page_fts) VALUES ('rebuild')")
