"""The files of a production volume as review platforms load them.

- Concordance DAT: one header row, then one row per document; every field wrapped in the quote character þ
  (U+00FE) and fields separated by U+0014, lines ended with CRLF, UTF-8. (The de facto Concordance/Relativity
  load-file convention.)
- Opticon OPT: one row per page image: ``BATES,VOLUME,IMAGE PATH,DOCUMENT BREAK,FOLDER BREAK,BOX BREAK,PAGES``
  where the document break is ``Y`` on a document's first page and PAGES is the document's page count there.
- Page images: single-page TIFF, CCITT Group 4 for black-and-white pages, JPEG compression for colour pages.
"""

import csv
import io

import numpy
import pymupdf
from PIL import Image

QUOTE = "\u00fe"
SEPARATOR = "\u0014"
DAT_FIELDS = [
    "BEGBATES", "ENDBATES", "PAGECOUNT", "TITLE", "ORIGIN", "CUSTODIAN", "CONFIDENTIALITY", "SHA256", "TEXTPATH",
    "NATIVEPATH",
    # A family and a message's headers (matters.productions.families).
    "BEGATTACH", "ENDATTACH", "PARENT_BATES", "ATTACHMENT_COUNT", "FROM", "TO", "CC", "BCC", "SUBJECT", "DATESENT",
    "TIMESENT",
]
# ``removed``: the active content taken out of the produced copy (bates/active.py), "; "-separated.
INDEX_FIELDS = ["label", "title", "first_bates", "last_bates", "pages", "sha256", "origin", "confidentiality",
                "removed"]
IMAGE_DPI = 300
COLOUR_PROBE_DPI = 36
COLOUR_SPREAD = 48  # channel spread that counts as colour rather than grey, on a 0-255 scale


def _dat_field(value) -> str:
    text = "" if value is None else str(value)
    # The quote and separator characters cannot appear inside a field; line breaks would split the row.
    text = text.replace(QUOTE, "").replace(SEPARATOR, " ").replace("\r", " ").replace("\n", " ")
    return f"{QUOTE}{text}{QUOTE}"


def dat_bytes(rows: list[dict]) -> bytes:
    """Concordance DAT for ``rows`` (dicts keyed by DAT_FIELDS), UTF-8 with CRLF line ends."""
    lines = [SEPARATOR.join(_dat_field(name) for name in DAT_FIELDS)]
    lines += [SEPARATOR.join(_dat_field(row.get(name)) for name in DAT_FIELDS) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def opt_bytes(volume: str, documents: list[list[str]]) -> bytes:
    """Opticon OPT for ``documents`` (each a list of its pages' Bates numbers, in order): ASCII, or UTF-8 with a
    BOM when a Bates number has other characters."""
    lines = []
    for pages in documents:
        for index, bates in enumerate(pages):
            first = index == 0
            lines.append(f"{bates},{volume},IMAGES\\{bates}.tif,{'Y' if first else ''},,,{len(pages) if first else ''}")
    text = "\r\n".join(lines) + "\r\n"
    # Opticon readers expect ANSI; a Bates suffix in another script needs Unicode, marked by a BOM so that
    # readers (LawDesk's own included) need not guess.
    return text.encode("ascii") if text.isascii() else text.encode("utf-8-sig")


def index_csv_bytes(rows: list[dict]) -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=INDEX_FIELDS, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def page_is_colour(page: pymupdf.Page) -> bool:
    """True when any visible part of the page is noticeably coloured (checked on a coarse rendering)."""
    pixmap = page.get_pixmap(dpi=COLOUR_PROBE_DPI, colorspace=pymupdf.csRGB, alpha=False)
    samples = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8).reshape(-1, 3).astype(numpy.int16)
    spread = samples.max(axis=1) - samples.min(axis=1)
    return bool((spread > COLOUR_SPREAD).mean() > 0.001)


def tiff_bytes(page: pymupdf.Page) -> bytes:
    """The page as a single-page TIFF at IMAGE_DPI: Group 4 if black and white, JPEG-compressed if colour."""
    colour = page_is_colour(page)
    pixmap = page.get_pixmap(dpi=IMAGE_DPI, colorspace=pymupdf.csRGB if colour else pymupdf.csGRAY, alpha=False)
    image = Image.frombytes("RGB" if colour else "L", (pixmap.width, pixmap.height), pixmap.samples)
    out = io.BytesIO()
    if colour:
        image.save(out, format="TIFF", compression="jpeg", quality=85, dpi=(IMAGE_DPI, IMAGE_DPI))
    else:
        image.point(lambda v: 255 if v > 160 else 0).convert("1").save(
            out, format="TIFF", compression="group4", dpi=(IMAGE_DPI, IMAGE_DPI)
        )
    return out.getvalue()
