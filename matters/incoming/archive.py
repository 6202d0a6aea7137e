"""Unpack a production ZIP without trusting it.

Every member path is checked (no absolute paths, drive letters or ``..``), links are refused, and the member
count, total uncompressed size and compression ratio are limited before anything is written, then enforced
again while writing, since a member's declared size can lie.
"""

import os
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from matters.zip_members import CHUNK_BYTES, bounded_member_stream


class UnsafeArchive(ValueError):
    """The archive breaks a rule or cannot be read; the message names it for the user."""


# What zipfile raises for a member it cannot read: a bad CRC or truncated data (BadZipFile, EOFError, zlib.error),
# a password (RuntimeError), a method or encryption it does not implement, such as Deflate64, which Windows
# writes for large folders (NotImplementedError).
MEMBER_READ_ERRORS = (zipfile.BadZipFile, EOFError, zlib.error, RuntimeError, NotImplementedError)


RATIO_CHECK_MIN_BYTES = 10 * 2**20  # small members may compress very well (blank TIFF pages); only big ones count


@dataclass(frozen=True)
class Limits:
    max_members: int
    max_total_bytes: int
    max_ratio: float


def _safe_name(name: str) -> PurePosixPath:
    normalised = name.replace("\\", "/")
    path = PurePosixPath(normalised)
    if normalised.startswith("/") or (len(normalised) > 1 and normalised[1] == ":") or ".." in path.parts:
        raise UnsafeArchive(f"The archive member “{name}” points outside the archive (absolute path or '..'); "
                            "nothing was imported.")
    return path


def extract(archive_path: Path, target: Path, limits: Limits) -> list[Path]:
    """Extract ``archive_path`` into ``target`` and return the files written. Raises UnsafeArchive."""
    try:
        archive = zipfile.ZipFile(archive_path)
    except zipfile.BadZipFile as error:
        raise UnsafeArchive(f"The file is not a readable ZIP archive ({error}).") from error
    with archive:
        members = archive.infolist()
        if len(members) > limits.max_members:
            raise UnsafeArchive(f"The archive has {len(members)} members, over the limit of {limits.max_members} "
                                "(LAWDESK_ZIP_MAX_MEMBERS).")
        declared = sum(m.file_size for m in members)
        if declared > limits.max_total_bytes:
            raise UnsafeArchive(f"The archive would unpack to {declared / 2**20:.0f} MiB, over the limit of "
                                f"{limits.max_total_bytes / 2**20:.0f} MiB (LAWDESK_ZIP_MAX_MB).")
        names = [member.filename.replace("\\", "/").rstrip("/").lower() for member in members]
        if len(set(names)) != len(names):
            raise UnsafeArchive("The archive names the same member twice; which copy is the production's is unclear.")
        for member in members:
            _safe_name(member.filename)
            mode = member.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise UnsafeArchive(f"The archive member “{member.filename}” is a link; links are refused.")
            if (member.file_size > RATIO_CHECK_MIN_BYTES and member.compress_size
                    and member.file_size / member.compress_size > limits.max_ratio):
                raise UnsafeArchive(f"The archive member “{member.filename}” expands "
                                    f"{member.file_size / member.compress_size:.0f} "
                                    f"times, over the limit of {limits.max_ratio:.0f} (LAWDESK_ZIP_MAX_RATIO): a "
                                    "decompression bomb or a file no production needs.")
        written, total = [], 0
        for member in members:
            if member.is_dir():
                continue
            path = target / _safe_name(member.filename)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                # zipfile inflates a bzip2 or LZMA member's every compressed chunk whole, however far it expands
                with bounded_member_stream(archive, member, limits.max_total_bytes - total) as source, \
                        open(path, "wb") as out:
                    while chunk := source.read(CHUNK_BYTES):
                        total += len(chunk)
                        if total > limits.max_total_bytes:
                            raise UnsafeArchive("The archive unpacks to more than its headers declare, past the "
                                                "limit (LAWDESK_ZIP_MAX_MB); nothing was imported.")
                        out.write(chunk)
            except (FileExistsError, IsADirectoryError, NotADirectoryError) as error:
                raise UnsafeArchive(f"The archive member “{member.filename}” conflicts with another member "
                                    f"({error.strerror}).") from error
            except OSError as error:  # the server's side (disk full, permissions): not the archive's fault
                raise UnsafeArchive(f"The archive member “{member.filename}” could not be unpacked on the server "
                                    f"({error.strerror}); nothing was imported. Try again once the server's "
                                    "administrator has fixed that; the upload itself is kept.") from error
            except MEMBER_READ_ERRORS as error:
                raise UnsafeArchive(f"The archive member “{member.filename}” cannot be read ({error}); nothing "
                                    "was imported. Ask the producing party for an unencrypted ZIP written with "
                                    "the standard Deflate method.") from error
            os.chmod(path, 0o600)
            written.append(path)
        return written
