from django.db import migrations, models

STATUSES = [
    ("grounded", "Grounded"), ("ungrounded", "Ungrounded"), ("unverified_authority", "Unverified authority"),
    ("needs_record_cite", "Needs a record cite"), ("unreadable", "Unreadable"), ("ambiguous", "Ambiguous"),
    ("waived", "Waived"), ("confirmed", "Confirmed"),
]


class Migration(migrations.Migration):

    dependencies = [
        ("matters", "0013_privilege_redaction"),
    ]

    operations = [
        migrations.AlterField(
            model_name="finding", name="status", field=models.CharField(choices=STATUSES, max_length=25)),
        migrations.AlterField(
            model_name="finding", name="verdict", field=models.CharField(choices=STATUSES, max_length=25)),
    ]
