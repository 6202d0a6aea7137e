"""Unpack a message's attachments that are archives (ZIP) into the files they hold, so that each file is a member of
the message's family, reviewed and produced as any attachment is.

An archive is a container, not a document: review platforms' processing (Relativity, Nuix) extracts its files as
family members under the message that carried it, and so does LawDesk: each file of ``contracts.zip`` becomes an
attachment named ``contracts.zip/leases/lease.pdf`` (its path inside the archive kept), in the archive's place, an
archive inside the archive unpacked in turn. The archive's own bytes stay in the message's original.

Against an archive built to exhaust the server (a "ZIP bomb": a few kilobytes that inflate to terabytes, or that
nest archives without end) three limits hold, each a setting (docs/configuration.md): ``max_depth`` archives
inside archives, ``max_members`` files from one message's archives, and ``max_total_bytes`` of inflated content
from them. Sizes are counted as the bytes actually inflate, never as the archive's directory declares them (a bomb
lies there). What a limit leaves out is named in a problem, and is in the original. An encrypted member is left
with a note (its password is not known). Office files are ZIPs too (DOCX, XLSX, ODT, ODS): they are documents, and
are not unpacked. Django-free.
"""

import io
import zipfile
from dataclasses import dataclass

from matters.zip_members import CHUNK_BYTES, bounded_member_stream

from .parse import Attachment

_ZIP_MAGIC = b"PK\x03\x04"
# Members that make a ZIP an Office or OpenDocument file (ECMA-376 Part 2, OpenDocument 1.2 part 3 section 3.3).
_OFFICE_MEMBERS = {"[Content_Types].xml", "mimetype", "word/document.xml", "xl/workbook.xml", "META-INF/manifest.xml"}


@dataclass
class ArchiveLimits:
    """How far :func:`unpacked_attachments` goes: archives ``max_depth`` deep (1: an attached archive's files, not
    those of an archive inside it), ``max_members`` files in all, ``max_total_bytes`` inflated in all."""

    max_depth: int
    max_members: int
    max_total_bytes: int


class _Budget:
    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.members = 0
        self.total_bytes = 0


def is_archive(data: bytes) -> bool:
    """Whether ``data`` is a ZIP archive that is not an Office or OpenDocument file."""
    if not data.startswith(_ZIP_MAGIC):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return True  # a damaged archive is still an archive: unpacking says what is wrong with it
    return not names & _OFFICE_MEMBERS


def unpacked_attachments(attachments: list[Attachment], limits: ArchiveLimits) -> tuple[list[Attachment], list[str]]:
    """``attachments`` with every archive among them replaced by the files it holds (see the module docstring),
    in order, and problems written for an attorney. An archive that cannot be opened stays as it came."""
    budget = _Budget(limits)
    out: list[Attachment] = []
    problems: list[str] = []
    for attachment in attachments:
        if attachment.data is None or attachment.is_message or not is_archive(attachment.data):
            out.append(attachment)
            continue
        out += _unpack(attachment, 1, budget, problems)
    return out, problems


def _unpack(container: Attachment, depth: int, budget: _Budget, problems: list[str]) -> list[Attachment]:
    limits = budget.limits
    if depth > limits.max_depth:
        problems.append(f"The archive “{container.name}” is nested {depth} archives deep, past the limit of "
                        f"{limits.max_depth} (LAWDESK_ARCHIVE_MAX_DEPTH): it was not unpacked and is kept as it came.")
        return [container]
    try:
        archive = zipfile.ZipFile(io.BytesIO(container.data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        problems.append(f"The archive “{container.name}” could not be opened ({type(exc).__name__}); it is kept as "
                        "it came.")
        return [container]
    found: list[Attachment] = []
    files = [info for info in infos if not info.is_dir()]
    with archive:
        for number, info in enumerate(files):
            name = f"{container.name}/{info.filename}"
            if budget.members >= limits.max_members:
                problems.append(f"The archive “{container.name}” holds {len(files)} files; {len(files) - number} "
                                f"of them were not unpacked, past the limit of {limits.max_members} files from one "
                                "message's archives (LAWDESK_ARCHIVE_MAX_MEMBERS). They are in the original.")
                break
            if info.flag_bits & 0x1:
                problems.append(f"“{name}” is encrypted in its archive (its password is not known); it was not "
                                "unpacked and is in the original.")
                continue
            data, problem = _inflate(archive, info, budget)
            if data is None:
                problems.append(f"“{name}” {problem}")
                if "LAWDESK_ARCHIVE_MAX_MB" in problem:
                    break
                continue
            budget.members += 1
            member = Attachment(name, "application/octet-stream", data)
            found += _unpack(member, depth + 1, budget, problems) if is_archive(data) else [member]
    problems.append(f"The archive “{container.name}” was unpacked: each of the {len(found)} file(s) it gave is "
                    "an attachment below, named by its path in the archive.")
    return found


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget) -> tuple[bytes | None, str]:
    """A member's bytes, counted against the budget as they inflate; None and why when it cannot be read or the
    budget runs out."""
    room = budget.limits.max_total_bytes - budget.total_bytes
    pieces, size = [], 0
    try:
        with bounded_member_stream(archive, info, room) as stream:
            while chunk := stream.read(min(CHUNK_BYTES, room - size + 1)):
                size += len(chunk)
                if size > room:
                    limit_mb = budget.limits.max_total_bytes // (1024 * 1024)
                    return None, (f"inflates past the limit of {limit_mb} MiB unpacked from one message's archives "
                                  "(LAWDESK_ARCHIVE_MAX_MB); it and the files after it were not unpacked and are "
                                  "in the original.")
                pieces.append(chunk)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError) as exc:
        # BadZipFile for a CRC mismatch, NotImplementedError for a compression method zipfile lacks.
        return None, f"could not be unpacked from its archive ({type(exc).__name__}: {str(exc)[:120]}); it is in " \
                     "the original."
    budget.total_bytes += size
    return b"".join(pieces), ""
