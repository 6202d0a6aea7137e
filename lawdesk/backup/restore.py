"""``restore``: bring one snapshot back into an empty data directory and an empty database, and prove it.

Before anything is written, every path of the manifest is checked (:mod:`lawdesk.backup.paths`), the database
dump is copied into the data directory's scratch space while it is hashed (the restore reads that copy, so the
backup cannot change under it), and every file of the snapshot is hashed against the manifest; the first
mismatch, missing object, symbolic link or path outside the stores stops the restore, naming the file.

Writing starts with a marker, ``restore-incomplete``, in the data directory; ``make run`` and ``manage.py backup``
refuse a data directory that holds it. Each restored file is checked as it is copied, the row count of every
table is compared with the counts taken with the snapshot (every table, both ways), every audit chain (the
system chain, each matter's) is verified with :func:`matters.audit.services.audit_verify`, and the originals the
restored rows name are looked for. When a check after writing fails, everything written is taken back (files,
database) and the marker goes with it: a restore leaves a whole installation or an empty one.
"""

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from matters.audit.services import SYSTEM_CHAIN, audit_verify
from matters.models import AuditEntry, Exhibit, IncomingProduction, Matter

from . import database
from .paths import BY_CONTENT, data_dir_target, database_file, manifest_entries, manifest_path, open_backup_file
from .signature import manifest_check
from .snapshot import RESTORING, SECRET_KEY_FILE, SECRETS, STORES
from .store import CHUNK_BYTES, BackupError, ObjectStore, file_sha256, read_manifest


@dataclass
class RestoreResult:
    """What was restored: the snapshot's ``name``, files written, rows per model label, per audit chain the
    number of entries verified, and the originals the rows name that the snapshot did not hold (data-directory
    paths: the snapshot's own ``missing`` list, or a file its manifest leaves out)."""

    name: str
    files: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    chains: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def data_dir_problems(root: Path) -> list[str]:
    """Paths (relative to the data directory ``root``) that make it not empty for a restore: any file or link in
    a store or in ``secrets/``, a store that is a link, and the marker of a restore that did not finish. A
    ``secret_key`` made when the settings were first loaded, ``tmp/``, ``static/`` and logs do not count; the
    snapshot's ``secret_key`` replaces the first."""
    found = [RESTORING] if (root / RESTORING).exists() else []
    for top in (*STORES, SECRETS):
        base = root / top
        if base.is_symlink():
            found.append(f"{top} (a symbolic link)")
        elif base.is_dir():
            found += [p.relative_to(root).as_posix() for p in sorted(base.rglob("*"))
                      if p.is_file() or p.is_symlink()]
    return found


def _copy_database(path: Path, backup: Path, expected: dict, scratch: Path) -> Path:
    """Copy the dump at ``path`` into ``scratch`` while hashing it and return the copy; raise BackupError when
    its SHA-256 or size is not the manifest's."""
    copy = scratch / path.name
    with open_backup_file(path, backup) as stream, open(copy, "wb") as out:
        while chunk := stream.read(CHUNK_BYTES):
            out.write(chunk)
    if file_sha256(copy) != (expected["sha256"], expected["size"]):
        raise BackupError(f"{path.name}: the database dump does not match its SHA-256 in the manifest; the backup "
                          "was changed or damaged. Nothing was restored.")
    return copy


def _verify_objects(store: ObjectStore, backup: Path, entries: list[dict]) -> None:
    for entry in entries:
        path = store.path(entry["sha256"])
        try:
            found = file_sha256(path, opener=lambda p: open_backup_file(p, backup))
        except FileNotFoundError:
            raise BackupError(f"{entry['path']}: its content ({path}) is missing from the backup. Nothing was "
                              "restored.") from None
        if found != (entry["sha256"], entry["size"]):
            raise BackupError(f"{entry['path']}: the backup's copy ({path}) does not match its SHA-256; the backup "
                              "was changed or damaged. Nothing was restored.")


def _file_mode(relative: str) -> int:
    return 0o400 if relative.split("/", 1)[0] in BY_CONTENT else 0o600


def _verify_rows(expected: dict) -> dict[str, int]:
    rows = database.row_counts()
    if differing := sorted(label for label in {*expected, *rows} if rows.get(label) != expected.get(label)):
        raise BackupError("The restored database does not hold the rows the snapshot counted: "
                          + ", ".join(f"{label} ({rows.get(label)} of {expected.get(label)})"
                                      for label in differing[:10]))
    return rows


def _verify_chains() -> dict[str, int]:
    """Verify the system chain, every chain with entries and the chain of every matter (a matter whose entries
    were all taken out has a chain too)."""
    chains = {SYSTEM_CHAIN, *AuditEntry.objects.values_list("chain", flat=True).distinct(),
              *(f"matter:{pk}" for pk in Matter.objects.values_list("pk", flat=True))}
    checked = {}
    for chain in sorted(chains):
        matter = None
        if chain != SYSTEM_CHAIN:
            matter = Matter.objects.filter(pk=int(chain.split(":", 1)[1])).first()
            if matter is None:
                raise BackupError(f"The audit chain {chain} belongs to no matter of the restored database.")
        check = audit_verify(matter=matter)
        if not check.ok:
            raise BackupError(f"The audit chain {chain} does not verify: entry {check.broken_seq}, "
                              f"{check.problem}.")
        checked[chain] = check.entries
    return checked


def _missing_originals(root: Path) -> list[str]:
    """Data-directory paths of the originals the restored rows name that are not in the data directory."""
    named = {f"{'quarantine' if q else 'originals'}/{sha[:2]}/{sha}"
             for sha, q in Exhibit.objects.values_list("sha256", "quarantined")}
    named |= {f"originals/{sha[:2]}/{sha}" for sha in IncomingProduction.objects.exclude(sha256="")
              .values_list("sha256", flat=True)}
    return sorted(path for path in named if not (root / path).is_file())


def _an_original(path: object) -> bool:
    """Whether ``path``, from the manifest's ``missing`` list, names an original (anything else, a terminal's
    escape sequence among them, is not repeated to the operator)."""
    try:
        return isinstance(path, str) and path.split("/", 1)[0] in BY_CONTENT and bool(
            manifest_path(path, path.rsplit("/", 1)[-1]))
    except BackupError:
        return False


def _take_back(root: Path, written: list[str]) -> None:
    """Remove what a failed restore wrote: the stores, the secrets, the signing key, the database's tables."""
    for top in (*STORES, SECRETS):
        if (root / top).is_dir() and not (root / top).is_symlink():
            shutil.rmtree(root / top)
    if SECRET_KEY_FILE in written:
        (root / SECRET_KEY_FILE).unlink(missing_ok=True)
    database.wipe()


def backup_restore(*, source: Path, snapshot: str | None = None) -> RestoreResult:
    """Restore snapshot ``snapshot`` (the newest when None) of the backup at ``source`` into the configured data
    directory and database, both empty, and return what was restored.

    Raises BackupError, with nothing written, when the manifest's signature is missing or does not match under
    ``LAWDESK_BACKUP_KEY`` (:mod:`lawdesk.backup.signature`), the data directory or database is not empty or of
    the wrong kind, a manifest path is not one a backup writes, or any hash does not match (naming the file); and, with
    everything written taken back, when row counts or an audit chain do not verify."""
    source = Path(source).resolve()
    folder, manifest = read_manifest(source, snapshot)
    manifest_check(manifest, folder.name)  # before any field of it is believed
    entries = manifest_entries(manifest)
    dump, vendor = database_file(manifest, folder)
    root = Path(settings.DATA_DIR).resolve()
    if problems := data_dir_problems(root):
        shown = ", ".join(problems[:5]) + (f" and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise BackupError(f"The data directory {root} is not empty ({shown}): restore into an empty one (set "
                          "LAWDESK_DATA_DIR to a new folder).")
    database.require_vendor(vendor)
    if not database.database_is_empty():
        raise BackupError("The database already has tables: restore into an empty database (a new PostgreSQL "
                          "database, or a SQLite file that does not exist yet).")
    store = ObjectStore(source / "objects")
    (root / "tmp").mkdir(mode=0o700, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root / "tmp", prefix="restore-") as scratch:
        verified_dump = _copy_database(dump, source, manifest["database"], Path(scratch))
        _verify_objects(store, source, entries)

        result = RestoreResult(name=manifest["name"])
        written: list[str] = []
        (root / RESTORING).write_text(f"restoring snapshot {manifest['name']} of {source}\n")
        try:
            for entry in entries:
                target = data_dir_target(root, entry["path"])
                store.copy_out(entry["sha256"], target, _file_mode(entry["path"]),
                               opener=lambda p: open_backup_file(p, source))
                written.append(entry["path"])
            database.restore(verified_dump, vendor)
            result.files = len(written)
            result.rows = _verify_rows(manifest["database"]["rows"])
            result.chains = _verify_chains()
        except BaseException as exc:
            _take_back(root, written)
            (root / RESTORING).unlink(missing_ok=True)
            if not isinstance(exc, Exception):
                raise
            what = str(exc) if isinstance(exc, BackupError) else f"The restore stopped: {exc}."
            raise BackupError(f"{what} Everything the restore wrote was removed again; keep the backup and "
                              "investigate before trusting it.") from exc
    listed = manifest.get("missing")
    result.missing = sorted({*_missing_originals(root), *(p for p in listed if _an_original(p))}
                            if isinstance(listed, list) else _missing_originals(root))
    (root / RESTORING).unlink()
    return result
