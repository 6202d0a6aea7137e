"""Name each audit entry's hash scheme, and seal the entries written before the audit log was keyed.

Existing entries whose hash is their unkeyed SHA-256 (the leading part of each chain) become ``sha256``; every
other entry, and every new one, is ``hmac-sha256``. Each chain's last unkeyed entry and its head are checkpointed
outside the database (see matters.audit.schemes.seal_existing_chains), so the unkeyed part cannot be truncated,
rewritten or extended afterwards without ``audit_verify`` saying so.
"""

from django.db import migrations, models

from matters.audit.schemes import seal_existing_chains


def seal(apps, schema_editor) -> None:
    seal_existing_chains(apps.get_model("matters", "AuditEntry").objects.using(schema_editor.connection.alias))


class Migration(migrations.Migration):

    dependencies = [
        ('matters', '0011_production_served'),
    ]

    operations = [
        migrations.AddField(
            model_name='auditentry',
            name='scheme',
            field=models.CharField(choices=[('sha256', 'SHA-256, unkeyed (before sealing)'),
                                            ('hmac-sha256', 'HMAC-SHA256, keyed')],
                                   default='hmac-sha256', max_length=16),
        ),
        # Unapplying drops the column; the checkpoint lines stay, as nothing ever removes a checkpoint.
        migrations.RunPython(seal, migrations.RunPython.noop),
    ]
