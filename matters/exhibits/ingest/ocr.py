"""OCR one page image with Tesseract, orientation included, inside the readers' sandbox.

Tesseract parses an image made from an untrusted file; it runs in the bubblewrap sandbox of
:mod:`matters.exhibits.ingest.sandbox` (no network, no data directory, a fresh ``/tmp``; it sees its one page image
and one empty output folder). When the sandbox cannot start, OCR is refused with the reason
(:class:`~matters.exhibits.ingest.sandbox.SandboxUnavailable`); only an explicit ``sandbox=False`` (the
operator's ``LAWDESK_READERS_UNSANDBOXED=1``, docs/security.md) runs it without one.

One Tesseract run with ``--psm 1`` (automatic page segmentation with orientation and script detection) writes
three outputs: ``txt`` (the text in Tesseract's reading order), ``tsv`` (per-word confidence) and ``hocr`` (per-line
``textangle``, the orientation that OSD found and corrected). Running OSD as its own pass would load the OSD
model twice per page for the same answer.
"""

import csv
import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytesseract

from . import sandbox

_LINE_TITLE = re.compile(r"class=['\"]ocr_(?:line|caption|header|textfloat)['\"][^>]*title=['\"]([^'\"]*)['\"]")
_TEXTANGLE = re.compile(r"textangle (\d+)")


@dataclass(frozen=True)
class OcrResult:
    """Text of one page; mean word confidence 0-100 (None when no word was found); clockwise rotation in degrees."""

    text: str
    mean_confidence: float | None
    rotation_deg: int


def _mean_confidence(tsv_text: str) -> float | None:
    confidences = []
    for row in csv.DictReader(tsv_text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE):
        if row.get("level") == "5" and (row.get("text") or "").strip():
            try:
                value = float(row["conf"])
            except (TypeError, ValueError):
                continue
            if value >= 0:
                confidences.append(value)
    return round(sum(confidences) / len(confidences), 2) if confidences else None


def _rotation(hocr_text: str) -> int:
    """Return the page's dominant text angle from hOCR lines: hOCR's textangle is counter-clockwise degrees, and
    an upright line carries none, so it counts as 0 (a column of brackets read sideways must not turn the page)."""
    angles = Counter()
    for title in _LINE_TITLE.findall(hocr_text):
        found = _TEXTANGLE.search(title)
        angles[int(found.group(1)) if found else 0] += 1
    if not angles:
        return 0
    counter_clockwise = angles.most_common(1)[0][0]
    return (360 - counter_clockwise) % 360


def _tesseract(image: str, base: str, lang: str, dpi: int) -> list[str]:
    return ["tesseract", image, base, "-l", lang, "--psm", "1", "--dpi", str(int(dpi)),
            "-c", "tessedit_create_tsv=1", "-c", "tessedit_create_hocr=1", "txt"]


def _run(argv: list[str], timeout_s: int) -> None:
    try:
        result = subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise pytesseract.TesseractError(-1, f"Tesseract took longer than {timeout_s} seconds") from exc
    except OSError as exc:
        raise pytesseract.TesseractError(-1, f"Tesseract could not start ({exc})") from exc
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()[-500:]
        if message.startswith("bwrap:"):
            raise sandbox.SandboxUnavailable(f"the sandbox (bubblewrap) could not start on this server ({message})")
        raise pytesseract.TesseractError(result.returncode, message)


def ocr_page_image(image_path: Path, *, lang: str = "eng", dpi: int = 300, timeout_s: int = 600,
                   sandboxed: bool = True, hidden: Sequence[str] = ()) -> OcrResult:
    """OCR the image at ``image_path`` (rendered at ``dpi``) in the sandbox (``hidden``: host folders, the data
    directory, that must not lie in what it shares). Raises pytesseract.TesseractError when Tesseract fails, and
    SandboxUnavailable when the sandbox cannot start; ``sandboxed=False`` runs Tesseract without one."""
    with tempfile.TemporaryDirectory(prefix="lawdesk-tess-") as work:
        base = Path(work) / "out"
        if sandboxed:
            base.mkdir()
            mounts = sandbox.Mounts(Path(image_path), base)
            command = _tesseract(mounts.sandbox_input, f"{sandbox.SANDBOX_OUTPUT_DIR}/out", lang, dpi)
            argv = sandbox.inside_command(command, mounts) if sandbox.inside() else \
                sandbox.sandboxed(command, mounts, hidden=hidden)
            base = base / "out"
        else:
            argv = _tesseract(str(image_path), str(base), lang, dpi)
        _run(argv, timeout_s)
        text = base.with_suffix(".txt").read_text(encoding="utf-8")
        confidence = _mean_confidence(base.with_suffix(".tsv").read_text(encoding="utf-8"))
        rotation = _rotation(base.with_suffix(".hocr").read_text(encoding="utf-8"))
    return OcrResult(
        text=text.replace("\x0c", "").replace("\x00", "").strip(), mean_confidence=confidence, rotation_deg=rotation
    )
