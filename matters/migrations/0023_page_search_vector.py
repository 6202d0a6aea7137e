"""PostgreSQL stores each page's search vector (a generated tsvector column with its GIN index); SQLite keeps
its FTS5 table. See matters.exhibits.search_index.store_search_vector."""

from django.db import migrations

from matters.exhibits.search_index import drop_search_vector, store_search_vector


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0022_document_work_lease"),
    ]

    operations = [
        migrations.RunPython(store_search_vector, drop_search_vector),
    ]
