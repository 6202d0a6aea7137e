"""A Word exhibit's tracked changes, comments and hidden text kept aside; a page whose marks read as no text."""

from django.db import migrations, models

from matters.exhibits.search_index import reinstall_page_fts


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0017_page_reading_text"),
    ]

    operations = [
        migrations.AddField(
            model_name="exhibit",
            name="word_changes",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="page",
            name="unread_ink",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(reinstall_page_fts, migrations.RunPython.noop),
    ]
