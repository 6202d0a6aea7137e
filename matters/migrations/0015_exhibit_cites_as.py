from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("matters", "0014_finding_status_unreadable"),
    ]

    operations = [
        migrations.AddField(
            model_name="exhibit",
            name="cites_as",
            field=models.CharField(blank=True, max_length=300, verbose_name="cites as"),
        ),
    ]
