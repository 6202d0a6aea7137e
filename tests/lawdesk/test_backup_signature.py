"""A backup's manifest is signed with the office's key (LAWDESK_BACKUP_KEY), which no backup holds: a snapshot
edited after it was made (a member added and a page's text and image changed, every hash recomputed), one
without a signature, or one checked with another key is refused with the reason before anything is written."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from django.db import connection
from PIL import Image

from lawdesk.backup import BackupError, backup_create, backup_restore
from lawdesk.backup.signature import manifest_check
from lawdesk.backup.store import ObjectStore, file_sha256
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def signed(matter, make_user, data_dir, tmp_path):
    """A matter with one page and its page image, and a user who is no member of it, backed up; returns the
    destination, the snapshot's folder and the matter."""
    make_user("mallory", "assistant")
    exhibit = ExhibitFactory(matter=matter, pages=["The tenant paid $4,812.55 on March 3, 2019."])
    image = data_dir / "derived" / str(exhibit.pk) / "pages" / "0001.png"
    image.parent.mkdir(parents=True)
    Image.new("L", (60, 80), 255).save(image)
    destination = tmp_path / "backup"
    result = backup_create(destination=destination)
    return destination, destination / "snapshots" / result.name, matter


def read(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def restore_into_empty(tmp_path, settings, destination):
    settings.DATA_DIR = restored = tmp_path / "restored"
    restored.mkdir()
    with pytest.raises(BackupError) as refused:
        backup_restore(source=destination)
    assert not any(restored.iterdir())  # nothing written
    return str(refused.value)


def test_a_snapshot_changed_and_rehashed_by_someone_without_the_key_is_refused(signed, tmp_path, settings):
    destination, folder, matter = signed
    manifest = read(folder)
    # The page image replaced: the new bytes stored as an object of their own, the manifest pointed at them.
    forged = tmp_path / "forged.png"
    Image.new("L", (60, 80), 0).save(forged)
    sha256, size, _copied = ObjectStore(destination / "objects").put(forged)
    image = next(e for e in manifest["files"] if e["path"].endswith("/pages/0001.png"))
    image["sha256"], image["size"] = sha256, size
    if connection.vendor == "sqlite":  # the records too: a member added, the page's text changed
        dump = folder / manifest["database"]["file"]
        dump.chmod(0o600)
        editor = sqlite3.connect(dump)
        editor.execute("INSERT INTO matters_matter_members (matter_id, user_id) SELECT ?, id FROM auth_user "
                       "WHERE username = 'mallory'", (matter.pk,))
        editor.execute("UPDATE matters_page SET text = 'The tenant paid nothing.'")
        editor.commit()
        editor.close()
        manifest["database"]["sha256"], manifest["database"]["size"] = file_sha256(dump)
    (folder / "manifest.json").write_text(json.dumps(manifest))  # the old signature kept: no key to make one
    message = restore_into_empty(tmp_path, settings, destination)
    assert "its manifest does not match its signature" in message and "Nothing was restored" in message


def test_a_snapshot_without_a_signature_is_refused(signed, tmp_path, settings):
    destination, folder, _matter = signed
    manifest = read(folder)
    del manifest["signature"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert "carries no signature" in restore_into_empty(tmp_path, settings, destination)


def test_an_older_signed_snapshot_copied_under_a_newer_name_is_refused(signed, tmp_path, settings):
    destination, folder, _matter = signed
    newer = folder.with_name("9999-12-31T23-59-59Z")  # sorts last: restored as the newest
    shutil.copytree(folder, newer)
    assert "copied or renamed" in restore_into_empty(tmp_path, settings, destination)


def test_another_key_cannot_restore_it_and_the_signature_covers_every_field(signed, tmp_path, settings):
    destination, folder, _matter = signed
    manifest = read(folder)
    manifest_check(manifest, folder.name)  # as written, it holds
    with pytest.raises(BackupError, match="does not match its signature"):
        manifest_check({**manifest, "created_at": manifest["created_at"].replace("20", "19", 1)}, folder.name)
    settings.LAWDESK_BACKUP_KEY = "another office's key, also long enough 7e"
    message = restore_into_empty(tmp_path, settings, destination)
    assert "signed with another LAWDESK_BACKUP_KEY" in message


@pytest.mark.parametrize("key, message", [("", "LAWDESK_BACKUP_KEY is not set"), ("short", "has 5 characters")])
def test_no_backup_and_no_restore_without_the_key(key, message, matter, tmp_path, settings):
    settings.LAWDESK_BACKUP_KEY = key
    destination = tmp_path / "backup"
    with pytest.raises(BackupError, match=message):
        backup_create(destination=destination)
    assert not destination.exists()  # refused before anything was written
