"""Read Concordance DAT, Opticon OPT and IPRO LFP load files as producing parties write them.

DAT: a header row, then one row per document. Concordance's defaults quote fields with þ (U+00FE) and separate
them with U+0014, and stand ® (U+00AE) in for a line break inside a field; vendors also write comma/quote, pipe
and tab files, so the delimiter and quote are found from the header line (:func:`dat_dialect`). Records are read
with the standard library's CSV reader: a line break (CR, LF, CRLF) ends a record only outside quotes, and a
vertical tab or form feed is data. Each file's encoding is found on its own (:mod:`.encoding`). Field names
vary by vendor, so they are matched case-insensitively against known aliases and the result is shown to the
user to confirm.

Image load files (one line per page image, :class:`ImageRow`):
- Opticon OPT: ``BATES,VOLUME,IMAGE PATH,DOC BREAK,FOLDER BREAK,BOX BREAK,PAGES``; a multi-page TIFF is one
  line whose PAGES column gives its page count, the pages after the first taking the following numbers.
- IPRO LFP: ``IM,BATES,BREAK,OFFSET,@VOLUME;PATH;FILE;TYPE,ROTATION`` where BREAK is ``D`` (document) or ``C``
  (child) on a document's first page and OFFSET the page within a multi-page image (0 or 1 for its first page).
  Other LFP lines (``FT`` full text, ``OF`` natives) are not images and are skipped.
Paths use backslashes and any letter case; :func:`matters.incoming.services` looks them up without case.
"""

import csv
import io
import re
from dataclasses import dataclass, field, replace

from .encoding import Decoded, decode_bytes

QUOTE = "\u00fe"
SEPARATOR = "\u0014"
NEWLINE_STAND_IN = "\u00ae"  # Concordance writes ® for a line break inside a field
PILCROW = "\u00b6"  # the delimiter Relativity and others offer beside U+0014, quoted with þ: þBEGDOCþ¶þENDDOCþ
MAX_FIELD_CHARS = 64 * 2**20
DELIMITERS = [SEPARATOR, PILCROW, "|", "\t", ",", ";"]
QUOTES = [QUOTE, '"', "^", "~", "'"]
FIELD_ALIASES = {
    "begbates": ["begbates", "begdoc", "begno", "bates begin", "begin bates", "beginbates", "prodbeg", "begbates#",
                 "bates beg", "begprodbate", "prodbegbates", "beg bates", "beginning bates", "bates start",
                 "start bates", "first bates"],
    "endbates": ["endbates", "enddoc", "endno", "bates end", "end bates", "prodend", "endprodbate", "prodendbates",
                 "ending bates", "last bates"],
    "textpath": ["textpath", "text path", "textlink", "text", "ocrpath", "extracted text", "text link",
                 "text file", "extracted text path", "text file path"],
    "nativepath": ["nativepath", "native path", "nativelink", "native", "filepath", "native link", "native file",
                   "native file path"],
    "title": ["title", "doctitle", "document title", "subject", "filename", "file name"],
    # A document's family (an email and its attachments): the family's first and last Bates numbers on every
    # member's row, and the parent's begin number on each attachment's row (Relativity, Everlaw, Nuix, Concordance).
    "begattach": ["begattach", "beg attach", "begin attach", "beginattach", "begattachment", "beg attachment",
                  "attachbeg", "attach begin", "begfamily", "beg family", "begin family", "family begin",
                  "prodbegattach", "begattach#", "beginning attachment"],
    "endattach": ["endattach", "end attach", "endattachment", "end attachment", "attachend", "attach end",
                  "endfamily", "end family", "family end", "prodendattach", "endattach#", "ending attachment"],
    "parentbates": ["parentbates", "parent bates", "parent begbates", "parent beg bates", "parentbegbates",
                    "parent bates begin", "parentdocid", "parent doc id", "parentid", "parent id"],
}
_BATES = re.compile(r"^(?P<prefix>.*?)(?P<number>\d+)(?P<suffix>[^\d]*)$")
# The longest Bates number LawDesk keeps (IncomingBatesPage.bates and BatesPage.bates are 80 characters): a
# longer "number" in a load file is not one, and PostgreSQL would refuse it in the middle of the import.
BATES_MAX_CHARS = 80
_KEY_DROP = str.maketrans("", "", " \t-_")  # separators a vendor may write inside a prefix or before digits


def decode(data: bytes) -> str:
    """The text of a load or text file (see :func:`.encoding.decode_bytes`)."""
    return decode_bytes(data).text


@dataclass(frozen=True)
class DatDialect:
    """How a DAT is written: ``delimiter`` between fields, ``quote`` around them (empty: unquoted)."""

    delimiter: str
    quote: str

    @property
    def concordance(self) -> bool:
        """Whether ® stands in for a line break: Concordance's own delimiter, or its þ quote with another."""
        return self.delimiter == SEPARATOR or self.quote == QUOTE

    def describe(self) -> str:
        names = {SEPARATOR: "U+0014", PILCROW: "pilcrow ¶", "\t": "tab", ",": "comma", "|": "pipe", ";": "semicolon"}
        quote = f"quote {self.quote!r}" if self.quote else "no quote"
        return f"delimiter {names.get(self.delimiter, repr(self.delimiter))}, {quote}"


def dat_dialect(header_line: str) -> DatDialect:
    """Find the delimiter and quote of a DAT from its header line. A quoted header starts with its quote
    character and repeats ``quote delimiter quote`` between names; an unquoted one is split on the candidate
    delimiter it holds most. Raises ValueError when the line holds no known delimiter and more than one name
    cannot be told apart."""
    line = header_line.strip()
    quote = line[0] if line and line[0] in QUOTES and line.endswith(line[0]) else ""
    if quote:
        counts = {d: line.count(quote + d + quote) for d in DELIMITERS}
        counts = {d: n for d, n in counts.items() if n}
        if counts:
            return DatDialect(max(counts, key=counts.get), quote)
        if line.count(quote) == 2:  # a single quoted field name
            return DatDialect(SEPARATOR if quote == QUOTE else ",", quote)
    counts = {d: line.count(d) for d in DELIMITERS if d in line}
    if not counts:
        if line and not re.search(r"\s{2,}", line):
            return DatDialect(SEPARATOR, quote)  # one field name
        raise ValueError("The DAT header line has no field delimiter LawDesk knows (U+0014, pilcrow ¶, pipe, tab, "
                         "comma, semicolon).")
    delimiter = SEPARATOR if SEPARATOR in counts else max(counts, key=counts.get)
    return DatDialect(delimiter, quote)


@dataclass
class DatFile:
    """A read DAT: ``header`` names, ``rows`` of values (same order), how it was written and decoded."""

    header: list[str]
    rows: list[list[str]]
    dialect: DatDialect
    decoded: Decoded
    problems: list[str] = field(default_factory=list)  # for the import report


def read_dat(data: bytes) -> DatFile:
    """Read a DAT (see the module docstring). Raises ValueError if it is empty or has no usable header."""
    decoded = decode_bytes(data)
    text = decoded.text.lstrip("\ufeff").replace("\x00", "")
    first = next((line for line in io.StringIO(text, newline="") if line.strip()), "")
    if not first:
        raise ValueError("The DAT load file is empty.")
    dialect = dat_dialect(first)
    # Some vendors put a document's whole extracted text in a field: far past csv's default 128 KiB limit.
    csv.field_size_limit(max(csv.field_size_limit(), MAX_FIELD_CHARS))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=dialect.delimiter,
                        quotechar=dialect.quote or None, quoting=csv.QUOTE_MINIMAL if dialect.quote else csv.QUOTE_NONE,
                        doublequote=True, strict=False)
    records = []
    try:
        for record in reader:
            records.append(_values(record, dialect))
    except csv.Error as error:
        raise ValueError(f"The DAT load file cannot be read past record {reader.line_num}: {error}.") from error
    records = [values for values in records if any(values)]
    if not records:
        raise ValueError("The DAT load file is empty.")
    dat = DatFile(records[0], records[1:], dialect, decoded)
    seam = f"{dialect.quote}{dialect.delimiter}{dialect.quote}" if dialect.quote else ""
    for number, row in enumerate(dat.rows, start=1):
        # A quote left open swallows the line breaks after it: the record then has too many fields, or holds
        # what was meant as the next record.
        if len(row) > len(dat.header) or (seam and any(seam in value for value in row)):
            dat.problems.append(f"DAT record {number} ({row[0][:40]}) has {len(row)} fields for "
                                f"{len(dat.header)} names, or another record inside a field: a quote there is "
                                "probably not closed; check that document and the one after it.")
    return dat


def _values(record: list[str], dialect: DatDialect) -> list[str]:
    values = [value.strip() for value in record]
    if dialect.quote:
        values = [value.strip(dialect.quote) for value in values]
    if dialect.concordance:
        values = [value.replace(NEWLINE_STAND_IN, "\n") for value in values]
    return values


def parse_dat(data: bytes) -> tuple[list[str], list[list[str]]]:
    """Return (header, rows) of a DAT. Raises ValueError if there is no header row."""
    dat = read_dat(data)
    return dat.header, dat.rows


def field_name_key(name: str) -> str:
    """A field name as vendors' variants of it share it: letters and digits only, without case (``Beg Bates``,
    ``BEG_BATES``, ``Beg-Bates``, ``BegBates#`` and `` BEGBATES `` are ``begbates``)."""
    return "".join(character for character in name.lower() if character.isalnum())


def guess_field_map(header: list[str]) -> dict[str, str]:
    """Map each canonical field (begbates, endbates, textpath, nativepath, title, begattach, endattach,
    parentbates) to a header name, where one matches an alias by :func:`field_name_key`; the first header name of
    a key wins."""
    normalised: dict[str, str] = {}
    for name in header:
        normalised.setdefault(field_name_key(name), name)
    found = {}
    for canonical, aliases in FIELD_ALIASES.items():
        for alias in aliases:
            if field_name_key(alias) in normalised:
                found[canonical] = normalised[field_name_key(alias)]
                break
    return found


@dataclass(frozen=True)
class ImageRow:
    """One page image named by an image load file: ``page_index`` is the page within a multi-page image file
    (0 for the first), ``pages`` the page count an OPT line gives (None where it gives none)."""

    bates: str
    image_path: str
    document_break: bool
    page_index: int = 0
    pages: int | None = None


OptRow = ImageRow  # the former name


def parse_opt(data: bytes) -> list[ImageRow]:
    """The image rows of an Opticon OPT (see the module docstring); lines with fewer than 3 columns are skipped."""
    rows = []
    for line in decode(data).splitlines():
        parts = line.split(",")
        if not line.strip() or len(parts) < 3:
            continue
        pages = parts[6].strip() if len(parts) > 6 else ""
        rows.append(ImageRow(parts[0].strip(), parts[2].strip(), len(parts) > 3 and parts[3].strip().upper() == "Y",
                             pages=int(pages) if pages.isdigit() and int(pages) > 0 else None))
    return rows


def parse_lfp(data: bytes) -> list[ImageRow]:
    """The image rows (``IM`` lines) of an IPRO LFP (see the module docstring). Vendors count OFFSET from 0 or
    from 1: an image file one of whose lines has offset 0 counts from 0, any other from 1."""
    rows, offsets = [], []
    for line in decode(data).splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) < 5 or parts[0].upper() != "IM":
            continue
        location = ",".join(parts[4:-1] if len(parts) > 5 else parts[4:]).lstrip("@")
        pieces = location.split(";")
        if len(pieces) < 3:
            continue
        folder, name = pieces[1].strip().strip("\\"), pieces[2].strip()
        offsets.append(int(parts[3]) if parts[3].isdigit() else 0)
        rows.append(ImageRow(parts[1], f"{folder}\\{name}" if folder else name, parts[2].upper() in ("D", "C")))
    from_zero = {_image_name_key(row.image_path) for row, offset in zip(rows, offsets) if offset == 0}
    return [replace(row, page_index=offset if _image_name_key(row.image_path) in from_zero else max(offset - 1, 0))
            for row, offset in zip(rows, offsets)]


def _image_name_key(path: str) -> str:
    return path.replace("\\", "/").lower()


@dataclass(frozen=True)
class Bates:
    """A Bates number split into prefix, number and suffix; ``width`` keeps the zero padding."""

    prefix: str
    number: int
    width: int
    suffix: str = ""

    @classmethod
    def parse(cls, text: str) -> "Bates | None":
        """``text`` split, or None when it holds no digits or is longer than BATES_MAX_CHARS."""
        match = _BATES.match(text.strip()) if len(text.strip()) <= BATES_MAX_CHARS else None
        if match is None:
            return None
        return cls(match["prefix"].rstrip(" -"), int(match["number"]), len(match["number"]), match["suffix"])

    @property
    def key(self) -> tuple[str, int, str]:
        """What every writing of this number shares, to compare numbers by: the prefix without case, spaces,
        hyphens or underscores, the number without its zero padding, the suffix without case. ``DEF 000123``,
        ``def-000123`` and ``DEF00123`` share a key: vendors write one number those ways in one volume's DAT,
        OPT and page stamps, and two volumes of one matter may differ in padding."""
        return (self.prefix.translate(_KEY_DROP).upper(), self.number, self.suffix.upper())

    def shifted(self, by: int) -> "Bates":
        return Bates(self.prefix, self.number + by, self.width, self.suffix)

    def __str__(self) -> str:
        return f"{self.prefix}{self.number:0{self.width}d}{self.suffix}"


def bates_key(text: str) -> tuple[str, int, str]:
    """:attr:`Bates.key` of ``text``; a text with no digits is its own key, upper-cased. The productions page
    compares every number of a matter by it, so it skips building a :class:`Bates`, and a number that ends in
    its digits (nearly all) is split without a regular expression: about 0.9 µs against 2.7."""
    if text[-1:].isdigit() and not text[:1].isspace() and len(text) <= BATES_MAX_CHARS:
        prefix = text.rstrip("0123456789")
        return (prefix.translate(_KEY_DROP).upper(), int(text[len(prefix):]), "")
    parsed = Bates.parse(text)
    return (text.strip().upper(), -1, "") if parsed is None else parsed.key


@dataclass
class Report:
    """Every discrepancy met while importing: nothing is dropped silently."""

    items: list[str] = field(default_factory=list)

    def add(self, message: str) -> None:
        self.items.append(message)
