"""SQLite's full-text index holds each page's matter beside its text, so a search reads only its own matter's
matches. See matters.exhibits.search_index.index_matter; nothing changes on PostgreSQL."""

from django.db import migrations

from matters.exhibits.search_index import index_matter, unindex_matter


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0026_queue_stalls_and_takeovers"),
    ]

    operations = [
        migrations.RunPython(index_matter, unindex_matter),
    ]
