"""Page text in its reading form (matters.exhibits.reading), indexed for search in place of the stored text."""

from django.db import migrations, models

from matters.exhibits.search_index import index_reading_text, index_stored_text


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0016_generated_notice_reveals_no_matter"),
    ]

    operations = [
        migrations.AddField(
            model_name="page",
            name="reading_text",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.RunPython(index_reading_text, index_stored_text),
    ]
