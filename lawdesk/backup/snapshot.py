"""``backup``: one snapshot of the database and of the files that give it meaning, into a destination shared by
snapshots (:mod:`lawdesk.backup.store`).

What is taken from the data directory (``LAWDESK_DATA_DIR``, see :mod:`matters.storage`): ``originals/`` and
``quarantine/`` (uploads by content address), ``derived/`` (display PDFs, page images, thumbnails),
``productions/`` (stamped PDFs, volumes), ``incoming/`` (productions received, as uploaded), ``secrets/`` (the audit
key and checkpoint file, model-server API keys) and ``secret_key`` (Django's signing key). Left out: the SQLite
file (snapshotted through its backup API instead), ``tmp/``, ``static/`` (collected again), logs, and PDF passwords
waiting for a worker (deleted after one try; the exhibit can be given its password again).

Originals and the rows that name them are kept together: the originals the database snapshot names are read in
the same state as its rows, and one that is gone from the data directory by the time the files are copied (a
purge that committed in between) is taken from the destination's store when an earlier snapshot holds it, else
listed as ``missing`` in the manifest, which the restore reports. An original uploaded after the database
snapshot is copied without its row, which is harmless (no row names it) and comes with its row next time.
An original whose bytes no longer have the SHA-256 it is stored under (changed on disk) is listed as
``damaged``; the snapshot keeps the bytes of its name from the store when an earlier snapshot holds them.

Order matters for the audit log: the checkpoint file is copied before the database is snapshotted, so every
checkpoint in the backup names an entry the database snapshot holds (a checkpoint line is written only after its
entry committed); the reverse order could leave a checkpoint of an entry the snapshot lacks, which verification
reads as a truncated chain.
"""

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from . import database
from .paths import BY_CONTENT, SECRET_KEY_FILE, SECRETS, SHA256, TRANSIENT
from .signature import backup_key, manifest_sign
from .store import FORMAT, BackupError, ObjectStore, backup_dir, file_sha256, private_dir, write_manifest

STORES = ("originals", "quarantine", "derived", "productions", "incoming")
# Written into the data directory while a restore runs, removed once every check passed (lawdesk.backup.restore).
RESTORING = "restore-incomplete"
__all__ = ["RESTORING", "SECRETS", "SECRET_KEY_FILE", "STORES", "TRANSIENT", "BackupResult", "backup_create",
           "secret_files", "store_files"]


@dataclass
class BackupResult:
    """One snapshot written: its ``name``, files listed, files copied into the store now and files whose
    content the store held already (``reused``), and bytes copied; objects of the store found damaged and copied
    again (``repaired``); originals whose bytes no longer match their name (``damaged``) and originals the
    database names that neither the data directory nor the store holds (``missing``), as data-directory paths."""

    name: str
    files: int = 0
    copied: int = 0
    reused: int = 0
    copied_bytes: int = 0
    copied_by_store: dict[str, int] = field(default_factory=dict)
    repaired: int = 0
    damaged: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _files_under(root: Path, top: str) -> list[Path]:
    base = root / top
    if not base.is_dir():
        return []
    found = []
    for folder, _dirs, names in os.walk(base):
        for name in names:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink() and not (top == SECRETS and TRANSIENT.match(name)):
                found.append(path)
    return sorted(found)


def secret_files(root: Path) -> list[Path]:
    """The secrets of the data directory ``root`` that a backup keeps."""
    key = root / SECRET_KEY_FILE
    return _files_under(root, SECRETS) + ([key] if key.is_file() else [])


def store_files(root: Path) -> list[Path]:
    """The stored files of the data directory ``root`` (originals, derived, productions ...)."""
    return [path for top in STORES for path in _files_under(root, top)]


def _new_snapshot_folder(destination: Path) -> tuple[str, Path]:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    snapshots = backup_dir(destination / "snapshots")
    for attempt in range(1, 100):
        name = stamp if attempt == 1 else f"{stamp}-{attempt}"
        try:
            (snapshots / name).mkdir(mode=0o700)
            return name, snapshots / name
        except FileExistsError:
            continue
    raise BackupError(f"Too many snapshots named {stamp} in {destination}.")


def _destination(path: Path, root: Path) -> Path:
    """Return the backup folder ``path`` resolved, created 0700 when new. Raises BackupError when it is the data
    directory, inside it or around it, or a folder holding anything but LawDesk backups (made private, a home
    folder or ``/tmp`` would lock out everyone else)."""
    destination = Path(path).resolve()
    if destination.is_relative_to(root) or root.is_relative_to(destination):
        raise BackupError(f"The backup destination {destination} must lie outside the data directory {root} and "
                          "not hold it: choose a folder of its own, on another disk if you can.")
    if destination.exists():
        if not destination.is_dir():
            raise BackupError(f"The backup destination {destination} is not a folder.")
        others = sorted(p.name for p in destination.iterdir() if p.name not in ("objects", "snapshots"))
        if others:
            raise BackupError(f"The backup destination {destination} holds other things ({', '.join(others[:3])}):"
                              " give an empty folder, or one that holds LawDesk backups only.")
    return private_dir(destination)


def backup_create(*, destination: Path) -> BackupResult:
    """Write a snapshot of the database and the data directory's files into ``destination`` (created 0700) and
    return what was written. Files whose content the destination holds already, intact (any earlier snapshot),
    are not copied again. Raises BackupError when the destination is in, around or beside other things than
    backups (see :func:`_destination`), a restore into the data directory did not finish, ``LAWDESK_BACKUP_KEY``
    is not set (the manifest is signed with it: :mod:`lawdesk.backup.signature`), or the database cannot be
    snapshotted (pg_dump missing or too old)."""
    root = Path(settings.DATA_DIR).resolve()
    if (root / RESTORING).exists():
        raise BackupError(f"A restore into {root} did not finish ({RESTORING}): there is nothing whole to back up.")
    backup_key()  # refused before anything is copied when the office has set no key to sign the manifest with
    destination = _destination(destination, root)
    store = ObjectStore(destination / "objects")
    name, folder = _new_snapshot_folder(destination)
    result = BackupResult(name=name)
    entries: dict[str, dict] = {}

    def keep(paths: list[Path]) -> None:
        for path in paths:
            sha256, size, copied = store.put(path)
            relative = path.relative_to(root).as_posix()
            top = relative.split("/", 1)[0]
            named = path.name
            if top in BY_CONTENT and sha256 != named:
                result.damaged.append(relative)
                # An earlier snapshot may hold the bytes this original was stored with: keep those.
                if SHA256.fullmatch(named) and store.has(named):
                    sha256, size, copied = named, store.path(named).stat().st_size, False
                else:
                    continue
            entries[relative] = {"path": relative, "sha256": sha256, "size": size}
            if copied:
                result.copied += 1
                result.copied_bytes += size
                result.copied_by_store[top] = result.copied_by_store.get(top, 0) + 1
            else:
                result.reused += 1

    keep(secret_files(root))  # before the database: see the module's note on checkpoints
    db, referenced = database.snapshot(folder)
    db["sha256"], db["size"] = file_sha256(folder / db["file"])
    keep(store_files(root))
    for relative in referenced:
        named = relative.rsplit("/", 1)[1]
        if relative in entries or relative in result.damaged:
            continue
        if SHA256.fullmatch(named) and store.has(named):  # gone since the database snapshot (a purge)
            entries[relative] = {"path": relative, "sha256": named, "size": store.path(named).stat().st_size}
            result.reused += 1
        else:
            result.missing.append(relative)
    result.files = len(entries)
    result.repaired = len(store.repaired)
    write_manifest(folder, manifest_sign({
        "format": FORMAT, "name": name, "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": db, "files": sorted(entries.values(), key=lambda e: e["path"]),
        "damaged": result.damaged, "missing": result.missing,
    }))
    return result
