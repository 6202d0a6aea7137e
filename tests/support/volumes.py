"""An incoming production volume as vendors deliver it (DAT and OPT load files, text files, TIFF images), built
in a temp folder so import tests need no stored volume."""

import io
import zipfile
from pathlib import Path

import pymupdf
from PIL import Image

from matters.productions.bates.volume import dat_bytes

PAGES_PER_DOCUMENT = [3, 2, 2]


def page_text(number: int) -> str:
    """Return the text of ledger page ``number`` (1-based) of the test volume."""
    return f"Ledger page {number}: rent of $1,2{number}0.00 received on March {number}, 2021."


def page_image(number: int) -> bytes:
    """Return ledger page ``number`` as a single-page bilevel Group 4 TIFF at 100 dpi, as vendors deliver images."""
    doc = pymupdf.open()
    doc.new_page(width=612, height=792).insert_text((72, 100), page_text(number), fontsize=14)
    pixmap = doc[0].get_pixmap(dpi=100, colorspace=pymupdf.csGRAY)
    out = io.BytesIO()
    Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples).convert("1").save(
        out, format="TIFF", compression="group4")
    return out.getvalue()


def build_volume(root, *, missing: int | None = None, repeat: int | None = None, prefix: str = "DEF",
                 pages_per_document: list[int] = PAGES_PER_DOCUMENT):
    """By default three documents, seven pages (``pages_per_document``: as many documents of those page counts):
    DAT (vendor field names) + OPT + TEXT + single-page TIFF images, numbered ``prefix``000001 on."""
    volume = root / "VOL001"
    for folder in ("DATA", "IMAGES", "TEXT"):
        (volume / folder).mkdir(parents=True)
    rows, opt, number = [], [], 1
    for count in pages_per_document:
        numbers = list(range(number, number + count))
        first, last = f"{prefix}{numbers[0]:06d}", f"{prefix}{numbers[-1]:06d}"
        rows.append({"BEGBATES": first, "ENDBATES": last, "TEXTPATH": f"TEXT\\{first}.txt"})
        (volume / "TEXT" / f"{first}.txt").write_text("\f".join(page_text(n) for n in numbers))
        for index, n in enumerate(numbers):
            bates = f"{prefix}{n:06d}"
            if n != missing:
                (volume / "IMAGES" / f"{bates}.tif").write_bytes(page_image(n))
            first_of_document = index == 0
            opt.append(f"{bates},VOL001,IMAGES\\{bates}.tif,{'Y' if first_of_document else ''},,,"
                       f"{count if first_of_document else ''}")
            if n == repeat:
                opt.append(f"{bates},VOL001,IMAGES\\{bates}.tif,,,,")
        number += count
    dat = dat_bytes(rows).decode("utf-8").replace("BEGBATES", "BegBates").replace("ENDBATES", "EndDoc")
    (volume / "DATA" / "VOL001.dat").write_text(dat, encoding="utf-8")
    (volume / "DATA" / "VOL001.opt").write_text("\r\n".join(opt) + "\r\n")
    return volume


def zipped_volume(root: Path) -> Path:
    """Build the default volume under ``root`` and return it packed as ``root/VOL001.zip``, as it is uploaded."""
    volume = build_volume(root / "in")
    archive = root / "VOL001.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        for path in volume.rglob("*"):
            if path.is_file():
                packed.write(path, path.relative_to(volume.parent))
    return archive


def text_image(text: str) -> bytes:
    """One Letter page reading ``text`` as a bilevel Group 4 TIFF at 100 dpi (a page image or a slip sheet)."""
    doc = pymupdf.open()
    doc.new_page(width=612, height=792).insert_text((72, 100), text, fontsize=14)
    pixmap = doc[0].get_pixmap(dpi=100, colorspace=pymupdf.csGRAY)
    out = io.BytesIO()
    Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples).convert("1").save(
        out, format="TIFF", compression="group4")
    return out.getvalue()


def build_loadfile_volume(root: Path, rows: list[dict], images: dict[str, str],
                          files: dict[str, bytes] | None = None) -> Path:
    """A volume as review platforms write one: ``rows`` (dicts keyed by the DAT fields LawDesk's own productions
    write: BEGBATES, NATIVEPATH, BEGATTACH, PARENT_BATES, ...) as a Concordance DAT, one single-page TIFF per
    Bates number in ``images`` (its text; each document's first page starts a document in the OPT) and ``files``
    at their paths under the volume (natives, text files). Returns the volume folder."""
    volume = root / "VOL001"
    (volume / "DATA").mkdir(parents=True)
    (volume / "IMAGES").mkdir()
    starts = {row["BEGBATES"] for row in rows}
    opt = []
    for bates, text in images.items():
        (volume / "IMAGES" / f"{bates}.tif").write_bytes(text_image(text))
        opt.append(f"{bates},VOL001,IMAGES\\{bates}.tif,{'Y' if bates in starts else ''},,,")
    for path, data in (files or {}).items():
        (volume / path).parent.mkdir(parents=True, exist_ok=True)
        (volume / path).write_bytes(data)
    (volume / "DATA" / "VOL001.dat").write_bytes(dat_bytes(rows))
    if opt:
        (volume / "DATA" / "VOL001.opt").write_text("\r\n".join(opt) + "\r\n")
    return volume
