"""Parse and OCR one file, or render its page images, in a child process run with memory and time limits.

This module imports nothing from Django, so a hostile file can only harm the child. The worker forks children from
a fork server that has imported this module once, each reading files in turn (:mod:`matters.exhibits.ingest.pool`);
for debugging, run it directly as ``python -m matters.exhibits.ingest.child SPEC_JSON [previews]``, which prints the
events as JSON lines. Ingest events:

- ``{"event": "start", "pages": n, "notes": [...], "word_changes": {...}}`` once the document is open
  (``word_changes`` only for a Word file with tracked changes, comments or hidden text: see
  :class:`matters.exhibits.ingest.docx_revisions.WordChanges`);
- ``{"event": "page", "number": k, "text": ..., "source": "pdf"|"ocr"|"none", "ocr_confidence": float|null,
  "ocr_rotation_deg": int, "width_pt": float, "height_pt": float, "improper_redaction": [{"rect": [x0, y0, x1, y1],
  "text": ...}], "ink": bool, "text_key": hex}`` for each page, in page order (``improper_redaction``: dark boxes
  over readable text, see :mod:`matters.exhibits.ingest.redaction_check`; ``ink``: the page has marks that no
  usable text came from before OCR: a dropped text layer or an image; ``text_key``: for text read from the text
  layer, the key of what it was read from, :func:`matters.productions.bates.page_key.page_keys`, else "");
- ``{"event": "done", "notes": [...]}`` at the end; or ``{"event": "error", "status": "failed"|"needs_password",
  "reason": ...}`` and exit status 2 when the file cannot be processed.

A PDF made from an image, a Word file, a repaired or a decrypted PDF goes to ``out_dir/display.pdf``.
Previews (a separate, later run over that display PDF) write ``out_dir/pages/NNNN.jpg`` (viewer image) and
``out_dir/thumbs/NNNN.jpg`` and emit ``{"event": "previews", "pages": n}``.

The job and its events are :mod:`.spec`; opening the file as a PDF (conversion, repair, decryption) is
:mod:`.document`; a received volume's page files are :mod:`.assemble`.
"""

import ctypes
import json
import os
import re
import resource
import sys
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import numpy
import pymupdf

from matters.productions.bates.page_key import page_keys

from .assemble import assemble_images, read_stamps
from .document import display_source, open_document
from .docx_revisions import WordChanges
from .ocr import OcrResult, ocr_page_image
from .redaction_check import find_hidden_text, read_page
from .sandbox import SandboxUnavailable
from .spec import Emit, IngestFailure, Spec, print_event

# A text layer counts as usable when, after removing court ECF stamps, it holds at least this many letters or digits.
MIN_USABLE_CHARS = 20
# More than this share of U+FFFD or private-use characters means the font has no usable Unicode map.
MAX_GARBLED_SHARE = 0.3
# Largest page image handed to Tesseract: a letter page at 300 dpi is 8.4 megapixels, a 24 x 36 inch drawing at
# 250 dpi 54; past this the resolution is lowered rather than the page failing for memory.
MAX_OCR_PIXELS = 60_000_000
VIEW_LONG_SIDE_PX = 1600
THUMB_LONG_SIDE_PX = 220
JPEG_QUALITY = 82

# CM/ECF stamp on every filed page, as the courts of appeals and district courts print it, e.g.
# "Case: 21-1298 Document: 42 Page: 1 Date Filed: 08/31/2022", "Appeal: 17-2218 Doc: 17 Filed: 10/31/2017 Pg: 1 of 1",
# "Appellate Case: 22-1801 Page: 1 Date Filed: 01/19/2023 Entry ID: 5237514",
# "Case 1:20-cv-01234-ABC Document 12 Filed 01/02/20 Page 3 of 9 PageID #: 45".
_ECF_HEADER = re.compile(
    r"^[^\S\n]*(?:USCA\d*\s+)?(?:Appellate\s+Case|Case|Appeal):?\s+\S+"
    r"(?=.*\b(?:Doc(?:ument)?|Page|Pg)\b)(?=.*\bFiled\b).*$",
    re.IGNORECASE | re.MULTILINE,
)
# MIN_USABLE_CHARS characters of str.isalnum's class (the re module's Unicode \w less "_"), found in C: a page
# holds thousands of characters, and a loop over them cost as much as reading the page.
_ENOUGH_ALNUM = re.compile(rf"(?:[^\W_][\W_]*){{{MIN_USABLE_CHARS}}}")
_SPACE = re.compile(r"\s")  # str.isspace's class
_GARBLED = re.compile("[\ufffd\ue000-\uf8ff]")


def usable_text(text: str) -> str:
    """Return the page text (NUL characters removed: no database stores them) if, without ECF header lines, it
    is a real text layer; else ''."""
    text = text.replace("\x00", "")
    body = _ECF_HEADER.sub("", text)
    if not _ENOUGH_ALNUM.search(body):
        return ""
    if _garbled_share_over(body):
        return ""
    return text


def short_layer(text: str) -> str:
    """The text layer of a page that holds real but few characters (``Page 1``, one account number): readable,
    not garbled, some letters or digits beyond court ECF header lines, yet under MIN_USABLE_CHARS; else ''.
    Such a layer is kept as the page's text when OCR has nothing better, never dropped for a blank page."""
    text = text.replace("\x00", "")
    body = _ECF_HEADER.sub("", text)
    if not any(ch.isalnum() for ch in body) or garbled_layer(text):
        return ""
    return text


def garbled_layer(text: str) -> bool:
    """Whether ``text`` is a text layer dropped as garbled (fonts with no usable Unicode map): marks on the page
    that read as nothing."""
    return _garbled_share_over(_ECF_HEADER.sub("", text))


def _garbled_share_over(body: str) -> bool:
    """Whether more than MAX_GARBLED_SHARE of the visible characters of ``body`` are U+FFFD or private-use."""
    if not _GARBLED.search(body):
        return False
    visible = len(_SPACE.sub("", body))
    return visible > 0 and len(_GARBLED.findall(body)) / visible > MAX_GARBLED_SHARE


def render_previews(spec: Spec, emit: Emit) -> None:
    """Render each page's viewer image and thumbnail (colour JPEG) from the display PDF."""
    out_dir = Path(spec.out_dir)
    for folder in ("pages", "thumbs"):
        (out_dir / folder).mkdir(parents=True, exist_ok=True)
    try:
        doc = pymupdf.open(display_source(spec), filetype="pdf")
    except Exception as exc:
        raise IngestFailure(f"The page images could not be made: the PDF did not open ({exc}).") from exc
    with doc:
        for index, page in enumerate(doc):
            long_side_pt = max(page.rect.width, page.rect.height) or 1
            for folder, long_side_px in (("pages", VIEW_LONG_SIDE_PX), ("thumbs", THUMB_LONG_SIDE_PX)):
                zoom = long_side_px / long_side_pt
                pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
                pixmap.save(out_dir / folder / f"{index + 1:04d}.jpg", jpg_quality=JPEG_QUALITY)
        emit({"event": "previews", "pages": doc.page_count})


def _page_needs_ocr(page: pymupdf.Page) -> bool:
    return bool(page.get_images(full=False)) or bool(page.get_drawings())


def ocr_dpi_for(page: pymupdf.Page, dpi: int) -> int:
    """Lower ``dpi`` for a page so large that rendering it would pass MAX_OCR_PIXELS (a photo whose page size
    comes from a 72 dpi header, a wall-size drawing); a letter page keeps the full resolution."""
    area_in2 = (page.rect.width / 72) * (page.rect.height / 72)
    if area_in2 * dpi * dpi <= MAX_OCR_PIXELS:
        return dpi
    return max(1, int((MAX_OCR_PIXELS / area_in2) ** 0.5))


def _render_for_ocr(page: pymupdf.Page, dpi: int, work: Path, number: int) -> Path | None:
    """Render the page in grey for Tesseract; return None for a blank page, which has nothing to read."""
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    samples = numpy.frombuffer(pixmap.samples_mv, dtype=numpy.uint8)
    if samples.min() == samples.max():  # numpy: Pixmap.is_unicolor takes about 0.25 s on a 300 dpi page
        return None
    path = work / f"page-{number:04d}.pgm"
    pixmap.save(path)
    return path


def _improper_redactions(page: pymupdf.Page, number: int, notes: list[str], drawings: bool) -> list[dict]:
    try:
        return [{"rect": list(found.rect), "text": found.text} for found in find_hidden_text(page, drawings)]
    except Exception as exc:  # a damaged drawing must not stop ingest, but the attorney must know it went unchecked
        notes.append(f"Page {number} could not be checked for improper redactions ({type(exc).__name__}).")
        return []


def extract(spec: Spec, emit: Emit) -> None:
    """Open the file and emit its pages' text in order (OCR where the text layer is not usable)."""
    out_dir = Path(spec.out_dir)  # made only if something is written there (open_document): most PDFs need none
    notes: list[str] = []
    if spec.readers_unsandboxed:
        notes.append("This file was read without the readers' sandbox: the operator set "
                     "LAWDESK_READERS_UNSANDBOXED (docs/security.md).")
    changes = WordChanges()
    doc = open_document(spec, out_dir, notes, changes)
    try:
        page_count = doc.page_count
    except Exception as exc:
        raise IngestFailure(f"The document's page tree could not be read ({exc}).") from exc
    if page_count == 0:
        raise IngestFailure("The document contains no pages.")
    start = {"event": "start", "pages": page_count, "notes": notes}
    if changes.any:
        start["word_changes"] = changes.as_json()
    emit(start)

    # Pages are emitted in order; OCR runs on a pool of Tesseract processes (one per core) while the next pages
    # are read and rendered. At most ocr_workers + 1 page images wait on disk at once.
    # The key of what each text-layer page is read from, so that a production's leak scan knows the page unchanged
    # without reading it again (matters.productions.bates.page_key); keyed from this very document.
    try:
        keys = page_keys(doc)
    except Exception:  # a document whose objects cannot be digested: its pages have no key and are read
        keys = [None] * page_count
    pending: list[tuple[dict, Future | None, Path | None]] = []
    with ExitStack() as stack:
        ocr_tools: list = []  # work folder and Tesseract threads, made for the first page that needs OCR

        def ocr_work() -> tuple[Path, ThreadPoolExecutor]:
            # Most filings need no OCR: making and removing the folder cost about 10 ms a file here.
            if not ocr_tools:
                ocr_tools.append(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lawdesk-ocr-"))))
                ocr_tools.append(stack.enter_context(ThreadPoolExecutor(max_workers=max(1, spec.ocr_workers))))
            return ocr_tools[0], ocr_tools[1]

        def flush(keep: int) -> None:
            while len(pending) > keep:
                record, future, image_path = pending.pop(0)
                if future is not None:
                    try:
                        result: OcrResult = future.result()
                    except SandboxUnavailable as exc:
                        raise IngestFailure(
                            f"Page {record['number']} needs OCR, which runs only inside a sandbox that keeps "
                            f"Tesseract away from other matters' files and the network, and {exc}. Ask the operator "
                            "to fix this, then reprocess.") from exc
                    record.update(
                        text=result.text,
                        text_key="",
                        source="ocr" if result.text.strip() else "none",
                        ocr_confidence=result.mean_confidence,
                        ocr_rotation_deg=result.rotation_deg,
                    )
                    image_path.unlink(missing_ok=True)
                layer = record.pop("short_layer", "")
                if layer and not record["text"].strip():
                    # OCR read nothing where the page's own text layer holds a few real characters: keep them.
                    record.update(text=layer, source="pdf", ocr_confidence=None)
                emit(record)

        for index in range(page_count):
            number = index + 1
            try:
                page = doc.load_page(index)
                # One reading gives the text and whether the redaction check must read the drawings (a dark fill,
                # or a dark stroke across text).
                raw_text, drawings = read_page(page)
                text = usable_text(raw_text)
            except Exception as exc:
                raise IngestFailure(f"Page {number} could not be read ({exc}).") from exc
            size = page.rect  # computed on each use: about 12 us
            record = {
                "event": "page",
                "number": number,
                "text": text,
                "source": "pdf" if text else "none",
                "ocr_confidence": None,
                "ocr_rotation_deg": 0,
                "width_pt": round(size.width, 2),
                "height_pt": round(size.height, 2),
                # Even a few characters (one account number under a box) are worth the check.
                "improper_redaction": (_improper_redactions(page, number, notes, drawings)
                                       if raw_text and not raw_text.isspace() else []),
                # Marks on the page that no text came from: a dropped text layer, or an image OCR is run on.
                "ink": not text and garbled_layer(raw_text),
                "short_layer": "" if text else short_layer(raw_text),
                "text_key": keys[index].hex() if index < len(keys) and keys[index] else "",
            }
            future = image_path = None
            if not text and _page_needs_ocr(page):
                dpi = ocr_dpi_for(page, spec.ocr_dpi)
                work, pool = ocr_work()
                image_path = _render_for_ocr(page, dpi, work, number)
                if image_path is not None:
                    record["ink"] = True
                    future = pool.submit(ocr_page_image, image_path, lang=spec.ocr_lang, dpi=dpi,
                                         sandboxed=not spec.readers_unsandboxed,
                                         hidden=(spec.data_dir,) if spec.data_dir else ())
            pending.append((record, future, image_path))
            flush(keep=max(1, spec.ocr_workers))
        flush(keep=0)
    emit({"event": "done", "notes": notes})


def _without_paths(reason: str, spec: Spec) -> str:
    """``reason`` as members may read it: a reader's error names the stored file's path, which shows the data
    directory's layout; say "the file" instead."""
    for path in (spec.source, spec.data_dir):
        if path:
            reason = reason.replace(str(path), "the file" if path == spec.source else "the data directory")
    return reason


def _classify(exc: BaseException) -> dict:
    message = str(exc)
    if isinstance(exc, MemoryError) or "malloc" in message or "out of memory" in message.lower():
        return {"event": "error", "status": "failed", "reason": "memory"}
    return {
        "event": "error",
        "status": "failed",
        "reason": f"The file could not be processed: the reader stopped on an error ({type(exc).__name__}: "
        f"{message[:300]}).",
    }


def run(spec: Spec, job: str, emit: Emit) -> int:
    """Run ``job`` ("ingest", "previews", "assemble" or "stamps") and emit its events; never raises. Returns an exit
    status."""
    # One Tesseract process per core does better than one process with several OpenMP threads (about 5x here).
    os.environ["OMP_THREAD_LIMIT"] = "1"
    try:
        if job in ("assemble", "stamps"):
            (assemble_images if job == "assemble" else read_stamps)(spec, emit)
        else:
            (render_previews if job == "previews" else extract)(spec, emit)
    except IngestFailure as failure:
        emit({"event": "error", "status": failure.status, "reason": _without_paths(failure.reason, spec)})
        return 2
    except BaseException as exc:  # a hostile file may break the parser in any way; report it, never hang
        error = _classify(exc)
        error["reason"] = _without_paths(error["reason"], spec)
        emit(error)
        return 3
    return 0


# mallopt parameter number of M_ARENA_MAX in glibc's malloc.h.
_M_ARENA_MAX = -8


def _share_one_malloc_arena() -> None:
    """Make every thread allocate from glibc's main arena. Each new thread otherwise reserves an arena of 64 MiB
    of address space on its first allocation; under RLIMIT_AS that reservation can fail inside the thread's own
    start, and ``Thread.start`` then waits forever for a thread that never runs (seen: an OCR pool hung)."""
    try:
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 1)
    except (OSError, AttributeError):
        pass  # not glibc: its allocator has no per-thread arenas to limit


def limit_process(memory_mb: int) -> None:
    """Make this process the leader of its own process group (a limit breach kills the group, Tesseract and
    LibreOffice included) and limit its address space, and that of every program it starts, to ``memory_mb`` MiB
    (RLIMIT_AS, hard and soft: a file cannot raise it again)."""
    os.setsid()
    _share_one_malloc_arena()
    # OCR threads need little stack; the default (the shell's 8 MiB) counts against the address-space limit.
    threading.stack_size(1024 * 1024)
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


if __name__ == "__main__":
    sys.exit(run(Spec(**json.loads(sys.argv[1])), sys.argv[2] if len(sys.argv) > 2 else "ingest", print_event))
