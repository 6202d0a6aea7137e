"""Full-text index of page text (SQLite FTS5 or PostgreSQL GIN) and the three permission groups of docs/glossary.md."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

from matters.exhibits.search_index import TRIGGERS

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE matters_page_fts USING fts5(
           text, content='matters_page', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')""",
    *TRIGGERS,
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS matters_page_fts_update",
    "DROP TRIGGER IF EXISTS matters_page_fts_delete",
    "DROP TRIGGER IF EXISTS matters_page_fts_insert",
    "DROP TABLE IF EXISTS matters_page_fts",
]
POSTGRES_FORWARD = [
    "CREATE INDEX matters_page_text_fts ON matters_page USING GIN (to_tsvector('english', text))",
]
POSTGRES_BACKWARD = ["DROP INDEX IF EXISTS matters_page_text_fts"]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


from matters.roles import ROLE_PERMISSIONS  # noqa: E402  (a constant; no model code is imported)


def create_roles(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.set(Permission.objects.filter(content_type__app_label="matters", codename__in=codenames))


class Migration(migrations.Migration):
    dependencies = [
        ("matters", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
        migrations.RunPython(create_roles, migrations.RunPython.noop),
    ]
