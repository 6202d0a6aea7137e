import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('matters', '0023_page_search_vector'),
    ]

    operations = [
        migrations.AddField(
            model_name='incomingproduction',
            name='lease_expires_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='incomingproduction',
            name='lease_owner',
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.CreateModel(
            name='IncomingDocument',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('record', models.PositiveIntegerField()),
                ('name', models.CharField(max_length=300)),
                ('exhibit', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='incoming_documents', to='matters.exhibit')),
                ('incoming', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='documents', to='matters.incomingproduction')),
            ],
            options={
                'ordering': ['incoming', 'record'],
                'constraints': [models.UniqueConstraint(fields=('incoming', 'record'), name='incoming_record_unique')],
            },
        ),
    ]
