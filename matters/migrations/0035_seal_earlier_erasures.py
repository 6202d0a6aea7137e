"""Seal the erasures of matters purged before purges recorded their own ``audit.erase`` entry.

Since ``audit.erase`` exists, a chain whose entries' detail was erased by a purge verifies only when an erasure
entry seals what stays of them (matters.audit.services.audit_erase_details). A chain purged before then has no
such entry and would fail verification for no tampering at all; this seals each one as it stands at the upgrade.
What was changed in such a chain before the upgrade cannot be told apart, as it could not before. The live service
is called on purpose: the seal must be the one verification computes.
"""

from django.db import migrations


def seal_earlier_erasures(apps, schema_editor):
    from matters.audit.services import ERASE_ACTION, audit_erase_details
    from matters.models import AuditEntry, Matter

    purges = AuditEntry.objects.filter(action="matter.purge").exclude(
        chain__in=AuditEntry.objects.filter(action=ERASE_ACTION).values("chain"))
    for purge in purges.order_by("seq"):
        matter = Matter.objects.filter(pk=purge.matter_id).first()
        if matter is not None:
            audit_erase_details(matter=matter, before_seq=purge.seq)


class Migration(migrations.Migration):

    dependencies = [
        ('matters', '0034_custodians_families_email'),
    ]

    operations = [
        migrations.RunPython(seal_earlier_erasures, migrations.RunPython.noop),
    ]
