"""Read Concordance DAT and Opticon OPT load files as producing parties write them.

DAT: a header row, fields quoted with þ (U+00FE) and separated by U+0014, UTF-8 (with or without BOM) or
Windows-1252. Field names vary by vendor, so they are matched case-insensitively against known aliases and the
result is shown to the user to confirm. OPT: ``BATES,VOLUME,IMAGE PATH,DOC BREAK,FOLDER BREAK,BOX BREAK,PAGES``.
"""

import re
from dataclasses import dataclass, field

QUOTE = "\u00fe"
SEPARATOR = "\u0014"
FIELD_ALIASES = {
    "begbates": ["begbates", "begdoc", "begno", "bates begin", "begin bates", "beginbates", "prodbeg", "begbates#"],
    "endbates": ["endbates", "enddoc", "endno", "bates end", "end bates", "prodend"],
    "textpath": ["textpath", "text path", "textlink", "text", "ocrpath", "extracted text"],
    "nativepath": ["nativepath", "native path", "nativelink", "native", "filepath"],
    "title": ["title", "doctitle", "document title", "subject", "filename", "file name"],
}
_BATES = re.compile(r"^(?P<prefix>.*?)(?P<number>\d+)(?P<suffix>[^\d]*)$")


def decode(data: bytes) -> str:
    """UTF-8 (a BOM is dropped) if it decodes, else Windows-1252, which decodes any byte string."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def parse_dat(data: bytes) -> tuple[list[str], list[list[str]]]:
    """Return (header, rows) of a Concordance DAT. Raises ValueError if there is no header row."""
    lines = [line for line in decode(data).splitlines() if line.strip()]
    if not lines:
        raise ValueError("The DAT load file is empty.")

    def fields(line: str) -> list[str]:
        return [value.strip().strip(QUOTE) for value in line.split(SEPARATOR)]

    return fields(lines[0]), [fields(line) for line in lines[1:]]


def guess_field_map(header: list[str]) -> dict[str, str]:
    """Map each canonical field (begbates, endbates, textpath, nativepath) to a header name, where one matches."""
    normalised = {name.strip().lower().replace("_", " "): name for name in header}
    found = {}
    for canonical, aliases in FIELD_ALIASES.items():
        for alias in aliases:
            if alias in normalised:
                found[canonical] = normalised[alias]
                break
    return found


@dataclass(frozen=True)
class OptRow:
    bates: str
    image_path: str
    document_break: bool


def parse_opt(data: bytes) -> list[OptRow]:
    rows = []
    for line in decode(data).splitlines():
        if not line.strip():
            continue
        parts = line.split(",")
        if len(parts) < 3:
            continue
        rows.append(OptRow(parts[0].strip(), parts[2].strip(), len(parts) > 3 and parts[3].strip().upper() == "Y"))
    return rows


@dataclass(frozen=True)
class Bates:
    """A Bates number split into prefix, number and suffix; ``width`` keeps the zero padding."""

    prefix: str
    number: int
    width: int
    suffix: str = ""

    @classmethod
    def parse(cls, text: str) -> "Bates | None":
        match = _BATES.match(text.strip())
        if match is None:
            return None
        return cls(match["prefix"].rstrip(" -"), int(match["number"]), len(match["number"]), match["suffix"])

    def shifted(self, by: int) -> "Bates":
        return Bates(self.prefix, self.number + by, self.width, self.suffix)

    def __str__(self) -> str:
        return f"{self.prefix}{self.number:0{self.width}d}{self.suffix}"


@dataclass
class Report:
    """Every discrepancy met while importing: nothing is dropped silently."""

    items: list[str] = field(default_factory=list)

    def add(self, message: str) -> None:
        self.items.append(message)
