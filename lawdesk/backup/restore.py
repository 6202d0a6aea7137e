"""``restore``: bring one snapshot back into an empty data directory and an empty database, and prove it.

Before anything is written, every file of the snapshot and the database dump are hashed against the manifest;
the first mismatch or missing object stops the restore, naming the file. After writing, each restored file is
checked as it is copied, the row count of every table is compared with the count taken with the snapshot, and
every audit chain (the system chain and each matter's) is verified with :func:`matters.audit.services.audit_verify`,
which needs the audit key and checkpoint file the snapshot brought back.
"""

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from matters.audit.services import SYSTEM_CHAIN, audit_verify
from matters.models import AuditEntry, Matter

from . import database
from .snapshot import SECRET_KEY_FILE, SECRETS, STORES
from .store import BackupError, ObjectStore, file_sha256, read_manifest

READ_ONLY = ("originals", "quarantine")  # never changed after upload: restored read-only, as matters.storage keeps them


@dataclass
class RestoreResult:
    """What was restored: the snapshot's ``name``, files written, rows per model label, and per audit chain the
    number of entries verified."""

    name: str
    files: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    chains: dict[str, int] = field(default_factory=dict)


def data_dir_problems(root: Path) -> list[str]:
    """Paths (relative to the data directory ``root``) that make it not empty for a restore: any file in a store or
    in ``secrets/``. A ``secret_key`` made when the settings were first loaded, ``tmp/``, ``static/`` and logs do
    not count; the snapshot's ``secret_key`` replaces the first."""
    found = []
    for top in (*STORES, SECRETS):
        base = root / top
        if base.is_dir():
            found += [p.relative_to(root).as_posix() for p in sorted(base.rglob("*")) if p.is_file()]
    return found


def _verify_objects(store: ObjectStore, folder: Path, manifest: dict) -> None:
    db = manifest["database"]
    sha256, size = file_sha256(folder / db["file"])
    if (sha256, size) != (db["sha256"], db["size"]):
        raise BackupError(f"{db['file']}: the database dump does not match its SHA-256 in the manifest; the backup "
                          "was changed or damaged. Nothing was restored.")
    for entry in manifest["files"]:
        path = store.path(entry["sha256"])
        if not path.is_file():
            raise BackupError(f"{entry['path']}: its content ({path}) is missing from the backup. Nothing was "
                              "restored.")
        if file_sha256(path) != (entry["sha256"], entry["size"]):
            raise BackupError(f"{entry['path']}: the backup's copy ({path}) does not match its SHA-256; the backup "
                              "was changed or damaged. Nothing was restored.")


def _file_mode(relative: str) -> int:
    return 0o400 if relative.split("/", 1)[0] in READ_ONLY else 0o600


def _verify_chains() -> dict[str, int]:
    checked = {}
    for chain in AuditEntry.objects.order_by("chain").values_list("chain", flat=True).distinct():
        matter = None
        if chain != SYSTEM_CHAIN:
            matter = Matter.objects.get(pk=int(chain.split(":", 1)[1]))
        check = audit_verify(matter=matter)
        if not check.ok:
            raise BackupError(f"Restored, but the audit chain {chain} does not verify: entry {check.broken_seq}, "
                              f"{check.problem}. Keep the backup and investigate before using this copy.")
        checked[chain] = check.entries
    return checked


def backup_restore(*, source: Path, snapshot: str | None = None) -> RestoreResult:
    """Restore snapshot ``snapshot`` (the newest when None) of the backup at ``source`` into the configured data
    directory and database, both empty, and return what was restored.

    Raises BackupError, with nothing written, when the data directory or database is not empty, or any hash does
    not match (naming the file); and, after writing, when row counts or an audit chain do not verify."""
    source = Path(source).resolve()
    folder, manifest = read_manifest(source, snapshot)
    root = Path(settings.DATA_DIR)
    if problems := data_dir_problems(root):
        shown = ", ".join(problems[:5]) + (f" and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise BackupError(f"The data directory {root} is not empty ({shown}): restore into an empty one (set "
                          "LAWDESK_DATA_DIR to a new folder).")
    if not database.database_is_empty():
        raise BackupError("The database already has tables: restore into an empty database (a new PostgreSQL "
                          "database, or a SQLite file that does not exist yet).")
    store = ObjectStore(source / "objects")
    _verify_objects(store, folder, manifest)

    result = RestoreResult(name=manifest["name"])
    for entry in manifest["files"]:
        relative = entry["path"]
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or relative.split("/", 1)[0] not in (*STORES, SECRETS, SECRET_KEY_FILE):
            raise BackupError(f"{relative}: the manifest names a path outside the data directory's stores.")
        store.copy_out(entry["sha256"], target, _file_mode(relative))
        result.files += 1
    database.restore(folder / manifest["database"]["file"], manifest["database"]["vendor"])

    result.rows = database.row_counts()
    expected = manifest["database"]["rows"]
    if differing := sorted(label for label in expected if result.rows.get(label) != expected[label]):
        raise BackupError("Restored, but these tables do not hold the rows the snapshot counted: "
                          + ", ".join(f"{label} ({result.rows.get(label)} of {expected[label]})"
                                      for label in differing))
    result.chains = _verify_chains()
    return result
