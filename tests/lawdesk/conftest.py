"""Fixtures of the backup tests."""

import shutil

import psycopg
import pytest
from django.db import connection


@pytest.fixture
def fresh_database(tmp_path):
    """The URL of a database that does not exist yet: a new SQLite file, or a new PostgreSQL database beside the
    test database (dropped afterwards)."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.sqlite3'}"
        return
    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        pytest.skip("pg_dump and pg_restore are not installed (Debian: postgresql-client of the server's version)")
    settings = connection.settings_dict
    name = f"{settings['NAME']}_restored"
    params = {"host": settings.get("HOST") or "127.0.0.1", "port": settings.get("PORT") or 5432,
              "user": settings.get("USER") or "postgres", "password": settings.get("PASSWORD") or None}
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    password = f":{params['password']}" if params["password"] else ""
    yield f"postgres://{params['user']}{password}@{params['host']}:{params['port']}/{name}"
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
