"""Consistent snapshots of the database and their restore: SQLite through its online backup API, PostgreSQL
through ``pg_dump``/``pg_restore`` (custom format).

Each snapshot comes with the row count of every table Django knows, counted in the very state the snapshot holds
(SQLite: in the snapshot file; PostgreSQL: in the transaction whose exported snapshot ``pg_dump`` reads), so a
restore can prove it brought back every row.
"""

import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import psycopg
from django.apps import apps
from django.db import connection

from matters.models import Exhibit, IncomingProduction

from .paths import DATABASE_FILES
from .store import BackupError


def count_tables() -> dict[str, str]:
    """``{model label: table}`` for every model, many-to-many tables included, proxies and unmanaged left out."""
    return {m._meta.label_lower: m._meta.db_table for m in apps.get_models(include_auto_created=True)
            if m._meta.managed and not m._meta.proxy}


def _counts(cursor, tables: dict[str, str], present: set[str]) -> dict[str, int]:
    rows = {}
    for label, table in sorted(tables.items()):
        if table in present:
            cursor.execute(f'SELECT COUNT(*) FROM "{table}"')
            rows[label] = cursor.fetchone()[0]
    return rows


def _referenced(cursor, present: set[str]) -> list[str]:
    """Data-directory paths of the originals the rows name (exhibits, and the first upload of each production
    received), read through ``cursor`` in the state being snapshotted."""
    paths = set()
    exhibits, incoming = Exhibit._meta.db_table, IncomingProduction._meta.db_table
    if exhibits in present:
        cursor.execute(f'SELECT sha256, quarantined FROM "{exhibits}"')
        paths |= {f"{'quarantine' if quarantined else 'originals'}/{sha[:2]}/{sha}"
                  for sha, quarantined in cursor.fetchall()}
    if incoming in present:
        cursor.execute(f'SELECT sha256 FROM "{incoming}" WHERE sha256 <> \'\'')
        paths |= {f"originals/{sha[:2]}/{sha}" for (sha,) in cursor.fetchall()}
    return sorted(paths)


def row_counts() -> dict[str, int]:
    """Rows per model label in the database Django is connected to now."""
    with connection.cursor() as cursor:
        return _counts(cursor, count_tables(), set(connection.introspection.table_names(cursor)))


def database_is_empty() -> bool:
    """True when the database has no tables at all (a new SQLite file or a database just created)."""
    with connection.cursor() as cursor:
        return not connection.introspection.table_names(cursor)


# --- SQLite --------------------------------------------------------------------------------------------------

def sqlite_snapshot(target: Path) -> tuple[dict[str, int], list[str]]:
    """Copy the SQLite database to ``target`` with the online backup API (one step, so it is the state of a single
    moment even while others write; WAL lets them go on) and return its row counts and the originals its rows
    name (data-directory paths)."""
    source = sqlite3.connect(connection.settings_dict["NAME"], timeout=30)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
        cursor = copy.cursor()
        present = {row[0] for row in cursor.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return _counts(cursor, count_tables(), present), _referenced(cursor, present)
    finally:
        copy.close()
        source.close()


def sqlite_restore(snapshot: Path) -> None:
    """Write the snapshot into the (empty) SQLite database file Django is configured with. The snapshot is opened
    read-only and immutable: SQLite then applies no journal or WAL file lying beside it."""
    target = Path(connection.settings_dict["NAME"])
    connection.close()
    for leftover in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        leftover.unlink(missing_ok=True)
    source = sqlite3.connect(f"{snapshot.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()
    os.chmod(target, 0o600)


# --- PostgreSQL ----------------------------------------------------------------------------------------------

def _pg_env() -> tuple[list[str], dict]:
    """Connection options for the PostgreSQL client programs, and an environment with the password (never on the
    command line, where other users could read it)."""
    settings = connection.settings_dict
    options = ["--dbname", settings["NAME"]]
    if settings.get("HOST"):
        options += ["--host", settings["HOST"]]
    if settings.get("PORT"):
        options += ["--port", str(settings["PORT"])]
    if settings.get("USER"):
        options += ["--username", settings["USER"]]
    env = dict(os.environ)
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = settings["PASSWORD"]
    return options, env


def pg_tool(name: str) -> str:
    """Return the path of ``pg_dump`` or ``pg_restore``, checked to be of the server's major version or newer.
    Raises BackupError naming the Debian package otherwise."""
    path = shutil.which(name)
    if path is None:
        raise BackupError(f"{name} is not installed: install the PostgreSQL client of the server's version "
                          "(Debian: postgresql-client).")
    output = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"(\d+)(?:\.\d+)?", output)
    tool_major = int(match.group(1)) if match else 0
    server_major = connection.pg_version // 10000
    if tool_major < server_major:
        raise BackupError(f"{name} is version {tool_major} but the server runs PostgreSQL {server_major}: "
                          f"install the client of version {server_major}.")
    return path


def pg_snapshot(target: Path) -> tuple[dict[str, int], list[str]]:
    """Dump the PostgreSQL database to ``target`` (``pg_dump --format=custom``) and return its row counts and the
    originals its rows name, all read from one exported snapshot (a repeatable-read transaction kept open while
    ``pg_dump`` runs)."""
    dump = pg_tool("pg_dump")
    options, env = _pg_env()
    settings = connection.settings_dict
    with psycopg.connect(dbname=settings["NAME"], host=settings.get("HOST") or None,
                         port=settings.get("PORT") or None, user=settings.get("USER") or None,
                         password=settings.get("PASSWORD") or None) as held:
        with held.transaction():
            cursor = held.cursor()
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cursor.execute("SELECT pg_export_snapshot()")
            snapshot_id = cursor.fetchone()[0]
            cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            present = {row[0] for row in cursor.fetchall()}
            rows = _counts(cursor, count_tables(), present)
            referenced = _referenced(cursor, present)
            result = subprocess.run([dump, "--format=custom", "--no-owner", "--no-privileges",
                                     f"--snapshot={snapshot_id}", "--file", str(target), *options],
                                    capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise BackupError(f"pg_dump failed: {result.stderr.strip()}")
    return rows, referenced


def pg_restore(snapshot: Path) -> None:
    """Restore a custom-format dump into the (empty) PostgreSQL database Django is configured with, in one
    transaction that stops at the first error."""
    restore = pg_tool("pg_restore")
    options, env = _pg_env()
    connection.close()
    result = subprocess.run([restore, "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction",
                             *options, str(snapshot)], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise BackupError(f"pg_restore failed: {result.stderr.strip()}")


def snapshot(folder: Path) -> tuple[dict, list[str]]:
    """Snapshot the database into ``folder``; return the manifest's ``database`` part without its hash, and the
    data-directory paths of the originals the snapshot's rows name."""
    if connection.vendor == "sqlite":
        target = folder / DATABASE_FILES["sqlite"]
        rows, referenced = sqlite_snapshot(target)
    elif connection.vendor == "postgresql":
        target = folder / DATABASE_FILES["postgresql"]
        rows, referenced = pg_snapshot(target)
    else:
        raise BackupError(f"Backups support SQLite and PostgreSQL, not {connection.vendor}.")
    os.chmod(target, 0o400)
    return {"vendor": connection.vendor, "file": target.name, "rows": rows}, referenced


def require_vendor(vendor: str) -> None:
    """Raise BackupError when the configured database is not of kind ``vendor`` (a SQLite snapshot cannot fill
    PostgreSQL, nor the reverse)."""
    if vendor != connection.vendor:
        raise BackupError(f"This snapshot holds a {vendor} database, but DATABASE_URL points to "
                          f"{connection.vendor}: restore it into the same kind of database.")


def wipe() -> None:
    """Take back a restore that failed its checks: remove the SQLite file, or drop and recreate the PostgreSQL
    schema (the database had no tables before, :func:`database_is_empty`)."""
    connection.close()
    if connection.vendor == "sqlite":
        target = Path(connection.settings_dict["NAME"])
        for leftover in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
            leftover.unlink(missing_ok=True)
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        schema = connection.ops.quote_name(cursor.fetchone()[0])
        cursor.execute(f"DROP SCHEMA {schema} CASCADE")
        cursor.execute(f"CREATE SCHEMA {schema}")
    connection.close()


def restore(path: Path, vendor: str) -> None:
    """Restore the snapshot file ``path`` taken from a ``vendor`` database (see :func:`require_vendor`)."""
    require_vendor(vendor)
    if vendor == "sqlite":
        sqlite_restore(path)
    else:
        pg_restore(path)
