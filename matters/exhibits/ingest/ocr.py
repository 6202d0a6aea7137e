"""OCR one page image with Tesseract (through pytesseract), orientation included.

One Tesseract run with ``--psm 1`` (automatic page segmentation with orientation and script detection) writes
three outputs: ``txt`` (the text in Tesseract's reading order), ``tsv`` (per-word confidence) and ``hocr`` (per-line
``textangle``, the orientation that OSD found and corrected). Running OSD as its own pass would load the OSD
model twice per page for the same answer.
"""

import csv
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytesseract

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


def ocr_page_image(image_path: Path, *, lang: str = "eng", dpi: int = 300, timeout_s: int = 600) -> OcrResult:
    """OCR the image at ``image_path`` (rendered at ``dpi``). Raises pytesseract.TesseractError on failure."""
    with tempfile.TemporaryDirectory(prefix="lawdesk-tess-") as work:
        base = Path(work) / "out"
        pytesseract.pytesseract.run_tesseract(
            str(image_path),
            str(base),
            extension="txt",
            lang=lang,
            config=f"--psm 1 --dpi {int(dpi)} -c tessedit_create_tsv=1 -c tessedit_create_hocr=1",
            timeout=timeout_s,
        )
        text = base.with_suffix(".txt").read_text(encoding="utf-8")
        confidence = _mean_confidence(base.with_suffix(".tsv").read_text(encoding="utf-8"))
        rotation = _rotation(base.with_suffix(".hocr").read_text(encoding="utf-8"))
    return OcrResult(
        text=text.replace("\x0c", "").replace("\x00", "").strip(), mean_confidence=confidence, rotation_deg=rotation
    )
