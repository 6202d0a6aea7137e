"""Open the file of a child's job as a PDF: office documents converted by LibreOffice in its sandbox, images and
damaged or encrypted PDFs saved as the display PDF that page images are made from."""

import tempfile
from pathlib import Path

import pymupdf

from . import office_crypto
from .convert import ConversionRefused, office_to_pdf
from .docx_revisions import WordChanges
from .fonts import document_fonts, font_note, word_processing_suffix
from .images import image_pdf_bytes
from .sheets import workbook_to_pdf
from .spec import IngestFailure, Spec, _check_image_pixels

# Exhibit kinds LibreOffice converts: kind -> (file suffix it expects, what people call the file); a suffix of
# None is judged from the content (DOC, WPD, RTF, ODT). Every one goes through the same sandboxed conversion
# (matters.exhibits.ingest.convert.office_to_pdf); only DOCX can have its outside links cut first, which is why the
# conversion never runs outside the sandbox.
# Exhibit kinds whose display PDF the worker writes before the child runs.
EMAIL_KINDS = ("email", "mailbox")
OFFICE_KINDS = {"docx": (".docx", "Word document"), "document": (None, "document")}


def _office_to_pdf(spec: Spec, out_dir: Path, notes: list[str], changes: WordChanges) -> Path:
    """Convert an office document with LibreOffice in its sandbox; see docs/architecture.md ("Choices") for why
    LibreOffice. The file converted reads with tracked changes accepted and comments and hidden text out; what
    was taken out is recorded in ``changes``. Fonts the document names that have no metric-compatible font
    installed are added to ``notes`` (:mod:`.fonts`). Raises IngestFailure when the conversion is refused or
    comes out blank."""
    suffix, description = OFFICE_KINDS[spec.kind]
    if suffix is None:
        try:
            suffix = word_processing_suffix(spec.source)
        except (ValueError, OSError) as exc:
            raise IngestFailure(f"The document could not be read as a word-processing file ({exc}).") from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "display.pdf"
    hidden = (spec.data_dir,) if spec.data_dir else ()
    with tempfile.TemporaryDirectory(prefix="lawdesk-decrypt-") as work:
        source = Path(spec.source)
        if office_crypto.encrypted(source):
            try:
                source, suffix = _decrypted(spec, Path(work), suffix, description, notes)
            except _WorkbookInside as inside:
                # An encrypted OOXML package is accepted as a Word document before anyone knows what it holds.
                notes.append("Password-protected Excel workbook opened with the password given; the original is "
                             "kept as uploaded, encrypted.")
                return workbook_to_pdf(spec, out_dir, notes, source=inside.path, suffix=".xlsx")
        try:
            cut = office_to_pdf(source, target, suffix=suffix, description=description, hidden=hidden,
                               changes=changes)
        except ConversionRefused as exc:
            raise IngestFailure(str(exc)) from exc
        try:
            requested = document_fonts(source, suffix)
        except Exception:  # zipfile and lxml raise several types; the conversion itself already succeeded
            requested = None
    if _blank(target):
        # LibreOffice opens what it cannot parse as an empty document rather than failing; an empty
        # upload is as unreadable as a damaged one, and saying "ready" would hide that.
        raise IngestFailure(
            f"The {description} converted to blank pages: LibreOffice could read no text or images from it, so it "
            "is damaged, empty, or in a version of its format LibreOffice cannot read (it could not be "
            "converted to PDF). Ask the sender for a PDF or a DOCX."
        )
    if cut:
        notes.append(
            f"{cut} link(s) to files or web addresses outside the {description} were removed before "
            "conversion; linked content is not shown."
        )
    if note := font_note(requested, target):
        notes.append(note)
    return target


def _decrypted(spec: Spec, work: Path, suffix: str, description: str, notes: list[str]) -> tuple[Path, str]:
    """Decrypt a password-protected Office file into ``work`` with the password given on the exhibit page;
    return the decrypted copy and the suffix it converts with. Raises IngestFailure (``needs_password`` when the
    password is missing or wrong; ``failed`` when the package is not a Word document)."""
    password = Path(spec.password_file).read_text() if spec.password_file else ""
    decrypted = work / f"decrypted{suffix}"
    holds = office_crypto.decrypt(Path(spec.source), decrypted, password, description)
    if holds == "Excel workbook":
        raise _WorkbookInside(decrypted)
    if holds and holds != "Word document":
        article = "an" if holds[0] in "AEIOU" else "a"
        raise IngestFailure(f"The password-protected file is {article} {holds}, not a Word document; it opened with "
                            "the password given, but only Word, WordPerfect, RTF and OpenDocument text files are "
                            "converted. Save it as a PDF and upload that.")
    if holds == "Word document" and suffix != ".docx":
        decrypted = decrypted.rename(work / "decrypted.docx")
        suffix = ".docx"
    notes.append(f"Password-protected {description} opened with the password given; the original is kept as "
                 "uploaded, encrypted.")
    return decrypted, suffix


class _WorkbookInside(Exception):
    """A password-protected Office file turned out, once decrypted to ``path``, to be an Excel workbook."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


def _blank(pdf: Path) -> bool:
    """True when no page of ``pdf`` has text, an image or a drawing."""
    with pymupdf.open(pdf) as doc:
        return not any(page.get_text().strip() or page.get_images() or page.get_drawings() for page in doc)


def open_document(spec: Spec, out_dir: Path, notes: list[str],
                  changes: WordChanges | None = None) -> pymupdf.Document:
    """Open the upload as a PDF document, converting images and Word files; raise IngestFailure if impossible.
    A Word file's tracked changes, comments and hidden text are recorded in ``changes``. ``out_dir`` is made
    only when a display PDF is written there."""
    if spec.kind == "image":
        _check_image_pixels(spec.source, spec.max_image_pixels)
        try:
            pdf_bytes = image_pdf_bytes(Path(spec.source), notes)
        except Exception as exc:
            raise IngestFailure(f"The image could not be read: {exc}.") from exc
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / "display.pdf"
        target.write_bytes(pdf_bytes)
        return pymupdf.open(target)
    if spec.kind in EMAIL_KINDS:
        # The worker laid the message (or the mailbox's listing) out as the display PDF before this child ran
        # (matters.email.intake); the original itself is never opened here.
        try:
            return pymupdf.open(display_source(spec), filetype="pdf")
        except Exception as exc:
            raise IngestFailure("The message's pages could not be opened; process it again.") from exc
    if spec.kind == "workbook":
        return pymupdf.open(workbook_to_pdf(spec, out_dir, notes))
    if spec.kind in OFFICE_KINDS:
        changes = changes if changes is not None else WordChanges()
        return pymupdf.open(_office_to_pdf(spec, out_dir, notes, changes))
    try:
        doc = pymupdf.open(spec.source, filetype="pdf")
    except Exception as exc:
        raise IngestFailure(
            "The PDF is damaged beyond repair: no page could be read from it. Ask the sender for a new copy."
        ) from exc
    if doc.needs_pass:
        password = Path(spec.password_file).read_text() if spec.password_file else ""
        if not password:
            raise IngestFailure(
                "The PDF is password-protected. Enter its password on the exhibit page to process it.",
                status="needs_password",
            )
        if not doc.authenticate(password):
            raise IngestFailure(
                "The password was not accepted for this PDF. Enter the correct password to process it.",
                status="needs_password",
            )
        notes.append("Password-protected PDF opened with the password given; a decrypted copy is kept for display.")
        return _save_display(doc, out_dir)
    if doc.is_encrypted or doc.metadata.get("encryption"):
        notes.append("The PDF carries permission restrictions (owner password only); its content was read normally.")
    if doc.page_count == 0:
        raise IngestFailure("The PDF contains no pages.")
    if doc.is_repaired:
        notes.append("The PDF's cross-reference table was damaged and was repaired when opened.")
        return _save_display(doc, out_dir)
    return doc


def _save_display(doc: pymupdf.Document, out_dir: Path) -> pymupdf.Document:
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "display.pdf"
    doc.save(target, garbage=1, encryption=pymupdf.PDF_ENCRYPT_NONE)
    doc.close()
    return pymupdf.open(target)


def display_source(spec: Spec) -> str:
    """The PDF that viewers and later steps read: the derived display.pdf if ingest made one, else the original.
    In the readers' sandbox it comes as ``spec.display`` (a descriptor's path): the child's output folder is a fresh
    one and holds only what it writes."""
    if spec.display:
        return spec.display
    display = Path(spec.out_dir) / "display.pdf"
    return str(display) if display.exists() else spec.source
