from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('pipeline', '0009_retrieval'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='due_at',
            field=models.DateTimeField(blank=True, help_text='when the work must be done (filing deadline)', null=True),
        ),
    ]
