"""``backup``: one snapshot of the database and of the files that give it meaning, into a destination shared by
snapshots (:mod:`lawdesk.backup.store`).

What is taken from the data directory (``LAWDESK_DATA_DIR``, see :mod:`matters.storage`): ``originals/`` and
``quarantine/`` (uploads by content address), ``derived/`` (display PDFs, page images, thumbnails),
``productions/`` (stamped PDFs, volumes), ``incoming/`` (productions received, as uploaded), ``secrets/`` (the audit
key and checkpoint file, model-server API keys) and ``secret_key`` (Django's signing key). Left out: the SQLite
file (snapshotted through its backup API instead), ``tmp/``, ``static/`` (collected again), logs, and PDF passwords
waiting for a worker (deleted after one try; the exhibit can be given its password again).

Order matters for the audit log: the checkpoint file is copied before the database is snapshotted, so every
checkpoint in the backup names an entry the database snapshot holds (a checkpoint line is written only after its
entry committed); the reverse order could leave a checkpoint of an entry the snapshot lacks, which verification
reads as a truncated chain.
"""

import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from . import database
from .store import FORMAT, BackupError, ObjectStore, file_sha256, private_dir, write_manifest

STORES = ("originals", "quarantine", "derived", "productions", "incoming")
SECRETS = "secrets"
SECRET_KEY_FILE = "secret_key"
# Files in secrets/ that are not secrets to keep: a PDF password waiting for the worker, a key being written.
TRANSIENT = re.compile(r"^(exhibit-\d+\.password|\..*)$")


@dataclass
class BackupResult:
    """One snapshot written: its ``name``, files listed, files copied into the store now and files whose
    content the store held already (``reused``), and bytes copied."""

    name: str
    files: int = 0
    copied: int = 0
    reused: int = 0
    copied_bytes: int = 0
    copied_by_store: dict[str, int] = field(default_factory=dict)


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
    snapshots = private_dir(destination / "snapshots")
    for attempt in range(1, 100):
        name = stamp if attempt == 1 else f"{stamp}-{attempt}"
        try:
            (snapshots / name).mkdir(mode=0o700)
            return name, snapshots / name
        except FileExistsError:
            continue
    raise BackupError(f"Too many snapshots named {stamp} in {destination}.")


def backup_create(*, destination: Path) -> BackupResult:
    """Write a snapshot of the database and the data directory's files into ``destination`` (created 0700) and
    return what was written. Files whose content the destination holds already (any earlier snapshot) are not
    copied again. Raises BackupError when the database cannot be snapshotted (pg_dump missing or too old)."""
    root = Path(settings.DATA_DIR)
    destination = private_dir(Path(destination).resolve())
    if destination == root or destination.is_relative_to(root):
        raise BackupError("The backup destination must lie outside the data directory.")
    store = ObjectStore(destination / "objects")
    name, folder = _new_snapshot_folder(destination)
    result = BackupResult(name=name)
    entries = []

    def keep(paths: list[Path]) -> None:
        for path in paths:
            sha256, size, copied = store.put(path)
            relative = path.relative_to(root).as_posix()
            entries.append({"path": relative, "sha256": sha256, "size": size})
            if copied:
                result.copied += 1
                result.copied_bytes += size
                top = relative.split("/", 1)[0]
                result.copied_by_store[top] = result.copied_by_store.get(top, 0) + 1
            else:
                result.reused += 1

    keep(secret_files(root))  # before the database: see the module's note on checkpoints
    db = database.snapshot(folder)
    db["sha256"], db["size"] = file_sha256(folder / db["file"])
    keep(store_files(root))
    result.files = len(entries)
    write_manifest(folder, {
        "format": FORMAT, "name": name, "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": db, "files": sorted(entries, key=lambda e: e["path"]),
    })
    return result
