"""Incoming load files as vendors write them: quoted line breaks, encodings, delimiters, multi-page images, LFP."""

import io

import pymupdf
import pytest
from PIL import Image

from matters.incoming.loadfiles import dat_dialect, parse_lfp, parse_opt, read_dat
from matters.incoming.services import import_production
from matters.models import Page
from matters.selectors import pages_for_bates

pytestmark = pytest.mark.django_db
Q, S = "\u00fe", "\u0014"


def native_pdf(texts: list[str]) -> bytes:
    doc = pymupdf.open()
    for text in texts:
        # A text layer counts only with enough letters (MIN_USABLE_CHARS); the rest stays OCR's job.
        doc.new_page(width=612, height=792).insert_text((72, 100), f"{text} Produced in Smith v. Jones.", fontsize=12)
    return doc.tobytes()


def volume_with_natives(root, dat_text: str, encoding: str, documents: dict[str, list[str]]):
    """A volume folder: DATA/VOL001.dat (``dat_text`` in ``encoding``) and NATIVES/<name>.pdf per document."""
    volume = root / "VOL001"
    (volume / "DATA").mkdir(parents=True)
    (volume / "NATIVES").mkdir()
    for name, texts in documents.items():
        (volume / "NATIVES" / f"{name}.pdf").write_bytes(native_pdf(texts))
    (volume / "DATA" / "VOL001.dat").write_bytes(dat_text.encode(encoding))
    return volume


def concordance(rows: list[list[str]], line_end: str = "\r\n") -> str:
    return "".join(S.join(f"{Q}{value}{Q}" for value in row) + line_end for row in rows)


def test_quoted_line_breaks_and_the_newline_stand_in_keep_records_whole(matter, attorney, tmp_path):
    documents = {"A": ["First letter."], "B": ["Second letter."], "C": ["Third letter."]}
    dat = concordance([
        ["BEGDOC", "ENDDOC", "NATIVEPATH", "TITLE"],
        ["ABC000001", "ABC000001", "NATIVES\\A.pdf", "Re: lease\r\nsecond line of the subject"],
        ["ABC000002", "ABC000002", "NATIVES\\B.pdf", "Notes\x0bwith a vertical tab\nand a bare line feed"],
        ["ABC000003", "ABC000003", "NATIVES\\C.pdf", "Minutes\u00aeof the board"],
    ])
    volume = volume_with_natives(tmp_path / "in", dat, "utf-8", documents)
    incoming = import_production(matter=matter, paths=[volume.parent], origin="opposing_party", user=attorney)
    assert incoming.report == []
    assert [e.title for e in matter.exhibits.order_by("label_seq")] == [
        "Re: lease\r\nsecond line of the subject", "Notes\x0bwith a vertical tab\nand a bare line feed",
        "Minutes\nof the board"]
    for number, text in (("ABC000001", "First"), ("ABC000002", "Second"), ("ABC000003", "Third")):
        [page] = pages_for_bates(matter, number)
        assert text in page.text


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be-bom", "utf-8-sig", "utf-8", "cp1252"])
def test_each_file_is_decoded_by_its_own_encoding(matter, attorney, tmp_path, encoding):
    codec, bom = {"utf-16-be-bom": ("utf-16-be", "\ufeff")}.get(encoding, (encoding, ""))
    dat = bom + concordance([["BegBates", "EndBates", "NativePath", "TextPath", "Title"],
                             ["DEF000001", "DEF000002", "NATIVES\\A.pdf", "TEXT\\A.txt", "Café Noël — lease"]])
    volume = volume_with_natives(tmp_path / "in", dat, codec, {"A": ["page one", "page two"]})
    (volume / "TEXT").mkdir()
    text = bom + "Zoë paid €1,200 to Café Noël.\fRésumé of the tenant’s claims."
    (volume / "TEXT" / "A.txt").write_bytes(text.encode(codec))
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert incoming.report == [] and incoming.field_map["begbates"] == "BegBates"
    [first], [second] = pages_for_bates(matter, "DEF000001"), pages_for_bates(matter, "DEF000002")
    assert first.text == "Zoë paid €1,200 to Café Noël." and first.source == Page.Source.LOAD_FILE
    assert second.text == "Résumé of the tenant’s claims." and "\x00" not in second.text
    assert first.exhibit.title == "Café Noël — lease"


def test_a_text_file_whose_encoding_is_uncertain_is_reported(matter, attorney, tmp_path):
    dat = concordance([["BEGDOC", "ENDDOC", "NATIVEPATH", "TEXTPATH"],
                       ["DEF000001", "DEF000001", "NATIVES\\A.pdf", "TEXT\\A.txt"]])
    volume = volume_with_natives(tmp_path / "in", dat, "utf-8", {"A": ["page one"]})
    (volume / "TEXT").mkdir()
    (volume / "TEXT" / "A.txt").write_bytes(bytes(range(128, 256)) * 4)  # no language in any code page
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert any(item.startswith("A.txt: its character encoding is uncertain") for item in incoming.report)


def test_utf16_without_byte_order_mark_is_read_and_reported(matter, attorney, tmp_path):
    dat = concordance([["BEGDOC", "ENDDOC", "NATIVEPATH"], ["DEF000001", "DEF000001", "NATIVES\\A.pdf"]])
    volume = volume_with_natives(tmp_path / "in", dat, "utf-16-le", {"A": ["page one"]})
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert pages_for_bates(matter, "DEF000001")
    assert incoming.report == ["VOL001.dat: its character encoding is uncertain (read as utf-16-le, NUL bytes, no "
                               "byte-order mark); names and text with accented or non-Latin letters may be wrong. "
                               "Ask the producing party for UTF-8 or UTF-16 load files."]


@pytest.mark.parametrize("header, row", [
    ('"BEGDOC","ENDDOC","NATIVEPATH","TITLE"', '"P000001","P000002","NATIVES\\A.pdf","Smith, J. ""Jack"" letter"'),
    ("BEGDOC|ENDDOC|NATIVEPATH|TITLE", 'P000001|P000002|NATIVES\\A.pdf|Smith, J. "Jack" letter'),
    ("BEGDOC\tENDDOC\tNATIVEPATH\tTITLE", 'P000001\tP000002\tNATIVES\\A.pdf\tSmith, J. "Jack" letter'),
    ("^BEGDOC^|^ENDDOC^|^NATIVEPATH^|^TITLE^", '^P000001^|^P000002^|^NATIVES\\A.pdf^|^Smith, J. "Jack" letter^'),
])
def test_delimiter_and_quote_are_found_from_the_header(matter, attorney, tmp_path, header, row):
    volume = volume_with_natives(tmp_path / "in", f"{header}\r\n{row}\r\n", "utf-8", {"A": ["one", "two"]})
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert incoming.report == []
    [page] = pages_for_bates(matter, "P000002")
    assert page.number == 2 and page.exhibit.title == 'Smith, J. "Jack" letter'


def test_a_quote_left_open_is_reported():
    text = f"{Q}BEGDOC{Q}{S}{Q}TITLE{Q}\r\n{Q}A1{Q}{S}{Q}un closed\r\n{Q}A2{Q}{S}{Q}ok{Q}\r\n{Q}A3{Q}{S}{Q}ok{Q}\r\n"
    dat = read_dat(text.encode())
    assert [row[0] for row in dat.rows] == ["A1", "A3"]
    assert dat.problems == ["DAT record 1 (A1) has 3 fields for 2 names, or another record inside a field: a quote "
                            "there is probably not closed; check that document and the one after it."]


def test_header_without_a_known_delimiter_fails_with_a_reason():
    with pytest.raises(ValueError, match="no field delimiter LawDesk knows"):
        dat_dialect("BEGDOC  ENDDOC  TITLE")


def test_parsers_read_the_columns_they_are_given():
    dat = read_dat(concordance([["BEGDOC", "NOTE"], ["A1", "one\r\ntwo\x0bthree\x0cfour"], ["A2", "x"]]).encode())
    assert dat.rows == [["A1", "one\r\ntwo\x0bthree\x0cfour"], ["A2", "x"]]
    [row] = parse_opt(b"DEF000001,VOL001,IMAGES\\001\\DEF000001.TIF,Y,,,3\r\n")
    assert (row.bates, row.pages, row.document_break) == ("DEF000001", 3, True)
    rows = parse_lfp(b"IM,DEF000001,D,1,@VOL001;IMAGES\\001;DEF000001.tif;2,0\r\n"
                     b"IM,DEF000002,,2,@VOL001;IMAGES\\001;DEF000001.tif;2,0\r\n"
                     b"FT,DEF000001,1,1,@VOL001;TEXT\\001;DEF000001.txt\r\n")
    assert [(r.bates, r.image_path, r.page_index, r.document_break) for r in rows] == [
        ("DEF000001", "IMAGES\\001\\DEF000001.tif", 0, True), ("DEF000002", "IMAGES\\001\\DEF000001.tif", 1, False)]


def multipage_tiff(texts: list[str]) -> bytes:
    frames = []
    for text in texts:
        doc = pymupdf.open()
        doc.new_page(width=612, height=792).insert_text((72, 100), text, fontsize=16)
        pixmap = doc[0].get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
        frames.append(Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples).convert("1"))
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", compression="group4", save_all=True, append_images=frames[1:])
    return out.getvalue()


@pytest.mark.ocr
@pytest.mark.parametrize("kind", ["opt", "lfp"])
def test_multipage_tiff_numbers_every_page_with_backslash_paths_in_any_case(matter, attorney, tmp_path, kind):
    volume = tmp_path / "in" / "VOL001"
    (volume / "DATA").mkdir(parents=True)
    (volume / "Images" / "001").mkdir(parents=True)
    texts = ["Invoice 4471 for rent", "Ledger 5582 page two", "Receipt 6693 signed"]
    (volume / "Images" / "001" / "Def000001.Tif").write_bytes(multipage_tiff(texts))
    dat = concordance([["BEGBATES", "ENDBATES"], ["DEF000001", "DEF000003"]])
    (volume / "DATA" / "VOL001.DAT").write_bytes(dat.encode("utf-16"))
    if kind == "opt":
        lines = "DEF000001,VOL001,.\\IMAGES\\001\\DEF000001.TIF,Y,,,3\r\n"
    else:
        lines = "".join(f"IM,DEF00000{n},{'D' if n == 1 else ''},{n},@VOL001;IMAGES\\001;DEF000001.TIF;2,0\r\n"
                        for n in (1, 2, 3))
    (volume / "DATA" / f"VOL001.{kind.upper()}").write_bytes(lines.encode("utf-16"))
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert incoming.report == []
    for number, text in zip(("DEF000001", "DEF000002", "DEF000003"), texts):
        [page] = pages_for_bates(matter, number)
        assert text.split()[1] in page.text and page.number == int(number[-1])


def test_an_import_that_resolves_no_number_is_failed_not_done(matter, attorney, tmp_path):
    dat = concordance([["DOCID", "TITLE"], ["X1", "a letter"]])  # no begin-Bates field at all
    volume = volume_with_natives(tmp_path / "in", dat, "utf-8", {"A": ["page one"]})
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert incoming.status == "failed"
    assert incoming.reason.startswith("No Bates number could be resolved to a page: No begin-Bates field among "
                                      "['DOCID', 'TITLE'] (read with delimiter U+0014, quote 'þ')")
