"""The short form a transcript exhibit is cited by in a brief ("Roe Dep.")."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0018_word_changes_and_unread_ink"),
    ]

    operations = [
        migrations.AddField(
            model_name="exhibit",
            name="transcript_cite",
            field=models.CharField(blank=True, max_length=60, verbose_name="cited as (transcript)"),
        ),
    ]
