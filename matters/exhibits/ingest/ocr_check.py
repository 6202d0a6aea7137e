"""Start-up check that OCR can run: Tesseract installed, with every language of ``LAWDESK_OCR_LANG`` and the
orientation-and-script-detection data (``osd``) that ``--psm 1`` needs (:mod:`matters.exhibits.ingest.ocr`).

Without it every scan fails later, one file at a time, with Tesseract's own error. ``make run`` and a worker's
start call :func:`ocr_problems` and print what to install. Debian/Ubuntu ship each language as the package
``tesseract-ocr-<code>`` (``tesseract-ocr-osd`` for OSD); the codes are Tesseract's traineddata names.
Django-free.
"""

import shutil
import subprocess


def installed_languages(tesseract: str = "tesseract", timeout_s: int = 30) -> set[str] | None:
    """Languages ``tesseract --list-langs`` reports, or None when Tesseract is not installed or does not answer."""
    program = shutil.which(tesseract)
    if program is None:
        return None
    try:
        result = subprocess.run([program, "--list-langs"], capture_output=True, text=True, timeout=timeout_s,
                                check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (result.stdout + "\n" + result.stderr).splitlines()
    # The first line is a header ("List of available languages in "/usr/share/...": N); each other line a code.
    return {line.strip() for line in lines if line.strip() and " " not in line.strip()}


def ocr_problems(lang: str, tesseract: str = "tesseract") -> list[str]:
    """What stops OCR with ``lang`` (Tesseract's ``-l`` value, languages joined by ``+``), each a sentence that
    says what to install; empty when OCR can run."""
    wanted = [code for code in lang.split("+") if code] + ["osd"]
    installed = installed_languages(tesseract)
    if installed is None:
        packages = " ".join(["tesseract-ocr", *(f"tesseract-ocr-{code.replace('_', '-').lower()}" for code in wanted)])
        return [f"Tesseract is not installed, so scanned pages cannot be read (OCR). Install it: apt-get install "
                f"{packages}"]
    missing = [code for code in dict.fromkeys(wanted) if code not in installed]
    if not missing:
        return []
    packages = " ".join(f"tesseract-ocr-{code.replace('_', '-').lower()}" for code in missing)
    names = ", ".join(missing)
    return [f"Tesseract lacks the language data {names} (LAWDESK_OCR_LANG={lang}; osd is needed to find a page's "
            f"orientation), so every scan would fail. Install it: apt-get install {packages}"]
