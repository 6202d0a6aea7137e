"""Convert an office document (Word and any other type LibreOffice reads) to PDF, inside the sandbox.

Every conversion, whatever the input type, runs LibreOffice through :func:`matters.exhibits.ingest.sandbox.sandboxed`:
it reads one copy of the input and writes one empty folder, with no data directory and no network. When the
sandbox cannot start, the conversion is refused with the reason; it never runs unsandboxed. In an ingest child
that already runs inside the readers' sandbox (:mod:`matters.exhibits.ingest.reader_sandbox`), where bubblewrap
cannot start a second one, LibreOffice runs as it is, walled in by that sandbox, with a profile of its own. OOXML
packages (DOCX) are first reduced to what lies inside them (:mod:`matters.exhibits.ingest.docx_safety`).

This module imports nothing from Django: the ingest child calls it.
"""

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import sandbox
from .docx_revisions import WordChanges
from .docx_safety import sanitize_docx

CONVERT_TIMEOUT_S = 300
# Types whose package is OOXML (a ZIP of XML parts with relationships) and gets the allowlist first.
_OOXML_SUFFIXES = (".docx", ".docm", ".dotx")


class ConversionRefused(Exception):
    """The document was not converted; the message is written for an attorney."""


def office_to_pdf(source: Path, target: Path, *, suffix: str, description: str, hidden: Sequence[str] = (),
                  changes: WordChanges | None = None, pdf_options: str = "") -> int:
    """Convert the document at ``source`` (its type told by ``suffix``, e.g. ``.docx``; ``description`` names it
    for people, e.g. "Word document") to the PDF ``target``; return how many outside links were cut first.

    ``hidden``: host folders the sandbox must not show (the data directory). ``changes``: where a Word file's
    tracked changes, comments and hidden text go; the file converted reads with its changes accepted. Raises
    ConversionRefused when LibreOffice is missing, the sandbox cannot start, the package is damaged, or the
    conversion fails or takes longer than CONVERT_TIMEOUT_S seconds. ``pdf_options``: options of LibreOffice's
    PDF export filter as JSON (LibreOffice 7.4 and later: ``{"ExportBookmarksToPDFDestination": {"type":
    "boolean", "value": "true"}}``), none by default.
    """
    convert_to = f"pdf:writer_pdf_Export:{pdf_options}" if pdf_options else "pdf"
    return office_convert(source, target, suffix=suffix, description=description, hidden=hidden, changes=changes,
                          convert_to=convert_to, produced_suffix=".pdf")


def office_convert(source: Path, target: Path, *, suffix: str, description: str, hidden: Sequence[str] = (),
                   changes: WordChanges | None = None, convert_to: str, produced_suffix: str) -> int:
    """Convert the document at ``source`` with LibreOffice's ``--convert-to convert_to`` (``"pdf"``,
    ``"xlsx:Calc MS Excel 2007 XML"``) to ``target``, the file LibreOffice names ``document{produced_suffix}``;
    otherwise as :func:`office_to_pdf`, which raises the same ConversionRefused."""
    produced_name = "PDF" if produced_suffix == ".pdf" else produced_suffix[1:].upper()
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        raise ConversionRefused(
            f"A {description} is converted with LibreOffice, which is not installed on this server. "
            "Ask the operator to install it (Debian package libreoffice-writer-nogui), then reprocess."
        )
    try:
        if not sandbox.inside():
            sandbox.probe()
    except sandbox.SandboxUnavailable as exc:
        raise ConversionRefused(
            f"The {description} was not converted: LibreOffice runs only inside a sandbox that keeps it away from "
            f"other matters' files and the network, and {exc}. Ask the operator to fix this, then reprocess."
        ) from exc
    with tempfile.TemporaryDirectory(prefix="lawdesk-convert-") as work:
        work_path = Path(work)
        input_path = work_path / f"document{suffix}"
        output_dir = work_path / "out"
        output_dir.mkdir()
        cut = 0
        if suffix.lower() in _OOXML_SUFFIXES:
            try:
                cut = sanitize_docx(source, input_path, changes)
            except Exception as exc:  # zipfile and lxml raise several types for a damaged package
                raise ConversionRefused(f"The {description} is damaged and could not be read ({exc}).") from exc
        else:
            shutil.copyfile(source, input_path)
        mounts = sandbox.Mounts(input_path, output_dir)
        command = [
            soffice,
            f"-env:UserInstallation=file://{sandbox.SANDBOX_HOME}/profile",  # private profile: conversions run at once
            "--headless",
            "--norestore",
            "--convert-to",
            convert_to,
            "--outdir",
            sandbox.SANDBOX_OUTPUT_DIR,
            mounts.sandbox_input,
        ]
        try:
            argv = sandbox.sandboxed(command, mounts, hidden=hidden) if not sandbox.inside() else \
                sandbox.inside_command(command, mounts)
        except sandbox.SandboxUnavailable as exc:
            raise ConversionRefused(f"The {description} was not converted: {exc}.") from exc
        try:
            subprocess.run(argv, capture_output=True, timeout=CONVERT_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ConversionRefused(
                f"The {description} took longer than {CONVERT_TIMEOUT_S // 60} minutes to convert to {produced_name}."
            ) from exc
        produced = output_dir / f"document{produced_suffix}"
        if not produced.is_file() or produced.is_symlink() or produced.stat().st_size == 0:
            raise ConversionRefused(f"The {description} could not be converted to {produced_name}: it may be "
                                    "damaged.")
        shutil.copyfile(produced, target)
        return cut
