"""Backup and restore: a matter with an upload, a production and a job goes into a backup, comes back into a new
data directory and a new database, and is the same there: every file byte for byte, the rows of every table, the
audit chains, a production download. A backup changed after the fact is refused, naming the file."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from lawdesk.backup.snapshot import TRANSIENT
from tests.support.paths import BASE_DIR
from tests.support.retention import row_counts

pytestmark = pytest.mark.django_db(transaction=True)

KEPT = ("originals", "quarantine", "derived", "productions", "incoming", "secrets", "secret_key")


@pytest.fixture
def fresh_database(tmp_path):
    """The URL of a database that does not exist yet: a new SQLite file, or a new PostgreSQL database beside the
    test database (dropped afterwards)."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.sqlite3'}"
        return
    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        pytest.skip("pg_dump and pg_restore are not installed (Debian: postgresql-client of the server's version)")
    import psycopg

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


def manage(*args: str, data_dir: Path, database_url: str) -> subprocess.CompletedProcess:
    """Run ``manage.py`` as another installation would: its own data directory and database."""
    env = dict(os.environ, LAWDESK_DATA_DIR=str(data_dir), DATABASE_URL=database_url,
               DJANGO_SETTINGS_MODULE="lawdesk.test_settings", LAWDESK_ALLOWED_HOSTS="localhost,testserver")
    env.pop("REDIS_URL", None)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True,
                          text=True, timeout=300)


def kept_files(root: Path) -> dict[str, bytes]:
    """Every file a backup keeps from the data directory ``root``, by relative path."""
    found = {}
    for top in KEPT:
        base = root / top
        paths = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in paths:
            if not (top == "secrets" and TRANSIENT.match(path.name)):
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def download(client, matter, production, kind: str) -> bytes:
    response = client.get(reverse("matters:production_download", args=[matter.pk, production.pk, kind]))
    assert response.status_code == 200
    return b"".join(response.streaming_content)


DOWNLOAD_SCRIPT = """
from django.contrib.auth import get_user_model
from django.test import Client
client = Client()
client.force_login(get_user_model().objects.get(username="alice"))
response = client.get({url!r})
assert response.status_code == 200, response.status_code
open({out!r}, "wb").write(b"".join(response.streaming_content))
"""


def test_a_backup_restores_into_a_new_data_directory_and_database_identical(
        furnish, attorney, client, corpus, ingest, data_dir, fresh_database, tmp_path, capsys):
    acme = furnish("Acme v. Roe")
    (data_dir / "secret_key").write_text("the installation's own signing key")  # as settings.py makes it
    destination = tmp_path / "backup"
    call_command("backup", str(destination))
    first = json.loads(capsys.readouterr().out)
    assert first["copied_by_store"]["originals"] == 2 and first["reused"] == 0

    later = ingest(acme.matter, corpus("court/ca6_1-3.pdf"))  # arrives between two backups
    client.force_login(attorney)
    produced = {kind: download(client, acme.matter, acme.production, kind) for kind in ("pdf", "zip")}
    original_objects = {p: p.stat().st_mtime_ns for p in (destination / "objects").rglob("*") if p.is_file()}
    before_rows, before_files = row_counts(), kept_files(data_dir)
    call_command("backup", str(destination))
    second = json.loads(capsys.readouterr().out)
    # Incremental by content: of the originals only the new upload is copied; the earlier ones are not touched.
    assert second["copied_by_store"]["originals"] == 1 and second["reused"] > 0
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in original_objects.items())
    snapshots = sorted(p.name for p in (destination / "snapshots").iterdir())
    assert snapshots == [first["name"], second["name"]]
    manifest = json.loads((destination / "snapshots" / second["name"] / "manifest.json").read_text())
    listed = {entry["path"]: entry["sha256"] for entry in manifest["files"]}
    assert listed[f"originals/{later.sha256[:2]}/{later.sha256}"] == later.sha256
    assert set(listed) == set(before_files)

    restored = tmp_path / "restored"
    restored.mkdir()
    result = manage("restore", str(destination), data_dir=restored, database_url=fresh_database)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["name"] == second["name"] and report["files"] == len(before_files)
    assert report["rows"] == before_rows
    assert report["chains"][f"matter:{acme.matter.pk}"] > 5 and "system" in report["chains"]

    assert kept_files(restored) == before_files  # every file, byte for byte (the secrets too)
    assert oct(os.stat(restored / "originals" / later.sha256[:2] / later.sha256).st_mode & 0o777) == "0o400"
    verified = manage("audit_verify", "--matter", str(acme.matter.pk), data_dir=restored,
                      database_url=fresh_database)
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True, verified.stdout + verified.stderr
    for kind, content in produced.items():
        url = reverse("matters:production_download", args=[acme.matter.pk, acme.production.pk, kind])
        out = tmp_path / f"restored.{kind}"
        fetched = manage("shell", "-c", DOWNLOAD_SCRIPT.format(url=url, out=str(out)), data_dir=restored,
                         database_url=fresh_database)
        assert fetched.returncode == 0, fetched.stderr
        assert out.read_bytes() == content

    again = manage("restore", str(destination), data_dir=restored, database_url=fresh_database)
    assert again.returncode != 0 and "is not empty" in again.stderr


def test_a_changed_file_in_the_backup_is_refused_by_name_and_nothing_is_restored(
        furnish, tmp_path, fresh_database, capsys):
    acme = furnish("Acme v. Roe")
    destination = tmp_path / "backup"
    call_command("backup", str(destination))
    name = json.loads(capsys.readouterr().out)["name"]
    with pytest.raises(CommandError, match="is not empty"):
        call_command("restore", str(destination))  # into this installation, which holds data

    manifest = json.loads((destination / "snapshots" / name / "manifest.json").read_text())
    target = next(e for e in manifest["files"] if e["path"].startswith(f"productions/{acme.production.pk}/")
                  and e["path"].endswith(".pdf"))
    stored = destination / "objects" / target["sha256"][:2] / target["sha256"]
    stored.chmod(0o600)
    content = bytearray(stored.read_bytes())
    content[len(content) // 2] ^= 0x01  # one bit
    stored.write_bytes(bytes(content))

    restored = tmp_path / "restored"
    restored.mkdir()
    result = manage("restore", str(destination), data_dir=restored, database_url=fresh_database)
    assert result.returncode != 0
    assert f"{target['path']}: the backup's copy" in result.stderr
    assert "does not match its SHA-256" in result.stderr
    assert not any((restored / top).exists() for top in KEPT if top != "secret_key")
    count_tables = "from django.db import connection; print(len(connection.introspection.table_names()))"
    tables = manage("shell", "--no-imports", "-c", count_tables, data_dir=restored, database_url=fresh_database)
    assert tables.stdout.strip() == "0", tables.stderr
