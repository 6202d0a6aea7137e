"""Backup and restore: a matter with an upload, a production and a job goes into a backup, comes back into a new
data directory and a new database, and is the same there: every file byte for byte, the rows of every table, the
audit chains, a production download. A backup changed after the fact is refused, naming the file."""

import json
import os
from types import SimpleNamespace

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from pipeline.api_keys import key_write
from tests.support.backup import KEPT, kept_files, manage
from tests.support.retention import row_counts

pytestmark = pytest.mark.django_db(transaction=True)

def mode(path) -> int:
    return os.stat(path).st_mode & 0o777


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
    key_write(server=SimpleNamespace(pk=7), key="sk-office-vllm")
    destination = tmp_path / "backup"
    call_command("backup", str(destination))
    first = json.loads(capsys.readouterr().out)
    # Whoever can read the backup can read every secret in it: nothing in it is for anyone but LawDesk's user.
    assert mode(destination) == mode(destination / "objects") == mode(destination / "snapshots") == 0o700
    assert {mode(p) for p in (destination / "objects").rglob("*") if p.is_file()} == {0o400}
    assert {mode(p) for p in (destination / "objects").rglob("*") if p.is_dir()} == {0o700}
    snapshot = destination / "snapshots" / first["name"]
    dump = next(p for p in snapshot.iterdir() if p.name.startswith("database."))
    assert (mode(snapshot), mode(snapshot / "manifest.json"), mode(dump)) == (0o700, 0o600, 0o400)
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
    assert mode(restored / "originals" / later.sha256[:2] / later.sha256) == 0o400
    assert mode(restored / "secrets") == 0o700 and mode(restored / "secret_key") == 0o600
    assert {mode(p) for p in (restored / "secrets").iterdir()} == {0o600}
    assert (restored / "secrets" / "model-server-7.key").read_text() == "sk-office-vllm"
    assert not (restored / "restore-incomplete").exists()
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
