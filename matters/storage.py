"""Where files live under the data directory, and how originals are stored.

Layout (under ``settings.DATA_DIR``):
- ``originals/ab/<sha256>``: accepted uploads, byte for byte, named by content. Never modified, never a user's name.
- ``quarantine/ab/<sha256>``: uploads of a type LawDesk does not accept, kept byte for byte.
- ``derived/<exhibit id>/``: what processing made: ``display.pdf`` (when the original is not itself a usable PDF),
  ``pages/0001.png`` page images, ``thumbs/0001.png`` thumbnails.
- ``secrets/``: short-lived files such as a PDF password waiting for the worker (mode 0600).
"""

import errno
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from django.conf import settings

CHUNK_BYTES = 1024 * 1024
DISK_FULL_MESSAGE = ("The data directory's disk is full, so the file could not be saved and nothing of it was "
                     "kept. Ask the office's operator to free space (or enlarge the disk), then try again.")


def is_disk_full(exc: BaseException) -> bool:
    """Return whether ``exc`` is the file system running out of space or quota (ENOSPC, EDQUOT)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class DiskFull(OSError):
    """Raised when the data directory has no room for a file being stored; ``str()`` is :data:`DISK_FULL_MESSAGE`."""

    def __init__(self) -> None:
        super().__init__(errno.ENOSPC, DISK_FULL_MESSAGE)

    def __str__(self) -> str:
        return DISK_FULL_MESSAGE


def data_path(*parts: str) -> Path:
    return Path(settings.DATA_DIR, *parts)


def blob_path(sha256: str, *, quarantined: bool = False) -> Path:
    """Return the path of a stored original. ``sha256`` must be 64 hex digits (ValueError otherwise)."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return data_path("quarantine" if quarantined else "originals", sha256[:2], sha256)


def derived_dir(exhibit_id: int) -> Path:
    return data_path("derived", str(int(exhibit_id)))


@dataclass(frozen=True)
class StagedFile:
    """An upload copied into the data directory's temp area, with its SHA-256 (hex), size in bytes and first bytes."""

    path: Path
    sha256: str
    size_bytes: int
    head: bytes


def tmp_dir() -> Path:
    """The data directory's scratch space (created on demand), on the same file system as the stores."""
    path = data_path("tmp")
    path.mkdir(parents=True, exist_ok=True)
    return path


def stage_stream(stream: BinaryIO) -> StagedFile:
    """Copy ``stream`` to a temp file in chunks (never the whole file in memory), hashing as it goes."""
    digest = hashlib.sha256()
    size = 0
    head = b""
    fd, name = tempfile.mkstemp(dir=tmp_dir(), prefix="upload-")
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := stream.read(CHUNK_BYTES):
                if len(head) < 8192:
                    head += chunk[: 8192 - len(head)]
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
    except OSError as exc:
        # A part of the file must not stay behind, filling the disk further or being taken for the whole.
        Path(name).unlink(missing_ok=True)
        if is_disk_full(exc):
            raise DiskFull() from exc
        raise
    return StagedFile(Path(name), digest.hexdigest(), size, head)


def commit_staged(staged: StagedFile, *, quarantined: bool) -> Path:
    """Move a staged file to its content-addressed place and return that path; identical content is kept once."""
    target = blob_path(staged.sha256, quarantined=quarantined)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() or not staged.path.exists():  # kept already, or moved there by an earlier attempt
        staged.path.unlink(missing_ok=True)
    else:
        os.replace(staged.path, target)
        os.chmod(target, 0o400)  # never changed, readable by LawDesk's user alone
    return target


def discard_derived(exhibit_id: int) -> None:
    shutil.rmtree(derived_dir(exhibit_id), ignore_errors=True)


def discard_staged(staged: StagedFile) -> None:
    staged.path.unlink(missing_ok=True)


def password_path(exhibit_id: int) -> Path:
    return data_path("secrets", f"exhibit-{int(exhibit_id)}.password")


def write_secret(path: Path, value: str) -> None:
    """Write ``value`` to ``path`` readable by this user only (0600), replacing any earlier value."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)


def display_pdf(exhibit) -> Path:
    """The PDF that viewers and productions read for an exhibit: the one processing made (from an image, a Word
    file, a repaired or decrypted PDF), else the original itself."""
    made = derived_dir(exhibit.pk) / "display.pdf"
    return made if made.exists() else blob_path(exhibit.sha256)


def production_dir(production_id: int) -> Path:
    """Generated output of a production, apart from uploads: ``productions/<id>/``."""
    return data_path("productions", str(int(production_id)))
