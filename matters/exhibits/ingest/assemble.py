"""Read a received production's files inside the limited ingest child: assemble a volume's page images into one
PDF, and read the Bates numbers stamped on a produced PDF's pages.

A production volume lists page images in its OPT load file; they come from the other side and are decoded here,
in the child process that :func:`matters.exhibits.ingest.runner.run_child` starts with an address-space and a wall-clock
limit, never in the worker. Each file's type is judged by its content (:func:`matters.exhibits.sniff.sniff`), not by
its extension: a page image must be a PDF, TIFF, JPEG or PNG, and past the pixel limit it is refused before any
decoder allocates it. Events: ``{"event": "assembled", "found": [whether each asked page exists], "page_counts":
{file: pages it holds}, "used": {file: pages of it taken}}`` with the PDF written to ``out_dir/assembled.pdf``,
or an ``error`` event whose reason names the file. The "stamps" job reads ``spec.source`` (a PDF) and
``out_dir/ocr_texts.json`` (the OCR text of each page, "" where it has a text layer) and emits
``{"event": "stamps", "numbers": [Bates number or null, per page]}``.

This module imports nothing from Django.
"""

import json
from pathlib import Path

import pymupdf

from matters.incoming.stamped import bates_on_page

from ..sniff import sniff
from .images import image_pdf_bytes
from .spec import Emit, IngestFailure, Spec, _check_image_pixels

ASSEMBLED_NAME = "assembled.pdf"
OCR_TEXTS_NAME = "ocr_texts.json"
HEAD_BYTES = 8192


def _judge(path: Path, spec: Spec, label: str) -> str:
    """Return "pdf" or "image" for a page file (``label``: its name in messages), or raise IngestFailure naming
    what it really is."""
    with open(path, "rb") as stream:
        head = stream.read(HEAD_BYTES)
    if not head:
        raise IngestFailure(f"The page image {label} is empty (0 bytes).")
    found = sniff(path, head)
    if found.kind not in ("pdf", "image"):
        raise IngestFailure(
            f"The file {label} is listed as a page image but its content is a {found.description} "
            f"({found.mime_type}), not a PDF, TIFF, JPEG or PNG; the document was not imported."
        )
    if found.kind == "image":
        try:
            _check_image_pixels(str(path), spec.max_image_pixels)
        except IngestFailure as failure:
            raise IngestFailure(f"The page image {label}: {failure.reason}") from failure
    return found.kind


def _open_as_pdf(path: Path, spec: Spec, label: str) -> pymupdf.Document:
    kind = _judge(path, spec, label)
    try:
        if kind == "image":  # every frame as it shows over white (.images)
            return pymupdf.open("pdf", image_pdf_bytes(path))
        with pymupdf.open(path, filetype="pdf") as opened:
            return pymupdf.open("pdf", opened.tobytes())
    except Exception as exc:  # PyMuPDF raises several types for damaged files
        raise IngestFailure(f"The page image {label} could not be read: it is damaged ({exc}).") from exc


def assemble_images(spec: Spec, emit: Emit) -> None:
    """Join the pages ``spec.images[k]``, page ``spec.image_pages[k]`` (0-based) into ``out_dir/assembled.pdf``,
    in order; a page past the end of its file is left out and marked not found. Raises IngestFailure for a file
    that is not a page image or cannot be read."""
    out_dir = Path(spec.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    combined = pymupdf.open()
    opened: dict[str, pymupdf.Document] = {}
    used: dict[str, set[int]] = {}
    found = []
    # Results are keyed by the files the worker named; the child may read them as descriptors (reader_sandbox).
    sources = dict(zip(spec.images, spec.image_sources or spec.images))
    try:
        for name, index in zip(spec.images, spec.image_pages):
            if name not in opened:
                opened[name] = _open_as_pdf(Path(name), spec, Path(sources[name]).name)
            source = opened[name]
            if index >= source.page_count:
                found.append(False)
                continue
            combined.insert_pdf(source, from_page=index, to_page=index)
            used.setdefault(name, set()).add(index)
            found.append(True)
        combined.save(out_dir / ASSEMBLED_NAME, garbage=2, deflate=True)
        page_counts = {sources[name]: source.page_count for name, source in opened.items()}
    finally:
        for source in opened.values():
            source.close()
    emit({"event": "assembled", "found": found, "page_counts": page_counts,
          "used": {sources[name]: len(used.get(name, ())) for name in opened}})


def read_stamps(spec: Spec, emit: Emit) -> None:
    """Emit the Bates number stamped at the top or bottom edge of each page of the PDF ``spec.source``."""
    ocr_texts = json.loads((Path(spec.out_dir) / OCR_TEXTS_NAME).read_text())
    try:
        with pymupdf.open(spec.source, filetype="pdf") as doc:
            numbers = [bates_on_page(page, ocr_texts[index] if index < len(ocr_texts) else "")
                       for index, page in enumerate(doc)]
    except Exception as exc:  # PyMuPDF raises several types for damaged files
        raise IngestFailure(f"The Bates numbers could not be read from the PDF ({exc}).") from exc
    emit({"event": "stamps", "numbers": numbers})
