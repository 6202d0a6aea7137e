"""The backup destination: a content-addressed store of files shared by every snapshot, and one folder per snapshot
with its database dump and its manifest.

Layout of a destination ``DEST``::

    DEST/objects/ab/<sha256>          every file's bytes, once, named by their SHA-256 (read-only)
    DEST/snapshots/<name>/manifest.json
    DEST/snapshots/<name>/database.sqlite3 | database.pgdump

A snapshot exists once its manifest does: the manifest is written last, through a temporary file renamed into
place, so a backup that stops half-way leaves objects (reused by the next one) and no snapshot.
"""

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CHUNK_BYTES = 1024 * 1024
MANIFEST = "manifest.json"
FORMAT = "lawdesk-backup/1"


class BackupError(Exception):
    """A backup or a restore cannot go on; the message says what, naming the file, and what to do."""


def file_sha256(path: Path, opener=None) -> tuple[str, int]:
    """Return the SHA-256 (hex) and size in bytes of the file at ``path``, read in 1 MiB chunks through
    ``opener`` (a path -> binary stream function; plain ``open`` when None)."""
    digest = hashlib.sha256()
    size = 0
    with (opener(path) if opener else open(path, "rb")) as stream:
        while chunk := stream.read(CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) readable by this user only (0700) and return it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def backup_dir(path: Path) -> Path:
    """Like :func:`private_dir`, for a folder inside a backup destination: refuse (BackupError) one that is a
    symbolic link, which would send the backup's files, and its ``chmod``, wherever it points."""
    if path.is_symlink():
        raise BackupError(f"{path} is a symbolic link; a backup writes only into real folders of its destination. "
                          "Remove the link, or back up into a new folder.")
    return private_dir(path)


@dataclass
class ObjectStore:
    """The ``objects/`` folder of a destination."""

    root: Path
    repaired: list[str] = field(default_factory=list)  # objects found damaged and removed, by SHA-256

    def path(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise BackupError(f"The manifest names an object that is not a SHA-256 digest: {sha256!r}.")
        return self.root / sha256[:2] / sha256

    def has(self, sha256: str) -> bool:
        """Whether the store holds object ``sha256`` as a regular file whose bytes still have that SHA-256. An
        object that does not (a disk error, a change in the backup) is removed, so the next :meth:`put` of that
        content copies it again instead of trusting it."""
        path = self.path(sha256)
        if not path.is_file() and not path.is_symlink():
            return False
        try:
            intact = not path.is_symlink() and file_sha256(path)[0] == sha256
        except OSError:
            intact = False
        if not intact:
            path.unlink()
            self.repaired.append(sha256)
        return intact

    def put(self, source: Path) -> tuple[str, int, bool]:
        """Store the file at ``source`` unless an intact object with its content is there already (:meth:`has`
        hashes it again: a damaged object is replaced, never trusted); return its SHA-256, size in bytes and
        whether it was copied. The copy is hashed as it is written and stored under that hash, so a file changing
        while it is read is stored as what was read."""
        sha256, size = file_sha256(source)
        if self.has(sha256):
            return sha256, size, False
        backup_dir(self.root)
        digest = hashlib.sha256()
        size = 0
        fd, name = tempfile.mkstemp(dir=self.root, prefix=".incoming-")
        try:
            with open(source, "rb") as stream, os.fdopen(fd, "wb") as out:
                while chunk := stream.read(CHUNK_BYTES):
                    digest.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            sha256 = digest.hexdigest()
            target = self.path(sha256)
            backup_dir(target.parent)
            os.chmod(name, 0o400)
            os.replace(name, target)
        finally:
            Path(name).unlink(missing_ok=True)
        return sha256, size, True

    def copy_out(self, sha256: str, target: Path, mode: int, opener) -> None:
        """Copy object ``sha256``, read through ``opener`` (a path -> binary stream function that refuses links),
        to ``target``, whose folder exists, with file mode ``mode``, hashing what is written. Raises BackupError
        naming ``target`` when the bytes written are not the object's."""
        digest = hashlib.sha256()
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=".restore-")
        try:
            with opener(self.path(sha256)) as stream, os.fdopen(fd, "wb") as out:
                while chunk := stream.read(CHUNK_BYTES):
                    digest.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            if digest.hexdigest() != sha256:
                raise BackupError(f"{target.name}: the bytes restored do not have the SHA-256 of the backup.")
            os.chmod(name, mode)
            os.replace(name, target)
        finally:
            Path(name).unlink(missing_ok=True)


def write_manifest(folder: Path, manifest: dict) -> Path:
    """Write ``manifest`` as ``folder/manifest.json`` (0600) through a renamed temporary file; return its path."""
    fd, name = tempfile.mkstemp(dir=folder, prefix=".manifest-")
    with os.fdopen(fd, "w") as out:
        json.dump(manifest, out, indent=1, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    target = folder / MANIFEST
    os.replace(name, target)
    return target


def snapshot_names(destination: Path) -> list[str]:
    """Names of the complete snapshots (those with a manifest) in ``destination``, oldest first."""
    folder = destination / "snapshots"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / MANIFEST).is_file())


def read_manifest(destination: Path, name: str | None) -> tuple[Path, dict]:
    """Return the folder and manifest of snapshot ``name`` (the newest when None). Raises BackupError when the
    destination holds no such snapshot or the manifest is not one LawDesk wrote."""
    names = snapshot_names(destination)
    if not names:
        raise BackupError(f"{destination} holds no complete backup snapshot (no snapshots/*/{MANIFEST}).")
    name = name or names[-1]
    if name not in names:
        raise BackupError(f"{destination} holds no snapshot named {name!r}; it holds: {', '.join(names)}.")
    folder = destination / "snapshots" / name
    if (folder / MANIFEST).is_symlink() or folder.is_symlink():
        raise BackupError(f"Snapshot {name}: its folder or manifest is a symbolic link; nothing was restored.")
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except ValueError as exc:
        raise BackupError(f"The manifest of snapshot {name} cannot be read ({exc}).") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"Snapshot {name} is not a LawDesk backup of format {FORMAT}.")
    return folder, manifest
