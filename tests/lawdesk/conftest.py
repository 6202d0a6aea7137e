"""Fixtures of the backup tests."""

import shutil

import psycopg
import pytest
from django.db import connection


@pytest.fixture
def fresh_database(tmp_path):
    """The URL of a database that does not exist yet: a new SQLite file, or a new PostgreSQL database beside the
    test database, owned by a role of its own that is no superuser, as docs/backup.md advises to restore (both
    dropped afterwards)."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.sqlite3'}"
        return
    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        pytest.skip("pg_dump and pg_restore are not installed (Debian: postgresql-client of the server's version)")
    settings = connection.settings_dict
    name = f"{settings['NAME']}_restored"
    params = {"host": settings.get("HOST") or "127.0.0.1", "port": settings.get("PORT") or 5432,
              "user": settings.get("USER") or "postgres", "password": settings.get("PASSWORD") or None}
    owner = f"{name}_owner"
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'DROP ROLE IF EXISTS "{owner}"')
        admin.execute(f'CREATE ROLE "{owner}" LOGIN NOSUPERUSER PASSWORD \'restore\'')
        admin.execute(f'CREATE DATABASE "{name}" OWNER "{owner}"')
    yield f"postgres://{owner}:restore@{params['host']}:{params['port']}/{name}"
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'DROP ROLE IF EXISTS "{owner}"')
