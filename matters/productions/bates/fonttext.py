"""A page's text read from its content streams' strings through its fonts' own maps, without running the page: the
leak scan's first look at a page (:mod:`.leaks`), which runs MuPDF's text extraction only on the pages where this
look finds something or cannot be sure.

What is read is each shown string's codes mapped to Unicode as MuPDF maps them for text extraction (its
``pdf_load_to_unicode`` and ``pdf_show_char``): a font's /ToUnicode CMap first (``bfchar`` and ``bfrange``; ISO
32000-1, 9.10.3), else, for a simple font, the glyph name its encoding gives the code (the base encoding, WinAnsi,
MacRoman or Standard, then /Differences; 9.6.6) as Unicode (MuPDF's ``fz_unicode_from_glyph_name``). The text is
kept without word boundaries (letters and digits only, case folded): where a viewer puts a space depends on glyph
positions, which are not read here, so a run of words is looked for with its spaces taken out (:class:`.leaks.Secrets`),
which finds it however the words were spaced, kerned or split across strings.

A page is *undecided* (:class:`Undecided`), and its text extracted as before, when any of its fonts or strings
cannot be mapped this way: a Type3 font, a composite font with a CMap other than Identity-H/V or no /ToUnicode, a
simple font with no encoding or a code whose glyph has no Unicode, a resource name no font answers to, an inline
image (its bytes could look like strings), optional content (MuPDF leaves hidden content out, so words either side
of it are adjacent in the extracted text and not in the strings), annotations drawn on the page (extraction runs
them too). What this look cannot see and the extracted text could: characters outside the page's MediaBox that
MuPDF drops between two words of a run (``TEXT_MEDIABOX_CLIP``), which join the words here and not there.
"""

import codecs
import functools
import re

import pymupdf

from . import pageobjects

mupdf = pymupdf.mupdf
UNKNOWN = "\ue000"  # a code with no Unicode: its page is undecided
_NOT_WORD = re.compile(r"[\W_]+")
_STANDARD_HIGH = {0xAE: "ﬁ", 0xAF: "ﬂ", 0xE1: "Æ", 0xE8: "Ł", 0xE9: "Ø", 0xEA: "Œ", 0xF1: "æ", 0xF5: "ı", 0xF8: "ł",
                  0xF9: "ø", 0xFA: "œ", 0xFB: "ß"}
_BASE14_TEXT = {"Helvetica", "Helvetica-Bold", "Helvetica-Oblique", "Helvetica-BoldOblique", "Times-Roman",
                "Times-Bold", "Times-Italic", "Times-BoldItalic", "Courier", "Courier-Bold", "Courier-Oblique",
                "Courier-BoldOblique"}
_LITERAL = rb"\((?:[^()\\]|\\.|\((?:[^()\\]|\\.|\((?:[^()\\]|\\.)*\))*\))*\)"
# In one left-to-right pass: a comment (so a parenthesis in it opens no string), a font selection, a literal
# string (a % or a parenthesis inside it is its own), a hex string (not a dictionary's <<), an inline image.
# A dictionary (marked content's properties) is passed over whole, its strings being no shown text.
_TOKENS = re.compile(rb"(%[^\r\n]*)|/([^\s/\[\]()<>{}%]+)\s+[-+]?[0-9.]+\s+Tf\b|(" + _LITERAL
                     + rb")|<([0-9A-Fa-f\s]*)>|(\bBI\b)|(<<(?:[^<>]|<[^<>]*>)*>>)", re.S)
# A TJ array's pieces (strings with only a kerning number between them) are one string for this look: they are
# joined before the strings are read, so the regex engine, not Python, walks the array.
# (Each pattern begins with its bracket, which the regex engine looks for first: a look-behind in front of it
# doubled the time. A dictionary's >> is followed by its operator in a content stream, never by a hex string.)
_ADJACENT_LITERALS = re.compile(rb"\)(?<!\\\))\s*-?[0-9.]*\s*\(")
_ADJACENT_HEX = re.compile(rb">\s*-?[0-9.]*\s*<(?=[0-9A-Fa-f])")
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f", b"(": b"(", b")": b")", b"\\": b"\\"}
_ESCAPE = re.compile(rb"\\([0-7]{1,3}|\r\n|[\r\n]|.)", re.S)
_CMAP_SECTION = re.compile(rb"begin(bfchar|bfrange)(.*?)end\1", re.S)
_CMAP_HEX = re.compile(rb"<([0-9A-Fa-f\s]*)>|\[([^\]]*)\]")
_DIFFERENCES = re.compile(r"/Differences\s*\[([^\]]*)\]")
_DIFF_TOKEN = re.compile(r"(\d+)|/([^\s/\[\]()<>{}%]+)")


class Undecided(Exception):
    """The page's text cannot be read from its strings (see the module docstring); the message says why."""


def _unescape(raw: bytes) -> bytes:
    def one(match):
        code = match.group(1)
        if code[:1] in b"01234567" and code[:1]:
            return bytes([int(code, 8) & 0xFF])
        if code in (b"\r\n", b"\r", b"\n"):
            return b""
        return _ESCAPES.get(code, code)
    return _ESCAPE.sub(one, raw)


def _hex_bytes(digits: bytes) -> bytes:
    digits = digits.translate(None, b" \t\r\n\f\x00")
    return bytes.fromhex((digits + b"0" if len(digits) % 2 else digits).decode("ascii"))


def _utf16(data: bytes) -> str:
    return data.decode("utf-16-be", "surrogatepass") if len(data) % 2 == 0 else UNKNOWN


def parse_to_unicode(data: bytes) -> dict[int, str]:
    """A /ToUnicode CMap's ``bfchar`` and ``bfrange`` mappings: ``{code: text}`` (9.10.3; in a range the last
    byte of the destination counts up, or each code has its own destination in an array)."""
    mapping: dict[int, str] = {}
    for kind, body in _CMAP_SECTION.findall(data):
        items = _CMAP_HEX.findall(body)
        step = 2 if kind == b"bfchar" else 3
        for index in range(0, len(items) - step + 1, step):
            group = items[index:index + step]
            if kind == b"bfchar":
                mapping[int.from_bytes(_hex_bytes(group[0][0]), "big")] = _utf16(_hex_bytes(group[1][0]))
                continue
            low, high = (int.from_bytes(_hex_bytes(g[0]), "big") for g in group[:2])
            if high - low > 0xFFFF:
                continue
            if group[2][1]:  # an array of destinations, one per code
                for offset, digits in enumerate(re.findall(rb"<([0-9A-Fa-f\s]*)>", group[2][1])):
                    mapping[low + offset] = _utf16(_hex_bytes(digits))
                continue
            start = _hex_bytes(group[2][0])
            for offset in range(high - low + 1):
                last = int.from_bytes(start[-2:], "big") + offset if len(start) >= 2 else start[-1] + offset
                head = start[:-2] if len(start) >= 2 else b""
                mapping[low + offset] = _utf16(head + (last & 0xFFFF).to_bytes(2, "big")) if len(start) >= 2 \
                    else chr(last & 0xFF)
    return mapping


def _base_encoding(name: str) -> list[str]:
    """The 256 texts of a base encoding; UNKNOWN where it names no glyph (a new list each call)."""
    return list(_base_table(name))


@functools.cache
def _base_table(name: str) -> tuple[str, ...]:
    if name == "WinAnsiEncoding":
        table = [codecs.decode(bytes([c]), "cp1252", "replace") for c in range(256)]
    elif name == "MacRomanEncoding":
        table = [codecs.decode(bytes([c]), "mac_roman", "replace") for c in range(256)]
    elif name == "StandardEncoding":
        table = [chr(c) if 0x20 <= c < 0x7F else _STANDARD_HIGH.get(c, " " if c >= 0xA0 else UNKNOWN)
                 for c in range(256)]
    else:
        raise Undecided(f"the base encoding {name}")
    return tuple(UNKNOWN if c < 0x20 or text == "\ufffd" else text for c, text in enumerate(table))


class FontText:
    """How one font's codes read as text: ``width`` bytes a code, ``table`` code to text (a ``str.translate``
    table), ``known`` the characters (for a two-byte font, codes as characters) that ``table`` maps."""

    def __init__(self, width: int, table: dict[int, str], known: frozenset[str] | None = None):
        self.width, self.table, self.known = width, table, known

    def read(self, data: bytes) -> str:
        if self.width == 1:
            text = data.decode("latin-1").translate(self.table)
            if UNKNOWN in text:
                raise Undecided("a code with no Unicode")
            return text
        if len(data) % 2:
            raise Undecided("a two-byte string of odd length")
        codes = data.decode("utf-16-be", "surrogatepass")
        if not self.known.issuperset(codes):
            raise Undecided("a code its /ToUnicode does not map")
        return codes.translate(self.table)


def font_text(doc: pymupdf.Document, xref: int) -> FontText:
    """The :class:`FontText` of the font object ``xref``; raises Undecided when MuPDF could map its codes
    otherwise (see the module docstring)."""
    subtype = doc.xref_get_key(xref, "Subtype")[1]
    kind, encoding = doc.xref_get_key(xref, "Encoding")
    kind_tu, to_unicode = doc.xref_get_key(xref, "ToUnicode")
    mapping = parse_to_unicode(doc.xref_stream(int(to_unicode.split()[0]))) if kind_tu == "xref" else {}
    if subtype == "/Type0":
        if encoding not in ("/Identity-H", "/Identity-V") or not mapping:
            raise Undecided(f"a composite font with {encoding} and {'a' if mapping else 'no'} /ToUnicode")
        table = {code: text for code, text in mapping.items() if code <= 0xFFFF}
        return FontText(2, table, frozenset(map(chr, table)))
    if subtype not in ("/Type1", "/TrueType", "/MMType1"):
        raise Undecided(f"a {subtype} font")
    base, differences = None, ""
    if kind == "name":
        base = encoding[1:]
    elif kind in ("xref", "dict"):
        source = doc.xref_object(int(encoding.split()[0])) if kind == "xref" else encoding
        found = re.search(r"/BaseEncoding\s*/(\w+)", source)
        base = found.group(1) if found else None
        differences = (_DIFFERENCES.search(source) or [None, ""])[1]
    if base is None:
        name = doc.xref_get_key(xref, "BaseFont")[1].lstrip("/")
        embedded = doc.xref_get_key(xref, "FontDescriptor")[0] != "null" and name not in _BASE14_TEXT
        if subtype != "/Type1" or embedded or name not in _BASE14_TEXT:
            raise Undecided(f"the font {name} has no encoding to read its codes by")
        base = "StandardEncoding"
    table = _base_encoding(base)
    code = 0
    for number, glyph in _DIFF_TOKEN.findall(differences):
        if number:
            code = int(number)
            continue
        if code < 256:
            unicode = mupdf.fz_unicode_from_glyph_name(glyph)
            table[code] = UNKNOWN if unicode in (0, 0xFFFD) else chr(unicode)
        code += 1
    for code, text in mapping.items():
        if code < 256 and text != UNKNOWN:
            table[code] = text
    return FontText(1, dict(enumerate(table)))


def stream_text(data: bytes, fonts: dict[str, FontText]) -> str:
    """The text of content stream ``data`` read through ``fonts`` (resource name to :class:`FontText`), with
    nothing between the strings: raises Undecided for a font it does not know or an inline image. The strings
    shown in one font are read together."""
    if b"TJ" in data:
        data = _ADJACENT_HEX.sub(b"", _ADJACENT_LITERALS.sub(b"", data))
    parts, font, pending = [], None, []
    for comment, name, literal, digits, inline, dictionary in _TOKENS.findall(data):
        if comment:
            continue
        if dictionary:
            if b"ActualText" in dictionary:  # what MuPDF may give for the marked glyphs instead of them
                raise Undecided("marked content with /ActualText")
            continue
        if name:
            if pending:
                parts.append(font.read(b"".join(pending)))
                pending = []
            font = fonts.get(name.decode("latin-1"))
            if font is None:
                raise Undecided(f"the font resource /{name.decode('latin-1')}")
            continue
        if inline:
            raise Undecided("an inline image")
        if font is None:
            raise Undecided("a string shown before any font is set")
        raw = literal[1:-1] if literal else _hex_bytes(digits)
        if literal and b"\\" in raw:
            raw = _unescape(raw)
        if font.width == 2 and len(raw) % 2:
            raise Undecided("a two-byte string of odd length")
        pending.append(raw)
    if pending:
        parts.append(font.read(b"".join(pending)))
    return "".join(parts)


def letters(text: str) -> str:
    """``text`` case folded with everything but letters and digits taken out: what the unspaced look matches."""
    return _NOT_WORD.sub("", text.casefold())


class PageReader:
    """Reads pages of one document through :func:`stream_text`, each font's map made once."""

    def __init__(self, doc: pymupdf.Document):
        self.doc = doc
        self._fonts: dict[int, FontText | Undecided] = {}
        # Streams this reader decompressed, by xref, for the scan of the document's objects to take.
        self.streams: dict[int, bytes] = {}
        self.undecided_document = ("optional content" if doc.is_pdf and doc.xref_get_key(
            doc.pdf_catalog(), "OCProperties")[0] != "null" else "")

    def _font(self, xref: int) -> FontText:
        if xref not in self._fonts:
            try:
                self._fonts[xref] = font_text(self.doc, xref)
            except Undecided as why:
                self._fonts[xref] = why
            except Exception as exc:  # a font dictionary MuPDF cannot read: the page is extracted instead
                self._fonts[xref] = Undecided(f"a damaged font ({exc})")
        found = self._fonts[xref]
        if isinstance(found, Undecided):
            raise found
        return found

    def page_letters(self, page: pymupdf.Page, streams: list[tuple[int, int]]) -> str:
        """The page's text as :func:`letters` gives it: ``streams`` are (xref, invoker) of its content
        streams (invoker 0) and its forms (their own xref as the fonts' referencer). Raises Undecided."""
        if self.undecided_document:
            raise Undecided(self.undecided_document)
        if pageobjects.draws_annots(pageobjects.page_object(pageobjects.pdf_of(self.doc), page.number)):
            raise Undecided("annotations drawn on the page")
        by_referencer: dict[int, dict[str, FontText]] = {}
        for xref, _ext, _type, _base, name, _enc, referencer in page.get_fonts(full=True):
            by_referencer.setdefault(referencer, {})[name] = xref
        parts = []
        for xref, referencer in streams:
            names = by_referencer.get(referencer, {})
            data = self.streams[xref] = self.doc.xref_stream(xref) or b""
            if b"Tf" not in data and b"(" not in data and b"<" not in data:
                continue
            parts.append(stream_text(data, {name: self._font(font) for name, font in names.items()
                                            if name.encode("latin-1") in data}))
        return letters("".join(parts))
