"""Find what must not leave in what a production wrote: every redacted string and every withheld document's distinctive
text, in every file of the volume and the combined PDF (PyMuPDF and the standard library; nothing from Django).

What is looked for (:class:`Secrets`) is text cut into words (runs of letters and digits, case folded): a redacted
string is a run of words under one box (or one word of it); a withheld document is every run of SHINGLE_WORDS words
of its text (a shorter document, its whole text). A run that the production rightly holds anyway (the same words on
a page that was not redacted, a title, the placeholder wording) is allowed with :meth:`Secrets.allow` and not looked
for, so that what is true never fails a production. A run of fewer than MIN_SECRET_CHARS letters and digits is not
looked for (a two-letter word under a box is found everywhere); :attr:`Secrets.too_short` counts those.

Where it is looked for (:class:`Scanner`): in a PDF, every page's text as a viewer extracts it (MuPDF: fonts'
encodings and ToUnicode maps applied, a word split across ``TJ`` strings joined); every object's strings (literal
strings with their escapes and octal codes, hex strings; PDFDocEncoding, UTF-16BE or UTF-8 by their byte-order mark;
ISO 32000-1, 7.3.4 and 7.9.2) and names (``#xx`` escapes, 7.3.5), which holds outlines, named destinations, page
labels, structure-tree /Alt and /ActualText, optional-content group names, link URIs, field names and tooltips,
annotation titles, JavaScript names and the information dictionary; every stream, decompressed, that is not an image
or a font program: its strings (the pieces of a ``TJ`` array joined; a content stream's hex strings only with a
byte-order mark, the others being glyph codes the page text already reads), and, when it is not a content stream,
its bytes as text (XMP, JavaScript); an embedded PDF read the same way. A page thumbnail or an embedded file is a
finding of its own: a production carries none, and a thumbnail's pixels are not read. Text files (TEXT, DAT, OPT,
the index) are read in their encoding; a native spreadsheet by its text (XLSX and ODS: every XML part, tags out; XLS:
its bytes as Latin-1 and as UTF-16LE); page images through OCR where the caller gives an ``ocr`` function
(:meth:`Scanner.scan_file`).

A page the production did not change is not extracted again (:class:`IngestedPages`): when its own content (the
stamp's form, :mod:`.isolate`), the resources that content draws with (fonts, images, forms, each object compared
by its bytes and those of every object it refers to) and its MediaBox are those of an exhibit page whose text was
read from its text layer at ingest (compared by their key, :mod:`.page_key`, which ingest stores with the text),
the text a viewer extracts from it is that stored text, which is what is looked in (:meth:`Secrets.find`); of its
content stream only the marked-content property lists (``/ActualText``, ``/Alt``, ``/E`` of ``BDC``/``DP``) are
read, the strings it shows being that text. Everything else is read as above: the page object, the stamp's
stream, annotations, every object and stream that is not that content, every page that differs in any byte (a
redacted page, a placeholder, a slip sheet, a page annotations were baked into) and every other file.
"""

import hashlib
import html
import io
import re
import zipfile
from dataclasses import dataclass, field

import ahocorasick
import pymupdf

from .page_key import Digests, page_keys, produced_key, seen_key

WORD = re.compile(r"[^\W_]+")
# Text reduced to its words without the regex engine: in its UTF-8 bytes, every ASCII byte but a letter or digit
# made a space (the bytes of other characters kept: those that are not letters or digits are replaced before).
_ASCII_RUNS = re.compile(r"[\x00-\x7f]+")
_NOT_WORD_BYTES = bytes(c if c >= 0x80 or chr(c).isalnum() else 32 for c in range(256))
SHINGLE_WORDS = 6
MIN_SECRET_CHARS = 4
# The bytes of a stream that is text (content streams, XMP, JavaScript) are nearly all printable.
MAX_BINARY_SHARE = 0.3
_PRINTABLE = b"\t\n\r\f" + bytes(range(32, 127))
_NON_TEXT_SUBTYPES = {"/Image", "/Type1C", "/CIDFontType0C", "/OpenType"}
_FONT_PROGRAM_KEYS = ("Length1", "Length2", "Length3")

# PDFDocEncoding where it differs from Latin-1 (ISO 32000-1, Annex D.2).
_PDFDOC = str.maketrans(dict(zip(map(chr, range(0x80, 0xA1)), "•†‡…—–ƒ⁄‹›−‰„“”‘’‚™ﬁﬂŁŒŠŸŽıłœšž\ufffd€"))
                        | dict(zip(map(chr, range(0x18, 0x20)), "˘ˇˆ˙˝˛˚˜")))

_LITERAL = re.compile(rb"\((?:[^()\\]|\\.|\((?:[^()\\]|\\.|\((?:[^()\\]|\\.)*\))*\))*\)", re.S)
_HEX = re.compile(rb"(?<!<)<(?!<)([0-9A-Fa-f\s]*)>")
_NAME = re.compile(rb"/([^\s/\[\]()<>{}%]+)")
_BOM_HEX = re.compile(rb"<((?:FE\s*FF|EF\s*BB\s*BF)[0-9A-Fa-f\s]*)>", re.I)
# The end of one literal string and the start of the next with only a number or spaces between them.
# (The pattern begins with its bracket, which the regex engine looks for first: a look-behind in front of it
# doubled the time.)
_ADJACENT = re.compile(rb"\)(?<!\\\))\s*-?[0-9.]*\s*\(")
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f", b"(": b"(", b")": b")", b"\\": b"\\"}
_ESCAPE = re.compile(rb"\\([0-7]{1,3}|\r\n|[\r\n]|.)", re.S)


def words(text: str) -> list[str]:
    """The words of ``text`` as the scan compares them: runs of letters, digits and ``_``, case folded."""
    return WORD.findall(text.casefold())


def word_line(text: str) -> str:
    """``text`` reduced to its words (as :func:`words` reads them: runs of what ``str.isalnum`` calls letters and
    digits, case folded) with one space between them: what :meth:`Secrets.find` matches runs against. The regular
    expression's work done by C string methods (twice as fast on court filings' text, four times on ASCII): each
    character other than ASCII that is not a letter or digit replaced by a space, then a byte table over the
    UTF-8."""
    if text.isascii():
        data = text.encode("ascii").lower()
    else:
        text = text.casefold()
        for char in {char for char in set(_ASCII_RUNS.sub("", text)) if not char.isalnum()}:
            text = text.replace(char, " ")
        data = text.encode("utf-8")
    return b" ".join(data.translate(_NOT_WORD_BYTES).split()).decode("utf-8")


def _grams(tokens: list[str], length: int):
    return zip(*(tokens[i:] for i in range(length)))


@dataclass
class Secrets:
    """Runs of words that must not be in a production, each with what it is (for the reason a production fails
    with): ``{length: {words: what}}``."""

    runs: dict[int, dict[tuple[str, ...], str]] = field(default_factory=dict)
    too_short: int = 0
    _automata: object = field(default=None, repr=False, compare=False)

    def add(self, text: str, what: str) -> None:
        """Look for ``text`` (a redacted string) as a whole."""
        self._add(tuple(words(text)), what)

    def add_document(self, text: str, what: str) -> None:
        """Look for every run of SHINGLE_WORDS words of ``text`` (a withheld document), or all of it if shorter."""
        tokens = words(text)
        if len(tokens) <= SHINGLE_WORDS:
            self._add(tuple(tokens), what)
            return
        table = self.runs.setdefault(SHINGLE_WORDS, {})
        for run in _grams(tokens, SHINGLE_WORDS):
            table.setdefault(run, what)
        self._automata = None

    def _add(self, run: tuple[str, ...], what: str) -> None:
        if not run:
            return
        if sum(map(len, run)) < MIN_SECRET_CHARS:
            self.too_short += 1
            return
        self.runs.setdefault(len(run), {}).setdefault(run, what)
        self._automata = None

    def allow(self, text: str) -> None:
        """Stop looking for any run found in ``text`` (None is no text): the production rightly holds it elsewhere."""
        tokens = words(text or "")
        for length, table in self.runs.items():
            for run in list(filter(table.__contains__, _grams(tokens, length))):
                table.pop(run, None)
        self._automata = None

    def __bool__(self) -> bool:
        return any(self.runs.values())

    def count(self) -> int:
        return sum(map(len, self.runs.values()))

    def _built(self):
        """An Aho-Corasick automaton of every run, each run's words with a space either side, matched against text
        reduced to its words with one space between (exactly the runs of :func:`words`); made once after the last
        :meth:`add`, :meth:`add_document` or :meth:`allow`."""
        if self._automata is None:
            automaton = ahocorasick.Automaton()
            for length, table in self.runs.items():
                for run in table:
                    automaton.add_word(f" {' '.join(run)} ", (length, run))
            automaton.make_automaton()
            self._automata = automaton
        return self._automata

    def find(self, text: str) -> list[tuple[str, str]]:
        """The secrets in ``text``: ``[(the words as found, what they are)]``, at most one per length (its first
        in the text), the longest first. One pass over ``text`` for every run at once."""
        if not self or not text:
            return []
        spaced = self._built()
        first: dict[int, tuple[str, ...]] = {}
        for _end, (length, run) in spaced.iter(f" {word_line(text)} "):
            first.setdefault(length, run)
        return [(" ".join(run), self.runs[length][run]) for length, run in sorted(first.items(), reverse=True)]


# --- reading text out of a PDF ----------------------------------------------------------------------------

def _unescape(raw: bytes) -> bytes:
    def one(match):
        code = match.group(1)
        if code[:1] in b"01234567" and code[:1]:
            return bytes([int(code, 8) & 0xFF])
        if code in (b"\r\n", b"\r", b"\n"):
            return b""  # a line continuation
        return _ESCAPES.get(code, code)
    return _ESCAPE.sub(one, raw)


def decode_string(data: bytes) -> str:
    """A PDF text string's bytes as text: UTF-16BE or UTF-8 after their byte-order mark, else PDFDocEncoding."""
    if data[:2] == b"\xfe\xff":
        return data[2:].decode("utf-16-be", "replace")
    if data[:3] == b"\xef\xbb\xbf":
        return data[3:].decode("utf-8", "replace")
    return data.decode("latin-1").translate(_PDFDOC)


def _literal(raw: bytes) -> str:
    """A literal string's text; ``raw`` is the string with its parentheses."""
    inner = raw[1:-1]
    return decode_string(_unescape(inner) if b"\\" in inner else inner)


def _hex(raw: bytes) -> str:
    digits = re.sub(rb"\s", b"", raw)
    if len(digits) % 2:
        digits += b"0"
    return decode_string(bytes.fromhex(digits.decode("ascii")))


def _name(raw: bytes) -> str:
    if b"#" in raw:
        raw = re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), raw)
    return decode_string(raw)


def syntax_texts(data: bytes, stream: bool = False) -> list[str]:
    """The strings (literal and hex, decoded) and names of PDF syntax ``data``, with the strings of a ``TJ`` array
    joined into one (a word split across them becomes one word again). ``stream``: ``data`` is a stream's content,
    whose hex strings are read only when they begin with a byte-order mark (the others are glyph codes of a
    font's own encoding, read by page text extraction instead)."""
    # Strings that follow each other with only a number or spaces between them (a TJ array's pieces and their
    # kerning) are joined before the strings are read: one pass of the regex engine instead of one per array.
    joined = _ADJACENT.sub(b"", data) if b"TJ" in data else data
    literals = _LITERAL.findall(joined)
    inner = b"\n".join(literal[1:-1] for literal in literals)
    if b"\\" in inner:
        inner = _unescape(inner)
    if b"\xfe\xff" in inner or b"\xef\xbb\xbf" in inner:  # a string in UTF-16 or UTF-8: each read on its own
        parts = [" ".join(map(_literal, literals))]
    else:
        parts = [inner.decode("latin-1").translate(_PDFDOC)]
    parts.append(" ".join(map(_hex, (_BOM_HEX if stream else _HEX).findall(data))))
    names = b" ".join(_NAME.findall(data))
    parts.append(_name(names))
    return parts


def _is_text(data: bytes) -> bool:
    head = data[:4096]
    return bool(head) and len(head.translate(None, _PRINTABLE)) <= MAX_BINARY_SHARE * len(head)


# The most a native spreadsheet's XML parts are read to, uncompressed (a ZIP's sizes are checked before reading).
_PACKAGE_MAX_BYTES = 1 << 30
_TAG = re.compile(rb"<[^>]*>")


def _package_text(data: bytes, name: str) -> str:
    """The text of every XML part of an XLSX or ODS (cell strings, formulas, sheet names, comments), tags taken
    out and entities read. Raises ValueError for a package that cannot be read or is larger than
    _PACKAGE_MAX_BYTES, so the volume fails rather than going out unscanned."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            parts = [info for info in package.infolist() if info.filename.lower().endswith((".xml", ".rels"))]
            if sum(info.file_size for info in parts) > _PACKAGE_MAX_BYTES:
                raise ValueError(f"{name} is too large to scan for what must not leave")
            return "\n".join(html.unescape(_TAG.sub(b" ", package.read(info)).decode("utf-8", "replace"))
                             for info in parts)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{name} could not be read to scan it for what must not leave ({exc})") from exc


def _bytes_as_text(data: bytes) -> str:
    if data[:2] in (b"\xfe\xff", b"\xff\xfe"):
        return data.decode("utf-16", "replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


@dataclass
class Finding:
    """Something that must not leave, found in ``where`` (a file and the place in it)."""

    where: str
    text: str
    what: str

    def __str__(self) -> str:
        if not self.text:
            return f"{self.where}: {self.what}"
        return f"{self.where} holds “{self.text}” ({self.what})"


_KEY = re.compile(r"/(Type|Subtype)\s*/(\w+)")
_FONT_PROGRAM = re.compile(r"/Length[123]\b")
_CONTENT = re.compile(rb"(?:^|\s)BT\s.*?\sET(?:\s|$)", re.S)
_THUMB = re.compile(r"/Thumb\s*(\d+\s+\d+\s+R|<<)")


@dataclass
class ScanRead:
    """What a :class:`Scanner` has read (:meth:`Scanner.read`): the digests of the streams, objects and pages,
    and how many pages it extracted and took from ingest's text."""

    streams: set[bytes]
    objects: set[bytes]
    pages: set[bytes]
    pages_extracted: int
    pages_ingested: int


class IngestedPages:
    """The exhibit pages whose text ingest read from their text layer and stored, by their key
    (:mod:`.page_key`): the text a viewer extracts from a produced page with that key is the stored text."""

    def __init__(self):
        self.texts: dict[bytes, str] = {}

    def add_key(self, key: bytes, text: str) -> None:
        """A page ingest stored with its key (``Page.text_key``, worked out by ingest from the very document whose
        text it read)."""
        self.texts[key] = text

    def add(self, doc: pymupdf.Document, texts: dict[int, str]) -> None:
        """Pages stored without a key (ingested before keys were stored): their keys worked out now from ``doc``,
        the exhibit's display PDF as ingest read it (not as the production changed it). ``texts``: page index
        (from 0) to the text stored for it, for the pages read from their text layer."""
        keys = page_keys(doc)
        for index, text in texts.items():
            if 0 <= index < len(keys) and keys[index] is not None:
                self.texts[keys[index]] = text

    def __len__(self) -> int:
        return len(self.texts)


_M = pymupdf.mupdf
# A marked-content property list in a content stream (ISO 32000-1, 14.6.2), ``/Tag <<...>> BDC`` or ``DP``: from
# the dictionary's start to the operator.
_PROPERTY_LIST = re.compile(rb"<<.*?(?:BDC|DP)(?![A-Za-z])", re.S)


class Scanner:
    """Scans the files of one production for ``secrets``, keeping what it has read: an object or a stream whose
    bytes it has read in another file (the combined PDF repeats every native's pages) is not read again, nor the
    text of a page that extracts to the text of a page read before (the same content streams, resources by
    content, boxes and rotation: :meth:`_page_seen`). ``ocr``: a function of a
    page image's bytes returning its text, for the page images to read (others are not read: see
    :meth:`scan_file`). ``ingested``: the exhibit pages ingest read (:class:`IngestedPages`), whose stored text
    stands for the text of a produced page that is one of them unchanged."""

    def __init__(self, secrets: Secrets, ocr=None, ingested: IngestedPages | None = None,
                 ingested_keys: frozenset[bytes] | None = None):
        self.secrets = secrets
        self.ocr = ocr
        self.ingested = ingested.texts if ingested else {}
        # A scanner in a child process (:mod:`.leak_pool`) has the keys of the ingested pages, not their texts:
        # it lists each unchanged page it finds (``unread_texts``, where and key) for the scanner it reports to,
        # which looks in the page's stored text (:meth:`absorb`).
        self.texts_elsewhere = ingested_keys is not None
        if self.texts_elsewhere:
            self.ingested = dict.fromkeys(ingested_keys, "")
        self.unread_texts: list[tuple[str, bytes]] = []
        self.findings: list[Finding] = []
        self._streams: set[bytes] = set()
        self._objects: set[bytes] = set()
        self._pages: set[bytes] = set()
        self.pages_extracted = 0
        self.pages_ingested = 0

    def _find(self, where: str, text: str | None, carrier: str = "") -> None:
        if carrier:
            self.findings.append(Finding(where, "", f"a production carries no {carrier}"))
            return
        self.findings += [Finding(where, found, what) for found, what in self.secrets.find(text)]

    def _seen(self, data: bytes, seen: set) -> bool:
        digest = hashlib.sha1(data).digest()
        if digest in seen:
            return True
        seen.add(digest)
        return False

    def scan_pdf(self, data: bytes, name: str) -> None:
        """Scan the PDF ``data`` (the file ``name``); see the module docstring."""
        with pymupdf.open("pdf", data) as doc:
            self._scan_doc(doc, name)

    def scan_pdf_file(self, path, name: str) -> None:
        """Scan the PDF at ``path`` as :meth:`scan_pdf` does, read from disk as MuPDF needs it rather than whole
        into memory (a combined PDF of 100,000 pages runs to gigabytes)."""
        with pymupdf.open(path, filetype="pdf") as doc:
            self._scan_doc(doc, name)

    def _scan_doc(self, doc: pymupdf.Document, name: str) -> None:
        looking = bool(self.secrets)
        digests = Digests(doc) if looking else None
        unchanged_content: set[int] = set()  # the form XObjects holding an unchanged page's own content
        pdf = pymupdf._as_pdf_document(doc)  # once: each high-level call makes its own
        for index in range(doc.page_count) if looking else ():
            where = f"{name}, page {index + 1}"
            # An unchanged page (its stored text looked in once for every file that repeats it), or a page read
            # in another file (the combined PDF repeats the natives' pages).
            if (self.ingested and self._ingested_page(doc, index, digests, where, name, unchanged_content)
                    or self._page_seen(digests, index)):
                continue
            self.pages_extracted += 1
            self._find(where, doc[index].get_text())
        for xref in range(1, doc.xref_length()):
            self._scan_object(doc, pdf, xref, name, looking, xref in unchanged_content, digests)

    def _ingested_page(self, doc: pymupdf.Document, index: int, digests: Digests, where: str, name: str,
                       unchanged_content: set[int]) -> bool:
        """Whether page ``index`` is an ingested page unchanged: then its stored text is looked in for what it
        shows, and its content's property lists once (a page of the same key read before, in this file or
        another, is not read again)."""
        produced = produced_key(digests, index)
        if produced is None or produced[0] not in self.ingested:
            return False
        key, form, data = produced
        unchanged_content.add(form)
        self.pages_ingested += 1
        # Its content is read here, not again where another file repeats it (the scan of objects skips a stream
        # it has seen).
        self._seen(data, self._streams)
        if not self._seen(key, self._pages):
            if self.texts_elsewhere:
                self.unread_texts.append((where, key))
            else:
                self._find(where, self.ingested[key])
            self._find(f"{name}, object {form}",
                       "\n".join(syntax_texts(b"\n".join(_PROPERTY_LIST.findall(data)), stream=True)))
        return True

    def absorb(self, findings: list[Finding], unread_texts: list[tuple[str, bytes]]) -> None:
        """Take over what a scanner in another process found in the files it read (:mod:`.leak_pool`): its
        ``findings``, and its ``unread_texts`` (the unchanged pages it found, where each is and its key), whose
        stored text is looked in here, once for each key, as :meth:`_ingested_page` would."""
        self.findings += findings
        for where, key in unread_texts:
            if not self._seen(key, self._pages):
                self._find(where, self.ingested[key])

    def read(self) -> "ScanRead":
        """What this scanner has read, for a scanner of another process to skip (:meth:`absorb_read`)."""
        return ScanRead(self._streams, self._objects, self._pages, self.pages_extracted, self.pages_ingested)

    def absorb_read(self, read: "ScanRead") -> None:
        """Skip from now on what a scanner in another process read (its :meth:`read`, once its files' findings
        are taken over with :meth:`absorb`): the combined PDF scanned after the natives skips every stream,
        object and page a native held, whichever process read it."""
        self._streams |= read.streams
        self._objects |= read.objects
        self._pages |= read.pages
        self.pages_extracted += read.pages_extracted
        self.pages_ingested += read.pages_ingested

    def _page_seen(self, digests: Digests, index: int) -> bool:
        """Whether a page that extracts to the same text had its text read (the combined PDF repeats the natives'
        pages): one of the same :func:`.page_key.seen_key` as a page read before (its content streams, its fonts,
        encodings and ToUnicode maps by content, its boxes and rotation). A page with annotations other than links,
        or one that cannot be digested, has no key and is read."""
        key = seen_key(digests, index)
        if key is None:
            return False
        if key in self._pages:
            return True
        self._pages.add(key)
        return False

    def _scan_object(self, doc: pymupdf.Document, pdf, xref: int, name: str, looking: bool,
                     unchanged_content: bool = False, digests: Digests | None = None) -> None:
        """Scan object ``xref``: its syntax, and its stream (decoded) unless it is not text, or it is an unchanged
        page's own content (``unchanged_content``: read by :meth:`_ingested_page`)."""
        where = f"{name}, object {xref}"
        try:
            source = digests.text(xref) if digests is not None else doc.xref_object(xref, compressed=True)
        except Exception:  # a damaged or free object holds nothing readable
            return
        if looking and not self._seen(source.encode("latin-1", "replace"), self._objects):
            self._find(where, "\n".join(syntax_texts(source.encode("latin-1", "replace"))))
        keys = dict(_KEY.findall(source))
        if keys.get("Type") == "Page" and _THUMB.search(source):
            self._find(where, None, "page thumbnail (its pixels may show what a redaction removed)")
        if not pymupdf.mupdf.pdf_obj_num_is_stream(pdf, xref):
            return
        if keys.get("Type") == "EmbeddedFile":
            self._find(where, None, "embedded file")
        if (not looking or unchanged_content or f"/{keys.get('Subtype')}" in _NON_TEXT_SUBTYPES
                or _FONT_PROGRAM.search(source)):
            return
        try:
            data = doc.xref_stream(xref)
        except Exception:  # a stream MuPDF cannot decode: its raw bytes are read instead
            data = doc.xref_stream_raw(xref)
        if not data or self._seen(data, self._streams):
            return
        if data[:5] == b"%PDF-":
            try:
                with pymupdf.open("pdf", data) as inner:
                    self._scan_doc(inner, f"{where} (an embedded PDF)")
            except Exception:  # not a PDF after all: read as bytes below
                pass
        if _is_text(data) or data[:2] in (b"\xfe\xff", b"\xff\xfe"):
            # A content stream's text is in its strings; anything else (XMP, JavaScript, a text file) is read whole.
            raw = "" if _CONTENT.search(data) else _bytes_as_text(data)
            self._find(where, raw + "\n" + "\n".join(syntax_texts(data, stream=True)))

    def scan_file(self, data: bytes, name: str, read_image: bool = False) -> None:
        """Scan one file of a volume: a PDF (:meth:`scan_pdf`), a page image (through ``ocr`` when
        ``read_image`` and the scanner has one; otherwise not read), or text in its encoding."""
        lower = name.lower()
        if lower.endswith(".pdf"):
            self.scan_pdf(data, name)
        elif not self.secrets:
            return
        elif lower.endswith((".tif", ".tiff", ".jpg", ".jpeg", ".png")):
            if read_image and self.ocr is not None:
                self._find(name, self.ocr(data))
        elif lower.endswith((".xlsx", ".xlsm", ".ods")):
            self._find(name, _package_text(data, name))
        elif lower.endswith(".xls"):
            # BIFF8 keeps a string as Latin-1 ("compressed") or UTF-16LE, at either byte alignment.
            self._find(name, "\n".join((data.decode("latin-1"), data.decode("utf-16-le", "replace"),
                                         data[1:].decode("utf-16-le", "replace"))))
        else:
            self._find(name, _bytes_as_text(data))
