"""Decode a load file or extracted-text file as the producing party's software wrote it.

Each file is decoded on its own (a volume may mix them): a byte-order mark first (UTF-8, UTF-16 LE/BE,
UTF-32 LE/BE; the Unicode Standard, 23.8), then strict UTF-8, which no other encoding's non-ASCII text passes
by chance, then ``charset-normalizer``'s detector. Windows-1252 is what Concordance and most review platforms
write when they do not write Unicode, so a detection that Windows-1252 explains equally well is read as
Windows-1252. Whatever the detector is unsure of is marked ``certain=False`` for the import report.
"""

import codecs
from dataclasses import dataclass

from charset_normalizer import from_bytes
from charset_normalizer.md import mess_ratio

BOMS = [  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
]
FALLBACK = "cp1252"
# charset-normalizer's "mess" ratio (0 = clean text, 1 and more = noise): up to CLEAR_CHAOS a reading is taken
# as certain, up to MAX_CHAOS it is used but reported, and readings within TIE_CHAOS of each other tie.
CLEAR_CHAOS = 0.04
MAX_CHAOS = 0.2
TIE_CHAOS = 0.01


@dataclass(frozen=True)
class Decoded:
    """``text`` without BOM; ``encoding`` a Python codec name; ``certain`` False when the detector guessed."""

    text: str
    encoding: str
    certain: bool
    how: str  # "byte-order mark", "UTF-8", "detected", "fallback": said in the report


def decode_bytes(data: bytes) -> Decoded:
    """Decode ``data`` (see the module docstring). Never raises: undecodable bytes become U+FFFD and the result
    is then uncertain."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            body = data[len(bom):]
            try:
                return Decoded(body.decode(encoding), encoding, True, "byte-order mark")
            except UnicodeDecodeError:
                return Decoded(body.decode(encoding, errors="replace"), encoding, False, "byte-order mark")
    if data.count(0) * 4 > len(data):
        # No text file holds NULs, but UTF-16 without a mark holds one in every Latin character: read it as the
        # byte order the NULs' positions give, and report it, since nothing marked it.
        encoding = "utf-16-le" if data[1::2].count(0) > data[0::2].count(0) else "utf-16-be"
        return Decoded(data.decode(encoding, errors="replace"), encoding, False, "NUL bytes, no byte-order mark")
    try:
        return Decoded(data.decode("utf-8"), "utf-8", True, "UTF-8")
    except UnicodeDecodeError:
        pass
    # Concordance's structure (U+0014 separator, þ quote, ® line break) is not language: the detector would
    # take the control character for binary data and the quote for Icelandic.
    content = data.replace(b"\x14", b"\t")
    if b"\xfe\t\xfe" in content:
        content = content.replace(b"\xfe", b"").replace(b"\xae", b"\n")
    windows_mess = _windows_1252_mess(content)
    if windows_mess is not None and windows_mess <= CLEAR_CHAOS:
        return Decoded(data.decode(FALLBACK), FALLBACK, True, "Windows-1252")
    results = from_bytes(content)
    candidates = [match for match in results if match.chaos <= MAX_CHAOS]
    if windows_mess is not None and windows_mess <= MAX_CHAOS:
        candidates.append(_Candidate(FALLBACK, windows_mess))
    if not candidates:
        return Decoded(data.decode(FALLBACK, errors="replace"), FALLBACK, False, "fallback")
    # Load files come from Windows tools: a clean enough Windows code page wins over DOS and Mac ones, which
    # short texts often fit as well by chance; Windows-1252 wins a tie.
    windows = [match for match in candidates if match.encoding.startswith("cp125")]
    candidates = windows or candidates
    lowest = min(match.chaos for match in candidates)
    tied = [match for match in candidates if match.chaos <= lowest + TIE_CHAOS]
    chosen = next((m for m in tied if m.encoding == FALLBACK), tied[0])
    text = data.decode(chosen.encoding, errors="replace")
    certain = chosen.chaos <= CLEAR_CHAOS and "\ufffd" not in text
    return Decoded(text, chosen.encoding, certain, "detected")


@dataclass(frozen=True)
class _Candidate:
    encoding: str
    chaos: float


def _windows_1252_mess(data: bytes) -> float | None:
    """charset-normalizer's mess ratio of ``data`` read as Windows-1252; None if it has bytes Windows-1252
    leaves undefined."""
    try:
        return mess_ratio(data.decode(FALLBACK), 1.0)
    except UnicodeDecodeError:
        return None


def describe(name: str, decoded: Decoded) -> str:
    """The report line for a file whose decoding is uncertain."""
    return (f"{name}: its character encoding is uncertain (read as {decoded.encoding}, {decoded.how}); names and "
            "text with accented or non-Latin letters may be wrong. Ask the producing party for UTF-8 or UTF-16 "
            "load files.")
