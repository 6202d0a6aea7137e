"""Decide what an upload is from its content, never from its name.

Uses puremagic's signature tables; a ZIP container is only a DOCX when it holds ``word/document.xml`` (an
OpenDocument text when its ``mimetype`` member says so), since every Office file and many other formats are ZIPs.
The word-processing formats LibreOffice converts (legacy Word, WordPerfect, RTF, OpenDocument) are told apart by
their own signatures, listed in :data:`WORD_PROCESSING` with the source of each.
"""

import csv
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import puremagic

from matters.email.calendar import looks_like_calendar
from matters.email.parse import looks_like_message

ACCEPTED_DESCRIPTION = (
    "PDF, PNG, JPEG, TIFF, Word (DOCX or DOC), WordPerfect (WPD), RTF, OpenDocument text (ODT), a spreadsheet "
    "(XLSX, XLS, ODS or CSV), email (EML or Outlook MSG), a calendar item (ICS) or a mailbox (MBOX)"
)

_IMAGE_TYPES = {"image/png": "PNG image", "image/jpeg": "JPEG image", "image/tiff": "TIFF image"}
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
DOC_MIME = "application/msword"
WPD_MIME = "application/vnd.wordperfect"
RTF_MIME = "application/rtf"
ODT_MIME = "application/vnd.oasis.opendocument.text"
EML_MIME = "message/rfc822"
MSG_MIME = "application/vnd.ms-outlook"
MBOX_MIME = "application/mbox"
# A calendar item (RFC 5545) is read with the email kind: it is what a meeting invitation carries, and its page is
# laid out as a message's is (matters.email.intake).
ICS_MIME = "text/calendar"
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
XLS_MIME = "application/vnd.ms-excel"
ODS_MIME = "application/vnd.oasis.opendocument.spreadsheet"
CSV_MIME = "text/csv"
PST_MIME = "application/vnd.ms-outlook-pst"
# Spreadsheets, rendered as printed by LibreOffice (matters.exhibits.ingest.sheets): type -> (the suffix LibreOffice
# is handed, the description shown to people).
SPREADSHEETS = {
    XLSX_MIME: (".xlsx", "Excel workbook (XLSX)"),
    XLS_MIME: (".xls", "Excel 97-2003 workbook (XLS)"),
    ODS_MIME: (".ods", "OpenDocument spreadsheet (ODS)"),
    CSV_MIME: (".csv", "CSV table"),
}
# An Outlook data file (PST or OST) begins with "!BDN" ([MS-PST] 2.2.2.6, HEADER dwMagic). No maintained reader of
# it installs here, so it is refused with what to upload instead.
_PST_MAGIC = b"!BDN"
PST_REFUSAL = (
    "This file is an Outlook data file (PST), a whole mailbox in Outlook's own format, which is not read here: no "
    "maintained reader of it can be installed on this server. In Outlook, drag the messages to a folder (each is "
    "saved as an MSG file) or export the folder as an MBOX, and upload those. The file is kept unchanged in "
    "quarantine."
)
# An Outlook .msg is a compound file whose properties live in streams named "__substg1.0_<tag>" and a
# "__properties_version1.0" stream ([MS-OXMSG] 2.1, 2.4); Word and Excel files have neither.
_MSG_STREAM = "__substg1.0_".encode("utf-16-le")

# Word-processing formats converted by LibreOffice, by the file suffix LibreOffice is handed (its filter
# detection reads the content; the suffix only helps it choose first) and the description shown to people.
WORD_PROCESSING = {
    DOC_MIME: (".doc", "Word 97-2003 document (DOC)"),
    WPD_MIME: (".wpd", "WordPerfect document (WPD)"),
    RTF_MIME: (".rtf", "Rich Text Format document (RTF)"),
    ODT_MIME: (".odt", "OpenDocument text (ODT)"),
}
# OLE2 compound file signature ([MS-CFB] 2.2); a Word 97-2003 file holds a "WordDocument" stream ([MS-DOC] 2.1.1),
# whose UTF-16 name appears in the directory sectors. Excel and PowerPoint files are compound files too.
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_WORD_STREAM = "WordDocument".encode("utf-16-le")
# An Excel 97-2003 workbook holds a "Workbook" stream ([MS-XLS] 2.1.2; "Book" in Excel 5.0/95 files).
_EXCEL_STREAMS = ("Workbook".encode("utf-16-le"), "Book\x00".encode("utf-16-le"))
# An encrypted OOXML package (DOCX, XLSX, PPTX with a password to open) is a compound file holding the package in
# an "EncryptedPackage" stream ([MS-OFFCRYPTO] 2.3.4.4); which application made it is known only once decrypted.
_ENCRYPTED_PACKAGE_STREAM = "EncryptedPackage".encode("utf-16-le")
ENCRYPTED_OFFICE_DESCRIPTION = "password-protected Office document (encrypted DOCX)"
# WordPerfect 5.x-X9 files start with 0xFF "WPC"; byte 8 is the product (1 = WordPerfect) and byte 9 the file
# type (10 = document) (WordPerfect file format documentation, "Prefix Packet"; libwpd's WP5/6 header readers).
_WPC = b"\xffWPC"


# What a lawyer calls each type (the exhibit list's Type column, the exhibit page); a raw MIME type is never shown.
TYPE_NAMES = {
    "application/pdf": "PDF",
    "image/png": "PNG image",
    "image/jpeg": "JPEG image",
    "image/tiff": "TIFF image",
    "image/gif": "GIF image",
    "image/bmp": "BMP image",
    "image/webp": "WebP image",
    DOCX_MIME: "Word document",
    DOC_MIME: "Word 97-2003 document",
    WPD_MIME: "WordPerfect document",
    RTF_MIME: "RTF document",
    ODT_MIME: "OpenDocument text",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel workbook",
    "application/vnd.ms-excel": "Excel workbook",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint presentation",
    "application/vnd.ms-powerpoint": "PowerPoint presentation",
    "application/vnd.oasis.opendocument.spreadsheet": "OpenDocument spreadsheet",
    "message/rfc822": "email",
    "application/vnd.ms-outlook": "Outlook email",
    PST_MIME: "Outlook data file (PST)",
    "application/mbox": "mailbox",
    ICS_MIME: "calendar item",
    "application/zip": "ZIP archive",
    "application/x-7z-compressed": "7-Zip archive",
    "application/x-rar-compressed": "RAR archive",
    "application/gzip": "gzip archive",
    "text/plain": "plain text",
    "text/html": "web page (HTML)",
    "text/csv": "CSV table",
    "audio/mpeg": "MP3 audio",
    "video/mp4": "MP4 video",
    "application/x-msdownload": "Windows program",
    "application/x-executable": "program",
    "application/octet-stream": "unrecognised file",
}


def type_name(mime_type: str) -> str:
    """Return what a lawyer calls a file of ``mime_type`` ("PDF", "Word document", "TIFF image", "email");
    a type not in TYPE_NAMES is named by its family ("audio file") or "file of another type", never raw."""
    if not mime_type:
        return "—"
    if name := TYPE_NAMES.get(mime_type.lower()):
        return name
    family = mime_type.split("/", 1)[0].lower()
    return {"image": "image", "audio": "audio file", "video": "video file", "text": "text file"}.get(
        family, "file of another type")


@dataclass(frozen=True)
class Sniffed:
    """``kind`` is one of Exhibit.Kind's values; ``mime_type`` the detected type; ``description`` for people;
    ``refusal`` the whole reason a type that is not accepted is refused, where the usual one says too little."""

    kind: str
    mime_type: str
    description: str
    refusal: str = ""


def _word_processing(path: Path, head: bytes) -> Sniffed | None:
    if head.startswith(b"{\\rtf"):
        return Sniffed("document", RTF_MIME, WORD_PROCESSING[RTF_MIME][1])
    if head.startswith(_WPC) and len(head) > 9 and head[8] == 1 and head[9] == 10:
        return Sniffed("document", WPD_MIME, WORD_PROCESSING[WPD_MIME][1])
    if head.startswith(_OLE2):
        try:
            with open(path, "rb") as stream:
                directory = stream.read(4 * 1024 * 1024)
        except OSError:
            directory = head
        if _ENCRYPTED_PACKAGE_STREAM in directory:
            # Accepted as a Word document: the ingest child asks for the password, and says what it holds if
            # it turns out to be a workbook or a presentation.
            return Sniffed("docx", DOCX_MIME, ENCRYPTED_OFFICE_DESCRIPTION)
        if _WORD_STREAM in directory:
            return Sniffed("document", DOC_MIME, WORD_PROCESSING[DOC_MIME][1])
        if _MSG_STREAM in directory:
            return Sniffed("email", MSG_MIME, "Outlook email (MSG)")
        if any(stream in directory for stream in _EXCEL_STREAMS):
            return Sniffed("workbook", XLS_MIME, SPREADSHEETS[XLS_MIME][1])
    return None


def _mail(head: bytes) -> Sniffed | None:
    """An RFC 5322 message (header lines, a blank line, a body), or an mbox (messages each after a "From "
    separator line, RFC 4155)."""
    if head.startswith(b"From ") and b"\n" in head:
        rest = head.split(b"\n", 1)[1]
        if looks_like_message(rest):
            return Sniffed("mailbox", MBOX_MIME, "mailbox (MBOX)")
    if looks_like_message(head):
        return Sniffed("email", EML_MIME, "email (EML)")
    return None


def sniff(path: Path, head: bytes) -> Sniffed:
    """Return what the file at ``path`` is, judged by its first bytes and, for ZIP containers, its member names."""
    if head.lstrip(b"\x00\t\n\r ")[:5] == b"%PDF-":
        return Sniffed("pdf", "application/pdf", "PDF document")
    if head[:4] == b"PK\x03\x04":
        # A ZIP (and every Office file) begins with a local file header; a stored PDF as its first member puts
        # "%PDF-" within 1024 bytes, yet the file is an archive.
        return _zip_kind(path)
    if (found := _word_processing(path, head)) is not None:
        return found
    if (found := _mail(head)) is not None:
        return found
    if looks_like_calendar(head):
        return Sniffed("email", ICS_MIME, "calendar item (ICS)")
    if head.startswith(_PST_MAGIC):
        return Sniffed("other", PST_MIME, "Outlook data file (PST)", PST_REFUSAL)
    if looks_like_csv(head):
        return Sniffed("workbook", CSV_MIME, SPREADSHEETS[CSV_MIME][1])
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
        return Sniffed("other", mime or "application/octet-stream", matches[0].name or type_name(mime))
    return Sniffed("other", "application/octet-stream", "unrecognised data")


def looks_like_csv(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes, :data:`HEAD_BYTES` at most) reads as a comma-separated table
    (RFC 4180): text in UTF-8 (or Latin-1) with no control characters but tab, CR and LF, at least two records, and
    the same number of fields, at least two, in each complete record (quoted fields may hold commas and line
    breaks). A table of one column is not told from prose and stays unaccepted."""
    if b"\x00" in head or not head.strip():
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # The head may cut a UTF-8 character in two at its end; anything else is not UTF-8 at all.
        text = head[:exc.start].decode("utf-8") if exc.reason == "unexpected end of data" else head.decode("latin-1")
    text = text.lstrip("\ufeff")
    if any(ord(ch) < 32 and ch not in "\t\r\n" for ch in text):
        return False
    try:
        records = [row for row in csv.reader(io.StringIO(text, newline=""), strict=True) if any(row)]
    except csv.Error:
        return False
    if len(head) >= HEAD_BYTES:
        records = records[:-1]  # the last record may be cut short
    counts = {len(row) for row in records[:200]}
    return len(records) >= 2 and len(counts) == 1 and counts.pop() >= 2


# How many bytes of an upload sniff is handed (matters.storage.stage_stream keeps a head of this size); a shorter
# head is the whole file.
HEAD_BYTES = 8192


def _zip_kind(path: Path) -> Sniffed:
    """A ZIP container: a DOCX (``word/document.xml``), an ODT or ODS (its ``mimetype`` member, OpenDocument 1.2
    part 3 section 3.3), an XLSX (``xl/workbook.xml``, ECMA-376 Part 1 12.3.23), or a plain archive."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            mimetype = archive.read("mimetype")[:100] if "mimetype" in names else b""
    except (zipfile.BadZipFile, OSError, KeyError):
        names, mimetype = set(), b""
    if "word/document.xml" in names:
        return Sniffed("docx", DOCX_MIME, "Word document (DOCX)")
    if mimetype.strip() == ODT_MIME.encode() and "content.xml" in names:
        return Sniffed("document", ODT_MIME, WORD_PROCESSING[ODT_MIME][1])
    if "xl/workbook.xml" in names:
        return Sniffed("workbook", XLSX_MIME, SPREADSHEETS[XLSX_MIME][1])
    if mimetype.strip() == ODS_MIME.encode() and "content.xml" in names:
        return Sniffed("workbook", ODS_MIME, SPREADSHEETS[ODS_MIME][1])
    return Sniffed("other", "application/zip", "ZIP archive")
