"""Each incoming production keeps the Bates prefixes of its pages (search and the verifier read them)."""

from django.db import migrations, models


def fill_prefixes(apps, schema_editor):
    """Read every page's number once, for volumes imported before the prefixes were kept."""
    IncomingProduction = apps.get_model("matters", "IncomingProduction")
    IncomingBatesPage = apps.get_model("matters", "IncomingBatesPage")
    for incoming in IncomingProduction.objects.all().only("pk"):
        prefixes = set()
        for bates in IncomingBatesPage.objects.filter(incoming=incoming).values_list("bates", flat=True).iterator():
            prefixes.add(bates.rstrip("0123456789"))
        prefixes.discard("")
        IncomingProduction.objects.filter(pk=incoming.pk).update(bates_prefixes=sorted(prefixes))


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0028_exhibit_changed_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="incomingproduction",
            name="bates_prefixes",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(fill_prefixes, migrations.RunPython.noop),
    ]
