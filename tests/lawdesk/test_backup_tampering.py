"""A backup in hostile or careless hands: a manifest that names paths outside the stores, links inside the backup,
a journal left beside the dump, row counts and audit chains that do not hold, a destination that is not a folder
of its own, damaged objects and originals, an original purged while the backup ran. A restore refuses with the
file's name and writes nothing, or takes back everything it wrote; a backup notices instead of trusting."""

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from lawdesk.backup import BackupError, backup_create, backup_restore
from lawdesk.backup import database as backup_database
from lawdesk.backup import snapshot as backup_snapshot
from lawdesk.backup.signature import manifest_sign
from lawdesk.backup.store import file_sha256
from lawdesk.startup import prepare
from matters import storage
from tests.support.backup import KEPT, manage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def backed_up(matter, corpus, ingest, tmp_path, capsys):
    """A matter with one processed filing, backed up; returns the destination, the snapshot's folder, the
    exhibit and the manifest's entry of its original."""
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    destination = tmp_path / "backup"
    call_command("backup", str(destination))
    folder = destination / "snapshots" / json.loads(capsys.readouterr().out)["name"]
    original = next(e for e in read(folder)["files"] if e["path"].startswith("originals/"))
    return destination, folder, exhibit, original


def read(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def write(folder: Path, manifest: dict) -> None:
    """Write ``manifest``, signed again: a tamperer who holds the office's key too, so each check after the
    signature is shown holding on its own (tests/lawdesk/test_backup_signature.py: one without the key)."""
    (folder / "manifest.json").write_text(json.dumps(manifest_sign(manifest)))


def rehash_dump(folder: Path) -> None:
    """Make the manifest vouch for the dump as it is now, as a tamperer who knows the format would."""
    manifest = read(folder)
    dump = folder / manifest["database"]["file"]
    manifest["database"]["sha256"], manifest["database"]["size"] = file_sha256(dump)
    write(folder, manifest)


def empty_installation(tmp_path: Path) -> Path:
    restored = tmp_path / "restored"
    restored.mkdir()
    return restored


def nothing_restored(restored: Path, database_url: str) -> None:
    assert not any((restored / top).exists() for top in KEPT if top != "secret_key")
    assert not (restored / "restore-incomplete").exists()
    count = "from django.db import connection; print(len(connection.introspection.table_names()))"
    tables = manage("shell", "--no-imports", "-c", count, data_dir=restored, database_url=database_url)
    assert tables.stdout.strip() == "0", tables.stderr


def entry(path, like: dict) -> dict:
    return {"path": path, "sha256": like["sha256"], "size": like["size"]}


BAD_PATHS = {
    "parent folders": (lambda o, out: [entry("derived/1/../../../escaped", o)], "'..'"),
    "absolute path": (lambda o, out: [entry(str(out), o)], "not relative to the data directory"),
    "served static file": (lambda o, out: [entry("static/admin/js/core.js", o)], "outside the data directory's"),
    "password for the worker": (lambda o, out: [entry("secrets/exhibit-1.password", o)], "outside the data"),
    "original under another name": (lambda o, out: [entry(f"originals/00/{'0' * 64}", o)], "its own content"),
    "named twice": (lambda o, out: [dict(o)], "twice"),
    "file and folder": (lambda o, out: [entry("derived/9/pages", o), entry("derived/9/pages/0001.png", o)],
                        "as a file and as a folder"),
}


@pytest.mark.parametrize("case", BAD_PATHS, ids=list(BAD_PATHS))
def test_a_manifest_path_outside_the_stores_is_refused_before_anything_is_written(
        case, backed_up, tmp_path, settings):
    destination, folder, _exhibit, original = backed_up
    outside = tmp_path / "escaped"
    make, message = BAD_PATHS[case]
    manifest = read(folder)
    manifest["files"] += make(original, outside)  # last: every good entry before it would be written first
    write(folder, manifest)
    settings.DATA_DIR = restored = empty_installation(tmp_path)
    with pytest.raises(BackupError, match=message):
        backup_restore(source=destination)
    assert not outside.exists() and not (tmp_path / "escaped").exists() and not any(restored.iterdir())


def test_the_database_file_must_be_the_snapshots_own(backed_up, tmp_path, settings):
    destination, folder, _exhibit, _original = backed_up
    elsewhere = tmp_path / "elsewhere.sqlite3"
    shutil.copyfile(folder / read(folder)["database"]["file"], elsewhere)
    manifest = read(folder)
    manifest["database"]["file"] = "../../../elsewhere.sqlite3"
    write(folder, manifest)
    settings.DATA_DIR = empty_installation(tmp_path)
    with pytest.raises(BackupError, match="database file is database"):
        backup_restore(source=destination)


@pytest.mark.skipif("connection.vendor != 'sqlite'")
def test_a_journal_beside_the_dump_is_refused_and_never_applied(backed_up, tmp_path, settings):
    """SQLite applies a ``-wal`` file it finds beside a database when it opens it: a tamperer can change the
    restored records (here, a page's text) without touching the file the manifest hashes."""
    destination, folder, exhibit, _original = backed_up
    dump = folder / "database.sqlite3"
    work = tmp_path / "work.sqlite3"
    shutil.copyfile(dump, work)
    editor = sqlite3.connect(work)
    editor.execute("PRAGMA journal_mode=WAL")
    editor.execute("PRAGMA wal_autocheckpoint=0")
    editor.execute("UPDATE matters_page SET text = 'The court GRANTS the motion.' WHERE exhibit_id = ?",
                   (exhibit.pk,))
    editor.commit()
    dump.chmod(0o600)
    shutil.copyfile(work, dump)  # the header now says WAL; the edit itself lives only in the -wal file
    journal = Path(f"{work}-wal").read_bytes()
    editor.close()
    (folder / "database.sqlite3-wal").write_bytes(journal)
    rehash_dump(folder)
    demo = tmp_path / "demo"  # what any SQLite reading the snapshot folder as it is would see
    demo.mkdir()
    shutil.copyfile(dump, demo / "d.sqlite3")
    (demo / "d.sqlite3-wal").write_bytes(journal)
    tampered = sqlite3.connect(demo / "d.sqlite3").execute("SELECT text FROM matters_page").fetchone()[0]
    assert tampered == "The court GRANTS the motion."

    settings.DATA_DIR = empty_installation(tmp_path)
    with pytest.raises(BackupError, match="database.sqlite3-wal'.*a database journal"):
        backup_restore(source=destination)
    # The restore reads the dump immutable, so even a journal it overlooked could not change it.
    target = tmp_path / "restored.sqlite3"
    original_name = connection.settings_dict["NAME"]
    connection.settings_dict["NAME"] = str(target)
    try:
        backup_database.sqlite_restore(dump)
    finally:
        connection.settings_dict["NAME"] = original_name
    texts = {row[0] for row in sqlite3.connect(target).execute("SELECT text FROM matters_page")}
    assert "The court GRANTS the motion." not in texts


def test_a_restore_goes_only_into_an_empty_database_and_real_folders(backed_up, tmp_path, settings):
    destination = backed_up[0]
    settings.DATA_DIR = restored = empty_installation(tmp_path)
    with pytest.raises(BackupError, match="The database already has tables"):
        backup_restore(source=destination)  # this test's own database
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (restored / "originals").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(BackupError, match=r"is not empty \(originals \(a symbolic link\)\)"):
        backup_restore(source=destination)
    assert not any(elsewhere.iterdir())


def test_a_symbolic_link_in_the_backup_is_not_followed(backed_up, tmp_path, fresh_database):
    destination, _folder, _exhibit, original = backed_up
    stored = destination / "objects" / original["sha256"][:2] / original["sha256"]
    lookalike = tmp_path / "lookalike"  # the same bytes, outside the backup: every hash still matches
    shutil.copyfile(stored, lookalike)
    stored.unlink()
    stored.symlink_to(lookalike)
    restored = empty_installation(tmp_path)
    result = manage("restore", str(destination), data_dir=restored, database_url=fresh_database)
    assert result.returncode != 0 and "a symbolic link is not followed" in result.stderr, result.stderr
    nothing_restored(restored, fresh_database)


def _omit_a_table(folder: Path) -> str:
    manifest = read(folder)
    del manifest["database"]["rows"]["matters.page"]
    write(folder, manifest)
    return "matters.page"


def _edit_the_audit_chain(folder: Path) -> str:
    if connection.vendor != "sqlite":
        pytest.skip("edits the SQLite dump in place")
    dump = folder / "database.sqlite3"
    dump.chmod(0o600)
    editor = sqlite3.connect(dump)
    editor.execute("UPDATE matters_auditentry SET actor = 'mallory' WHERE action = 'exhibit.upload'")
    editor.commit()
    editor.close()  # the last connection folds its journal into the file and removes it
    rehash_dump(folder)
    return "does not verify"


def _truncate_the_dump(folder: Path) -> str:
    dump = folder / read(folder)["database"]["file"]
    dump.chmod(0o600)
    content = dump.read_bytes()
    dump.write_bytes(content[: len(content) // 2])
    rehash_dump(folder)
    return "The restore stopped: " if connection.vendor == "sqlite" else "pg_restore failed"


CHECKED_AFTER_WRITING = {"row counts": _omit_a_table, "audit chain": _edit_the_audit_chain,
                         "truncated dump": _truncate_the_dump}


@pytest.mark.parametrize("case", CHECKED_AFTER_WRITING, ids=list(CHECKED_AFTER_WRITING))
def test_a_restore_that_fails_a_check_after_writing_takes_everything_back(case, backed_up, tmp_path,
                                                                        fresh_database):
    _destination, folder, _exhibit, _original = backed_up
    message = CHECKED_AFTER_WRITING[case](folder)
    restored = empty_installation(tmp_path)
    result = manage("restore", str(backed_up[0]), data_dir=restored, database_url=fresh_database)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert "Everything the restore wrote was removed again" in result.stderr
    nothing_restored(restored, fresh_database)


def test_a_backup_goes_only_into_a_folder_of_its_own(data_dir, tmp_path, matter):
    for inside in (data_dir / "derived" / "backup", data_dir, data_dir.parent):
        with pytest.raises(BackupError, match="must lie outside the data directory"):
            backup_create(destination=inside)
    link = tmp_path / "looks-elsewhere"
    link.symlink_to(data_dir / "tmp", target_is_directory=True)
    with pytest.raises(BackupError, match="must lie outside the data directory"):
        backup_create(destination=link / "backup")
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    (home / "notes.txt").write_text("an operator's folder")
    with pytest.raises(BackupError, match="holds other things"):
        backup_create(destination=home)
    assert os.stat(home).st_mode & 0o777 == 0o755  # not made private behind the operator's back
    assert not (home / "objects").exists() and not (data_dir / "derived" / "backup").exists()


def test_a_backup_writes_through_no_link_planted_in_its_destination(matter, corpus, ingest, data_dir, tmp_path):
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    destination = tmp_path / "vendor-share"
    (destination / "objects").mkdir(parents=True)
    planted = tmp_path / "somewhere-else"
    planted.mkdir()
    planted.chmod(0o755)
    (destination / "objects" / exhibit.sha256[:2]).symlink_to(planted, target_is_directory=True)
    with pytest.raises(BackupError, match="is a symbolic link; a backup writes only into real folders"):
        backup_create(destination=destination)
    assert not any(planted.iterdir()) and os.stat(planted).st_mode & 0o777 == 0o755


def test_a_damaged_object_is_copied_again_and_a_damaged_original_is_reported(backed_up, data_dir, capsys):
    destination, _folder, exhibit, original = backed_up
    stored = destination / "objects" / original["sha256"][:2] / original["sha256"]
    stored.chmod(0o600)
    stored.write_bytes(b"%PDF-1.7 not what was backed up")
    call_command("backup", str(destination))
    second = json.loads(capsys.readouterr().out)
    assert second["repaired"] == 1 and second["copied_by_store"] == {"originals": 1}
    assert file_sha256(stored)[0] == original["sha256"]

    live = storage.blob_path(exhibit.sha256)
    live.chmod(0o600)
    content = bytearray(live.read_bytes())
    content[len(content) // 2] ^= 0x01
    live.write_bytes(bytes(content))
    with pytest.raises(CommandError, match=rf"{original['path']}: its bytes no longer have the SHA-256"):
        call_command("backup", str(destination))
    third = json.loads(capsys.readouterr().out)
    assert third["damaged"] == [original["path"]]
    kept = {e["path"]: e["sha256"] for e in read(destination / "snapshots" / third["name"])["files"]}
    assert kept[original["path"]] == exhibit.sha256  # the bytes it was uploaded with, from the earlier snapshot


def test_an_original_purged_while_the_backup_copies_files_is_taken_from_the_store_or_reported(
        backed_up, tmp_path, monkeypatch, fresh_database, capsys):
    destination, _folder, exhibit, original = backed_up
    real_snapshot = backup_database.snapshot
    blob = storage.blob_path(exhibit.sha256)

    def snapshot_then_purge(folder):
        taken = real_snapshot(folder)
        blob.unlink(missing_ok=True)  # a purge committing right after the database snapshot removes the file
        return taken

    monkeypatch.setattr(backup_snapshot.database, "snapshot", snapshot_then_purge)
    call_command("backup", str(destination))
    second = json.loads(capsys.readouterr().out)
    assert second["missing"] == [] and original["path"] in {e["path"] for e in read(
        destination / "snapshots" / second["name"])["files"]}

    fresh = tmp_path / "fresh-backup"
    with pytest.raises(CommandError, match=rf"{original['path']}: named by the database but gone"):
        call_command("backup", str(fresh))
    name = json.loads(capsys.readouterr().out)["name"]
    restored = empty_installation(tmp_path)
    result = manage("restore", str(fresh), "--snapshot", name, data_dir=restored, database_url=fresh_database)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["missing"] == [original["path"]]
    assert f"warning: {original['path']} is named by the restored records but was not in the snapshot" in \
        result.stderr


def test_a_restore_that_did_not_finish_is_no_installation_to_serve_or_back_up(data_dir, tmp_path):
    """A restore killed half-way leaves its marker: ``make run`` and ``backup`` refuse the data directory."""
    (data_dir / "restore-incomplete").write_text("restoring snapshot 20261130T160102Z of /mnt/backup\n")
    with pytest.raises(SystemExit, match="did not finish"):
        prepare()
    with pytest.raises(BackupError, match="did not finish"):
        backup_create(destination=tmp_path / "backup")
    assert not (tmp_path / "backup").exists()
