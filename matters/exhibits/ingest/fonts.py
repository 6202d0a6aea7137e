"""Which fonts a converted word-processing document was typeset in, and whether Word's pagination can hold.

LibreOffice typesets a Word document with the fonts installed here. A metric-compatible font (same advance width
for every character) gives the same line and page breaks as Word; any other substitute moves them, and page
numbers, pin cites and Bates numbers follow pagination. The metric-compatible families are fontconfig's
``30-metric-aliases.conf`` (Liberation for Times New Roman, Arial and Courier New; Tinos/Arimo/Cousine) and
LibreOffice's replacement table (``VCL.xcu``: Carlito for Calibri, Caladea for Cambria). What LibreOffice really
used is read from the PDF it wrote: text set in fontconfig's fallback family (what ``fc-match`` gives for a name
it does not know) means a font the document asks for is missing. This module imports nothing from Django.
"""

import re
import shutil
import subprocess
import zipfile
from functools import cache
from pathlib import Path

import pymupdf

from ..sniff import WORD_PROCESSING, sniff

# Word's fonts -> families with the same metrics (fontconfig 30-metric-aliases.conf; LibreOffice VCL.xcu).
METRIC_COMPATIBLE = {
    "times new roman": {"liberation serif", "tinos", "thorndale", "thorndale amt"},
    "times": {"liberation serif", "tinos", "thorndale"},
    "arial": {"liberation sans", "arimo", "albany", "albany amt"},
    "helvetica": {"liberation sans", "arimo", "albany"},
    "courier new": {"liberation mono", "cousine", "cumberland", "cumberland amt"},
    "courier": {"liberation mono", "cousine", "cumberland"},
    "arial narrow": {"liberation sans narrow"},
    "calibri": {"carlito"},
    "cambria": {"caladea"},
}
# Symbol fonts set no running text; their substitutes do not move line breaks.
_IGNORED = {"symbol", "wingdings", "webdings", "opensymbol", "marlett"}
_SUBSET = re.compile(r"^[A-Z]{6}\+")
_STYLE = re.compile(r"[-,](Bold|Italic|Oblique|BoldItalic|BoldOblique|Regular|Roman|Book)+$", re.IGNORECASE)


def word_processing_suffix(source: str) -> str:
    """Return the suffix LibreOffice is handed for ``source`` (``.doc``, ``.wpd``, ``.rtf``, ``.odt``), judged
    by content as the upload was; raise ValueError for anything else."""
    path = Path(source)
    with open(path, "rb") as stream:
        head = stream.read(8192)
    found = sniff(path, head)
    if found.mime_type not in WORD_PROCESSING:
        raise ValueError(f"not a word-processing document LibreOffice converts ({found.description})")
    return WORD_PROCESSING[found.mime_type][0]


def document_fonts(path: Path, suffix: str | None = None) -> list[str] | None:
    """Return the font families ``path`` names for its text (DOCX ``w:rFonts``, ODT ``svg:font-family``, RTF
    font table), or None for formats whose fonts are not read here (DOC, WPD). ``suffix`` (``.docx`` ...) gives
    the format of a file stored without one, as originals are; by default the path's own."""
    suffix = (suffix or path.suffix).lower()
    names: list[str] = []
    if suffix == ".docx":
        with zipfile.ZipFile(path) as package:
            for member in package.namelist():
                if member.startswith("word/") and member.endswith(".xml"):
                    xml = package.read(member).decode("utf-8", "replace")
                    names += re.findall(r'w:(?:ascii|hAnsi)="([^"]+)"', xml)
    elif suffix == ".odt":
        with zipfile.ZipFile(path) as package:
            for member in ("content.xml", "styles.xml"):
                if member in package.namelist():
                    xml = package.read(member).decode("utf-8", "replace")
                    names += [n.strip("'\"") for n in re.findall(r'svg:font-family="([^"]+)"', xml)]
    elif suffix == ".rtf":
        text = path.read_bytes()[:2_000_000].decode("latin-1")
        if table := re.search(r"\{\\fonttbl(.*?)\}\s*(?:\{\\colortbl|\{\\\*?\\?stylesheet|\\)", text, re.DOTALL):
            names += [n.strip() for n in re.findall(r"\\f\d+[^ ;{}]*(?:\\[a-z]+-?\d* ?)*\s*([^;{}\\]+);",
                                                     table.group(1))]
    else:
        return None
    seen = {}
    for name in names:
        name = name.replace("&amp;", "&").strip()
        if name and name.lower() not in _IGNORED:
            seen.setdefault(name.lower(), name)
    return list(seen.values())


@cache
def _fc_family(name: str) -> str:
    """The family fontconfig gives for ``name`` ('' without fc-match)."""
    fc_match = shutil.which("fc-match")
    if fc_match is None:
        return ""
    done = subprocess.run([fc_match, "-f", "%{family[0]}", name], capture_output=True, text=True, timeout=30)
    return done.stdout.strip()


def _key(family: str) -> str:
    # PDF base fonts drop the spaces of the family name (``DejaVuSerif``, ``LiberationSerif-Bold``).
    return re.sub(r"[^a-z0-9]", "", family.lower())


def _fallback_families() -> dict[str, str]:
    """The families fontconfig falls back to for names it does not know, serif, sans and monospace, by key."""
    names = ("LawDesk No Such Font", "serif", "sans-serif", "monospace")
    return {_key(family): family for family in map(_fc_family, names) if family}


def pdf_families(pdf: Path) -> set[str]:
    """Return the font families a PDF's text is set in, as keys (``ABCDEF+LiberationSerif-Bold`` ->
    ``liberationserif``)."""
    families = set()
    with pymupdf.open(pdf) as doc:
        for page in doc:
            for font in page.get_fonts():
                families.add(_key(_STYLE.sub("", _SUBSET.sub("", font[3]))))
    return families


def unmatched_fonts(requested: list[str]) -> list[str]:
    """Return the fonts of ``requested`` that are neither installed nor have a metric-compatible family
    installed."""
    missing = []
    for name in requested:
        got = _fc_family(name).lower()
        if got == name.lower() or got in METRIC_COMPATIBLE.get(name.lower(), set()):
            continue
        missing.append(name)
    return missing


def font_note(requested: list[str] | None, pdf: Path) -> str:
    """Return a note for the exhibit page when ``pdf`` (LibreOffice's output) sets text in a fallback font the
    document did not ask for, naming the fonts missing here where the format's fonts are read; else ''."""
    if shutil.which("fc-match") is None:
        return ("The fonts of this document could not be checked (fontconfig's fc-match is not installed): its "
                "pages may break differently than in Word.")
    asked = {_key(name) for name in requested or []}
    fallback_names = _fallback_families()
    fallbacks = {fallback_names[key] for key in (pdf_families(pdf) & set(fallback_names)) - asked}
    if not fallbacks:
        return ""
    missing = unmatched_fonts(requested or [])
    named = f"It names fonts not installed here, with no metric-compatible substitute: {', '.join(missing)}. " \
        if missing else "It uses fonts not installed here, with no metric-compatible substitute. "
    used = ", ".join(sorted(fallbacks))
    return (f"{named}LibreOffice set that text in {used}, so pages may break differently than in Word: page "
            "numbers and pin cites can differ from the sender's printout.")
