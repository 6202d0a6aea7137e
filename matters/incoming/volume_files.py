"""The files of a received volume: found by the names its load files give them, the image load file read, page
files assembled and stamped numbers read in the limited ingest child (never in the worker), and the volume
unpacked within the archive limits. Used by :mod:`matters.incoming.services`.
"""

import json
import re
import tempfile
from pathlib import Path

from django.conf import settings
from PIL import Image

from matters import storage
from matters.exhibits.ingest.assemble import ASSEMBLED_NAME, OCR_TEXTS_NAME
from matters.exhibits.ingest.runner import run_child
from matters.exhibits.ingest.spec import Spec
from matters.exhibits.sniff import sniff
from matters.incoming.archive import Limits, extract
from matters.incoming.encoding import decode_bytes, describe
from matters.incoming.loadfiles import (
    Bates,
    ImageRow,
    Report,
    bates_key,
    guess_field_map,
    parse_dat,
    parse_lfp,
    parse_opt,
)
from matters.models import Exhibit, Page


def _limits() -> Limits:
    return Limits(settings.LAWDESK_ZIP_MAX_MEMBERS, settings.LAWDESK_ZIP_MAX_MB * 2**20, settings.LAWDESK_ZIP_MAX_RATIO)


def _index(root: Path) -> dict[str, Path]:
    """Every file under ``root`` by its relative path, lower-cased with forward slashes (load files write
    Windows paths in any case)."""
    return {str(p.relative_to(root)).replace("\\", "/").lower(): p for p in root.rglob("*") if p.is_file()}


def _lookup(index: dict[str, Path], reference: str, base: str) -> Path | None:
    """The file a load file names: backslashes or slashes, any letter case, relative to the volume or its
    parent, or absolute on the producing party's machine (a drive letter or share is dropped, then leading
    folders until a unique match)."""
    key = re.sub(r"^[a-z]:", "", reference.strip().replace("\\", "/").lower()).lstrip("./")
    for candidate in (key, f"{base}/{key}" if base else key):
        if candidate in index:
            return index[candidate]
    parts = key.split("/")
    for start in range(len(parts)):
        tail = "/".join(parts[start:])
        matches = [path for name, path in index.items() if name == tail or name.endswith("/" + tail)]
        if matches:
            return matches[0] if len(matches) == 1 else None
    return None


class PageFilesRefused(ValueError):
    """A document's page files could not be assembled; the message names the file and why, for the report."""


def _pdf_of_pages(pages: list[tuple[Path, int]], report: Report, first: str) -> tuple[bytes, list[bool]]:
    """A PDF of the given (image file, page within it) pairs, in order; also which pairs gave a page. Image files
    are TIFF/JPEG/PNG/PDF, judged by content; a page past the end of its file is reported and left out.

    The files are decoded in a child process under the ingest limits (LAWDESK_INGEST_MEMORY_MB,
    LAWDESK_INGEST_TIMEOUT_S), never in the worker. Raises PageFilesRefused with the child's reason.
    """
    with tempfile.TemporaryDirectory(dir=storage.tmp_dir()) as work:
        spec = Spec(source="", kind="images", out_dir=work, images=tuple(str(path) for path, _ in pages),
                    image_pages=tuple(index for _, index in pages), max_image_pixels=Image.MAX_IMAGE_PIXELS or 0,
                    readers_unsandboxed=settings.LAWDESK_READERS_UNSANDBOXED)
        final = _last_event(run_child(spec, memory_mb=settings.LAWDESK_INGEST_MEMORY_MB,
                                      timeout_s=settings.LAWDESK_INGEST_TIMEOUT_S, job="assemble"))
        if final.get("event") != "assembled":
            raise PageFilesRefused(final.get("reason") or "the page files could not be read")
        counts, used = final["page_counts"], final["used"]
        for (path, index), ok in zip(pages, final["found"]):
            if not ok:
                report.add(f"{first}: the image {path.name} has {counts[str(path)]} page(s); page {index + 1} of it "
                           "is named in the image load file but missing.")
        for name, count in counts.items():
            if used[name] < count:
                report.add(f"{first}: the image {Path(name).name} holds {count} pages, but the image load "
                           f"file numbers {used[name]} of them; the others were not imported.")
        return (Path(work) / ASSEMBLED_NAME).read_bytes(), final["found"]


def _is_pdf(path: Path) -> bool:
    """Whether a native file is a PDF by its content (its name may say anything)."""
    with open(path, "rb") as stream:
        return sniff(path, stream.read(8192)).kind == "pdf"


def _is_zip(path: Path) -> bool:
    with open(path, "rb") as stream:
        return stream.read(4) == b"PK\x03\x04"


def load_files(root: Path, suffix: str) -> list[Path]:
    """The volume's files named ``*<suffix>`` in any case (``.dat``), in path order: the first is the one read."""
    return sorted(p for p in root.rglob("*") if p.suffix.lower() == suffix and p.is_file())


def report_unread(paths: list[Path], kind: str, report: Report) -> None:
    """Report the load files of ``kind`` after the first, which the import does not read: a volume with two
    DATs or two OPTs holds records that would otherwise vanish without a word."""
    for unread in paths[1:]:
        report.add(f"{unread.name}: the volume holds {len(paths)} {kind} load files and LawDesk reads one, "
                   f"{paths[0].name}; what {unread.name} lists was not imported. Ask the producing party "
                   "for one load file per volume, or upload each as its own volume.")


def _image_rows(root: Path, report: Report) -> tuple[list[ImageRow], str]:
    """The rows of the volume's image load file: an OPT, else an IPRO LFP; any other image load file is
    reported unread. A file whose encoding is uncertain is reported."""
    found = load_files(root, ".opt") + load_files(root, ".lfp")
    if not found:
        return [], ""
    report_unread(found, "image", report)
    data = found[0].read_bytes()
    decoded = decode_bytes(data)
    if not decoded.certain:
        report.add(describe(found[0].name, decoded))
    if found[0].suffix.lower() == ".opt":
        return parse_opt(data), "OPT"
    return parse_lfp(data), "LFP"


ImageMap = dict[tuple[str, int, str], tuple[str, int, str]]


def _image_map(rows: list[ImageRow], kind: str, report: Report) -> ImageMap:
    """Each Bates number's (image reference, page within that image, the number as the load file writes it),
    by :func:`bates_key`, so the DAT's ``DEF 000123`` finds the OPT's ``DEF000123``. An OPT line for a
    multi-page image gives its page count; the pages after the first take the following numbers unless the file
    lists them itself. Rows that repeat one image path without a page index count through it in order. A second
    number naming a page another number already names is reported and skipped: one image page, one number."""
    images: ImageMap = {}
    seen_path: dict[str, int] = {}
    named: dict[tuple[str, int], str] = {}  # (image, page within it) -> the number that names it
    for row in rows:
        number = bates_key(row.bates)
        if number in images:
            report.add(f"{row.bates} appears twice in the {kind}; the second entry ({row.image_path}) was "
                       "skipped.")
            continue
        key = row.image_path.replace("\\", "/").lower()
        index = row.page_index
        if not index and key in seen_path:
            index = seen_path[key] + 1
        seen_path[key] = index
        if (key, index) in named:
            report.add(f"{row.bates} and {named[key, index]} name the same page ({index + 1}) of the image "
                       f"{row.image_path} in the {kind}; {row.bates} was skipped.")
            continue
        named[key, index] = row.bates
        images[number] = (row.image_path, index, row.bates)
    listed = set(images)
    for row in rows:
        start = Bates.parse(row.bates)
        if row.pages and row.pages > 1 and start is not None:
            following = [start.shifted(k) for k in range(1, row.pages)]
            if not any(number.key in listed for number in following):
                for k, number in enumerate(following, start=1):
                    images[number.key] = (row.image_path, row.page_index + k, str(number))
    return images


def inspect_volume(path: Path) -> tuple[list[str], dict[str, str]]:
    """The DAT header and the guessed field mapping of a volume (ZIP or folder), for the user to confirm.
    Raises UnsafeArchive or ValueError with a reason."""
    with tempfile.TemporaryDirectory(dir=storage.tmp_dir()) as work:
        root = _unpacked(path, Path(work))
        dats = load_files(root, ".dat")
        if not dats:
            return [], {}
        header, _ = parse_dat(dats[0].read_bytes())
        return header, guess_field_map(header)


def _unpacked(path: Path, work: Path) -> Path:
    if path.is_dir():
        return path
    extract(path, work, _limits())
    return work


def _stamps_of(exhibit: Exhibit, records: list[Page]) -> list[str | None]:
    """The Bates number stamped on each page of a produced PDF, read in the limited child (the PDF comes from
    the other side). Raises PageFilesRefused with the child's reason."""
    with tempfile.TemporaryDirectory(dir=storage.tmp_dir()) as work:
        ocr_texts = [record.text if record.source == Page.Source.OCR else "" for record in records]
        (Path(work) / OCR_TEXTS_NAME).write_text(json.dumps(ocr_texts))
        spec = Spec(source=str(storage.display_pdf(exhibit)), kind="pdf", out_dir=work,
                    readers_unsandboxed=settings.LAWDESK_READERS_UNSANDBOXED)
        final = _last_event(run_child(spec, memory_mb=settings.LAWDESK_INGEST_MEMORY_MB,
                                      timeout_s=settings.LAWDESK_INGEST_TIMEOUT_S, job="stamps"))
        if final.get("event") != "stamps":
            raise PageFilesRefused(final.get("reason") or "the Bates numbers could not be read")
        return final["numbers"]


def _last_event(events) -> dict:
    final: dict = {}
    for final in events:
        pass
    return final
