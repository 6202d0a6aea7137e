"""Rewrite the generated-material notices that named "a document of another matter", so that no exhibit kept from
before says another matter exists (see matters.provenance.hash_match_reason)."""

from django.db import migrations

OLD_MARK = "a document of another matter"
NOTICE = ("LawDesk generated this file itself (its bytes match material LawDesk produced). It is kept but is not "
          "evidence; an attorney can override this with a reason.")


def rewrite(apps, schema_editor):
    Exhibit = apps.get_model("matters", "Exhibit")
    Exhibit.objects.filter(generated_reason__contains=OLD_MARK).update(generated_reason=NOTICE)


class Migration(migrations.Migration):
    dependencies = [("matters", "0015_exhibit_cites_as")]
    operations = [migrations.RunPython(rewrite, migrations.RunPython.noop)]
