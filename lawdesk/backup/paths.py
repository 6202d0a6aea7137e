"""Every path a backup names, checked in one place before it is read or written.

A backup comes from outside the installation: a disk that was carried around, a vendor's storage, a colleague's
copy. Its manifest is data, not instructions, so a restore trusts none of its paths until
:func:`manifest_entries` has checked all of them, and it reads the backup and writes the data directory only
through :func:`open_backup_file` and :func:`data_dir_target`:

- a manifest path is relative, made of plain names (no ``..``, ``.``, empty names, backslashes or control
  characters), and lies in the layout a backup writes: ``secret_key``, ``secrets/<name>`` (never a PDF password
  waiting for a worker), ``originals/ab/<sha256>`` and ``quarantine/ab/<sha256>`` named by the very content the
  entry names, ``derived/<id>/...``, ``productions/<id>/...`` or ``incoming/<id>/...``; no two entries name one
  path, and no entry's path is a folder of another's;
- the database file is the one the vendor's snapshot writes (``database.sqlite3`` or ``database.pgdump``), and
  the snapshot folder holds nothing beside it and the manifest (a ``database.sqlite3-wal`` left there would be
  applied by SQLite on open, changing the database past its hash);
- a file read from the backup is a regular file reached through no symbolic link, inside the backup folder;
- a file restored into the data directory is reached through no symbolic link and replaces nothing.
"""

import os
import re
import stat
from pathlib import Path

from .store import MANIFEST, BackupError

SHA256 = re.compile(r"[0-9a-f]{64}")
NAME = re.compile(r"[^\x00-\x1f\x7f/\\]{1,255}")
ID = re.compile(r"[1-9][0-9]{0,18}")
SECRET_KEY_FILE = "secret_key"
SECRETS = "secrets"
BY_CONTENT = ("originals", "quarantine")
BY_ID = ("derived", "productions", "incoming")
DATABASE_FILES = {"sqlite": "database.sqlite3", "postgresql": "database.pgdump"}
# Files in secrets/ that are not secrets to keep: a PDF password waiting for the worker, a key being written.
TRANSIENT = re.compile(r"^(exhibit-\d+\.password|\..*)$")


def _refuse(path: object, why: str) -> BackupError:
    return BackupError(f"{path!r}: {why}. The backup was changed or is not a LawDesk backup; nothing was restored.")


def manifest_path(path: object, sha256: object) -> str:
    """Return ``path`` when it is a path a LawDesk backup may restore for content ``sha256`` (see the module);
    raise BackupError naming it otherwise."""
    if not isinstance(sha256, str) or not SHA256.fullmatch(sha256):
        raise _refuse(path, f"its content is not named by a SHA-256 digest ({sha256!r})")
    if not isinstance(path, str) or path.startswith("/"):
        raise _refuse(path, "the manifest names a path that is not relative to the data directory")
    parts = path.split("/")
    if any(part in ("", ".", "..") or not NAME.fullmatch(part) for part in parts):
        raise _refuse(path, "the manifest names a path with '..', '.', an empty name or a control character")
    top = parts[0]
    if parts == [SECRET_KEY_FILE]:
        return path
    if top == SECRETS and len(parts) == 2 and not TRANSIENT.match(parts[1]):
        return path
    if top in BY_CONTENT and len(parts) == 3:
        if parts[1:] != [sha256[:2], sha256]:
            raise _refuse(path, "an original must be stored under the SHA-256 of its own content")
        return path
    if top in BY_ID and len(parts) >= 3 and ID.fullmatch(parts[1]):
        return path
    raise _refuse(path, "the manifest names a path outside the data directory's stores")


def manifest_entries(manifest: dict) -> list[dict]:
    """Return the manifest's file entries (``{"path", "sha256", "size"}``), every path checked with
    :func:`manifest_path`, none named twice and none inside another. Raises BackupError naming the first path
    that fails."""
    entries = manifest.get("files")
    if not isinstance(entries, list):
        raise BackupError("The manifest lists no files; it is not one LawDesk wrote. Nothing was restored.")
    seen: set[str] = set()
    folders: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("size"), int) or entry["size"] < 0:
            raise BackupError(f"The manifest holds an entry that is not a file of the backup: {entry!r}.")
        path = manifest_path(entry.get("path"), entry.get("sha256"))
        if path in seen or path in folders:
            raise _refuse(path, "the manifest names this path twice, or as a file and as a folder")
        seen.add(path)
        parents = path.split("/")[:-1]
        folders.update("/".join(parents[:n]) for n in range(1, len(parents) + 1))
    if clash := seen & folders:
        raise _refuse(sorted(clash)[0], "the manifest names this path as a file and as a folder")
    return entries


def database_file(manifest: dict, folder: Path) -> tuple[Path, str]:
    """Return the path of the snapshot's database file and its vendor, after checking that the manifest names
    the file the vendor's snapshot writes and that ``folder`` holds nothing else but the manifest. Raises
    BackupError naming what is wrong."""
    database = manifest.get("database")
    if not isinstance(database, dict) or database.get("vendor") not in DATABASE_FILES:
        raise BackupError("The manifest names no database of a kind LawDesk backs up. Nothing was restored.")
    vendor = database["vendor"]
    if database.get("file") != DATABASE_FILES[vendor]:
        raise _refuse(database.get("file"), f"a {vendor} snapshot's database file is {DATABASE_FILES[vendor]}")
    if not isinstance(database.get("rows"), dict) or not SHA256.fullmatch(str(database.get("sha256"))):
        raise BackupError("The manifest gives no hash or row counts for the database. Nothing was restored.")
    extra = sorted(p.name for p in folder.iterdir() if p.name not in (MANIFEST, DATABASE_FILES[vendor]))
    if extra:
        raise _refuse(f"{folder.name}/{extra[0]}", "the snapshot folder holds a file no LawDesk snapshot has "
                      "(a database journal left beside the dump would change it past its hash)")
    return folder / database["file"], vendor


def open_backup_file(path: Path, backup: Path):
    """Open ``path``, a file of the backup at ``backup``, for reading in binary; refuse (BackupError) a symbolic
    link, anything but a regular file, and a path whose folders lead outside ``backup``."""
    if not path.parent.resolve().is_relative_to(backup.resolve()):
        raise BackupError(f"{path}: a folder of the backup leads outside it (a symbolic link); nothing was "
                          "restored.")
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise BackupError(f"{path}: cannot be read as a file of the backup ({exc.strerror}; a symbolic link is "
                          "not followed). Nothing was restored.") from exc
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise BackupError(f"{path}: is not a regular file. Nothing was restored.")
    return os.fdopen(descriptor, "rb")


def data_dir_target(root: Path, relative: str) -> Path:
    """Return where the checked manifest path ``relative`` goes under the data directory ``root``, creating its
    folders (0700) and following no symbolic link on the way. Raises BackupError when a folder on the way is a
    link or not a folder, or the file exists already."""
    folder = root
    for part in relative.split("/")[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise BackupError(f"{folder}: is a symbolic link or not a folder; a restore writes only into real "
                              "folders of the data directory.")
        if not folder.exists():
            folder.mkdir(mode=0o700)
    target = root / relative
    if target.is_symlink() or (target.exists() and relative != SECRET_KEY_FILE):
        raise BackupError(f"{target}: exists already; a restore replaces nothing.")
    return target
