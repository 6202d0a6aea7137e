"""Decide what an upload is from its content, never from its name.

Uses puremagic's signature tables; a ZIP container is only a DOCX when it holds ``word/document.xml``, since every
Office file and many other formats are ZIPs.
"""

import zipfile
from dataclasses import dataclass
from pathlib import Path

import puremagic

ACCEPTED_DESCRIPTION = "PDF, PNG, JPEG, TIFF or Word (DOCX)"

_IMAGE_TYPES = {"image/png": "PNG image", "image/jpeg": "JPEG image", "image/tiff": "TIFF image"}
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@dataclass(frozen=True)
class Sniffed:
    """``kind`` is one of Exhibit.Kind's values; ``mime_type`` the detected type; ``description`` for people."""

    kind: str
    mime_type: str
    description: str


def sniff(path: Path, head: bytes) -> Sniffed:
    """Return what the file at ``path`` is, judged by its first bytes and, for ZIP containers, its member names."""
    if head.lstrip(b"\x00\t\n\r ")[:5] == b"%PDF-":
        return Sniffed("pdf", "application/pdf", "PDF document")
    if head[:4] == b"PK\x03\x04":
        # A ZIP (and every Office file) begins with a local file header; a stored PDF as its first member puts
        # "%PDF-" within 1024 bytes, yet the file is an archive.
        return _zip_kind(path)
    try:
        matches = puremagic.magic_string(head)
    except puremagic.PureError:
        matches = []
    mime = matches[0].mime_type if matches else ""
    if mime in _IMAGE_TYPES:
        return Sniffed("image", mime, _IMAGE_TYPES[mime])
    if b"%PDF-" in head[:1024]:
        # PDF readers accept a header anywhere in the first 1024 bytes (ISO 32000-1, annex H.3, note 3), after
        # whatever a mail gateway prepended; a known signature at offset 0 has been tried first.
        return Sniffed("pdf", "application/pdf", "PDF document")
    if matches:
        return Sniffed("other", mime or "application/octet-stream", matches[0].name or mime)
    return Sniffed("other", "application/octet-stream", "unrecognised data")


def _zip_kind(path: Path) -> Sniffed:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        names = set()
    if "word/document.xml" in names:
        return Sniffed("docx", DOCX_MIME, "Word document (DOCX)")
    return Sniffed("other", "application/zip", "ZIP archive")
