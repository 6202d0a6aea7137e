"""Spreadsheets as exhibits: XLSX, XLS, ODS and CSV accepted and named, rendered as printed with values (not
formulas), hidden sheets, rows and columns shown and reported, cell values as searchable page text that grounds
the verifier's amounts and dates, and bad workbooks refused with the reason and the original kept."""

import subprocess
import zipfile
from datetime import datetime

import openpyxl
import pytest

from matters import storage
from matters.drafts.verifier.check import verify_text
from matters.exhibits.ingest.sheets import (
    _csv_to_xlsx,
    calc_installed,
    inspect_workbook,
    printable_copy,
    workbook_to_pdf,
)
from matters.exhibits.ingest.spec import IngestFailure, Spec
from matters.exhibits.sniff import looks_like_csv, sniff
from matters.models import Exhibit
from tests.support.record import by_text

pytestmark = pytest.mark.django_db
# Printing needs LibreOffice Calc (Debian libreoffice-calc-nogui); where only Writer is installed the upload fails
# with that reason (tested below) and the tests of the printed pages are skipped.
needs_calc = pytest.mark.skipif(not calc_installed(), reason="LibreOffice Calc is not installed")


def _ledger(path, *, hidden=True):
    """A two-sheet ledger: a total by formula, a hidden row (5) and column (B), and a hidden sheet."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Ledger"
    sheet.append(["Date", "Memo", "Amount"])
    for day, amount in zip(range(1, 8), (1200.00, 350.25, 98765.43, 10.00, 2500.00, 75.50, 14.99), strict=True):
        sheet.append([f"March {day}, 2021", f"payment {day}", amount])
    for row in range(2, 9):
        sheet.cell(row=row, column=3).number_format = "#,##0.00"
    sheet["A10"] = "Total"
    sheet["C10"] = "=SUM(C2:C8)"
    sheet["C10"].number_format = "#,##0.00"
    sheet.column_dimensions["A"].width = 18
    sheet.column_dimensions["B"].width = 14
    sheet.column_dimensions["C"].width = 14
    if hidden:
        sheet.row_dimensions[4].hidden = True
        sheet.column_dimensions["B"].hidden = True
    secret = workbook.create_sheet("Side payments")
    secret["A1"] = "Consulting fee to Harlow"
    secret["B1"] = 44321.09
    secret["B1"].number_format = "#,##0.00"
    if hidden:
        secret.sheet_state = "hidden"
    workbook.save(path)
    return path


_LONG_NOTE = ("Note: the retainer was paid through the Limassol account at the direction of the managing partner, "
              "who asked that it be kept off the firm's general ledger until the audit of March 2021 was closed.")


def _narrow_book(path):
    """A sheet as Excel saves one: a label and a figure in columns narrower than their text, a note longer than a
    page is wide, a column hidden at width 0, and formulas with the values Excel last showed saved beside them
    (=TODAY() saved on July 6, 2009) or none."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Fees"
    sheet["A1"] = "Consulting fee to Harlow, March retainer"
    sheet["B1"] = 1234567.89
    sheet["B1"].number_format = "#,##0.00"
    sheet["C1"] = "wire via Cyprus"
    sheet["D1"] = "end"
    sheet["A2"] = "Saved on"
    sheet["B2"] = "=TODAY()"
    sheet["B2"].number_format = "yyyy-mm-dd"
    sheet["A3"] = "Doubled"
    sheet["B3"] = "=B1*2"
    sheet["B3"].number_format = "#,##0.00"
    sheet["A4"] = "Never saved"
    sheet["B4"] = "=1+1"
    sheet["A5"] = _LONG_NOTE
    sheet["B5"] = "see"
    sheet.column_dimensions["A"].width = 6
    sheet.column_dimensions["B"].width = 4
    workbook.save(path)
    with zipfile.ZipFile(path) as package:
        parts = {info.filename: package.read(info) for info in package.infolist()}
    xml = parts["xl/worksheets/sheet1.xml"].decode()
    xml = xml.replace("<f>TODAY()</f><v></v>", "<f>TODAY()</f><v>40000</v>")  # 2009-07-06
    xml = xml.replace("<f>B1*2</f><v></v>", "<f>B1*2</f><v>2469135.78</v>")
    xml = xml.replace("</cols>", '<col min="3" max="3" width="0" hidden="1" customWidth="1"/></cols>')
    parts["xl/worksheets/sheet1.xml"] = xml.encode()
    with zipfile.ZipFile(path, "w") as package:
        for name, data in parts.items():
            package.writestr(name, data)
    return path


def _text(exhibit):
    return "\n".join(exhibit.pages.order_by("number").values_list("text", flat=True))


@needs_calc
def test_an_xlsx_is_accepted_named_and_printed_with_values_not_formulas(matter, tmp_path, ingest):
    exhibit = ingest(matter, _ledger(tmp_path / "ledger.xlsx", hidden=False))
    assert (exhibit.status, exhibit.kind, exhibit.type_name) == (Exhibit.Status.READY, "workbook", "Excel workbook"), \
        exhibit.reason
    text = _text(exhibit)
    assert "98,765.43" in text and "March 3, 2021" in text
    assert "102,916.17" in text  # the SUM's value, as printed
    assert "SUM(" not in text
    assert "Consulting fee to Harlow" in text and "44,321.09" in text  # every sheet is a page
    assert not any("hidden" in note for note in exhibit.notes)


@needs_calc
def test_hidden_sheets_rows_and_columns_are_shown_and_reported(matter, tmp_path, ingest):
    exhibit = ingest(matter, _ledger(tmp_path / "ledger.xlsx"))
    assert exhibit.status == Exhibit.Status.READY, exhibit.reason
    text = _text(exhibit)
    # Row 4 (March 3) and column B (the memos) are hidden in the file; the hidden sheet holds the side payment.
    assert "98,765.43" in text and "payment 3" in text and "payment 1" in text
    assert "Consulting fee to Harlow" in text
    notes = " ".join(exhibit.notes)
    assert "Sheet “Side payments” is hidden in the workbook; it is shown" in notes
    assert "Sheet “Ledger”: hidden row(s) 4 shown" in notes
    assert "Sheet “Ledger”: hidden column(s) B shown" in notes
    # The original is kept byte for byte: hidden in the native as it came.
    with open(storage.blob_path(exhibit.sha256), "rb") as blob:  # a stored blob has no suffix for openpyxl to judge
        stored = openpyxl.load_workbook(blob)
    assert stored["Side payments"].sheet_state == "hidden" and stored["Ledger"].row_dimensions[4].hidden


@needs_calc
def test_a_cited_ledger_figure_and_date_are_grounded_on_its_page(matter, tmp_path, ingest):
    exhibit = ingest(matter, _ledger(tmp_path / "ledger.xlsx"), origin="opposing_party")
    assert exhibit.status == Exhibit.Status.READY, exhibit.reason
    label = exhibit.label
    findings = verify_text(matter=matter, text=(
        f"The ledger records a payment of $98,765.43 on March 3, 2021. Ex. {label} at 1. "
        f"It records another of $98,765.44 on March 9, 2021. Ex. {label} at 1."))
    assert by_text(findings, "$98,765.43").status == "grounded"
    assert by_text(findings, "March 3, 2021").status == "grounded"
    assert by_text(findings, "$98,765.44").status != "grounded"
    assert by_text(findings, "March 9, 2021").status != "grounded"


@needs_calc
def test_csv_fields_are_printed_as_written(matter, tmp_path, ingest):
    path = tmp_path / "payments.csv"
    path.write_bytes("Date,Payee,Amount\r\n03/04/2021,Acme Roofing and Gutter Services LLC,\"1,234.50\"\r\n"
                     "2021-03-05,Café Zoë,=1+1\r\n".encode())
    exhibit = ingest(matter, path)
    assert (exhibit.status, exhibit.kind, exhibit.type_name) == (Exhibit.Status.READY, "workbook", "CSV table"), \
        exhibit.reason
    text = _text(exhibit)
    assert "03/04/2021" in text and "2021-03-05" in text and "1,234.50" in text and "=1+1" in text
    assert "Café Zoë" in text and "Acme Roofing and Gutter Services LLC" in text  # its column as wide as the field


@needs_calc
def test_cells_are_printed_whole_with_the_values_saved_in_the_file(matter, tmp_path, ingest):
    exhibit = ingest(matter, _narrow_book(tmp_path / "fees.xlsx"))
    assert exhibit.status == Exhibit.Status.READY, exhibit.reason
    text = _text(exhibit)
    # Not cut at the column's edge, not "###", and the hidden column at width 0 is there to read.
    assert "Consulting fee to Harlow, March retainer" in text and "1,234,567.89" in text and "###" not in text
    assert "wire via Cyprus" in text
    assert _LONG_NOTE in " ".join(text.split())  # wrapped within its cell, every line on the page
    # =TODAY() prints the day the file was saved, not the day it was printed; B1*2 its saved figure.
    assert "2009-07-06" in text and "2,469,135.78" in text
    notes = " ".join(exhibit.notes)
    assert "Sheet “Fees”: 1 formula cell(s) had no value saved in the file (B4)" in notes
    assert "Sheet “Fees”: hidden column(s) C shown" in notes


@needs_calc
def test_a_print_area_leaves_no_cell_off_the_pages(matter, tmp_path, ingest):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Ledger"
    sheet["A1"] = "Opening balance"
    sheet["A5"] = "Wire to Harlow outside the print area"
    sheet.print_area = "A1:B2"  # Calc prints only this range
    workbook.save(tmp_path / "area.xlsx")
    exhibit = ingest(matter, tmp_path / "area.xlsx")
    assert exhibit.status == Exhibit.Status.READY, exhibit.reason
    assert "Opening balance" in _text(exhibit) and "Wire to Harlow outside the print area" in _text(exhibit)
    assert "Sheet “Ledger”: its print area ('Ledger'!$A$1:$B$2) is set aside; every cell of the sheet is printed." \
        in exhibit.notes
    # The original keeps its print area.
    with open(storage.blob_path(exhibit.sha256), "rb") as blob:
        assert openpyxl.load_workbook(blob)["Ledger"].print_area == "'Ledger'!$A$1:$B$2"


@pytest.fixture(scope="module")
def ledger_as(tmp_path_factory):
    """Return ``fn(ext)``: the ledger (hidden parts and all) saved by LibreOffice as ``ext`` (xls, ods)."""
    folder = tmp_path_factory.mktemp("sheets")
    source = _ledger(folder / "ledger.xlsx")

    def convert(ext: str):
        filters = {"xls": "xls:MS Excel 97", "ods": "ods"}
        subprocess.run(["soffice", f"-env:UserInstallation=file://{folder}/profile", "--headless", "--norestore",
                        "--convert-to", filters[ext], "--outdir", str(folder / ext), str(source)],
                       capture_output=True, timeout=300, check=True)
        return folder / ext / f"ledger.{ext}"

    return convert


@needs_calc
@pytest.mark.parametrize("ext, mime, name", [
    ("xls", "application/vnd.ms-excel", "Excel workbook"),
    ("ods", "application/vnd.oasis.opendocument.spreadsheet", "OpenDocument spreadsheet"),
])
def test_xls_and_ods_are_printed_with_their_hidden_parts_shown(ext, mime, name, ledger_as, matter, ingest):
    exhibit = ingest(matter, ledger_as(ext))
    assert (exhibit.status, exhibit.mime_type, exhibit.type_name) == (Exhibit.Status.READY, mime, name), \
        exhibit.reason
    text = _text(exhibit)
    assert "98,765.43" in text and "Consulting fee to Harlow" in text and "payment 3" in text
    notes = " ".join(exhibit.notes)
    assert "Sheet “Side payments” is hidden" in notes and "hidden row(s) 4" in notes


def test_a_password_protected_workbook_asks_for_its_password(matter, tmp_path, ingest):
    import msoffcrypto  # noqa: F401
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = _ledger(tmp_path / "plain.xlsx", hidden=False)
    locked = tmp_path / "locked.xlsx"
    with open(plain, "rb") as source, open(locked, "wb") as target:
        OOXMLFile(source).encrypt("s3cret", target)
    exhibit = ingest(matter, locked)
    assert exhibit.status == Exhibit.Status.NEEDS_PASSWORD, exhibit.reason
    assert "password" in exhibit.reason


def test_a_damaged_workbook_fails_with_the_reason_and_is_kept(matter, tmp_path, ingest):
    good = _ledger(tmp_path / "good.xlsx")
    # A package whose first sheet is cut off mid-element: sniffed as a workbook, not readable as one.
    damaged = tmp_path / "damaged.xlsx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(damaged, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            target.writestr(info, data[: len(data) // 2] if info.filename == "xl/worksheets/sheet1.xml" else data)
    exhibit = ingest(matter, damaged)
    assert exhibit.status == Exhibit.Status.FAILED
    assert "damaged" in exhibit.reason and "original is kept unchanged" in exhibit.reason
    assert storage.blob_path(exhibit.sha256).read_bytes() == damaged.read_bytes()


def test_a_sheet_over_the_cell_limit_is_refused_with_the_limit(matter, tmp_path, ingest, settings):
    settings.LAWDESK_SHEET_MAX_CELLS = 1000
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row in range(1, 101):
        sheet.append([row * column for column in range(1, 21)])
    workbook.save(tmp_path / "big.xlsx")
    exhibit = ingest(matter, tmp_path / "big.xlsx")
    assert exhibit.status == Exhibit.Status.FAILED
    assert "2,000 cells" in exhibit.reason and "LAWDESK_SHEET_MAX_CELLS" in exhibit.reason


def test_sniff_names_each_spreadsheet_and_refuses_an_outlook_data_file(tmp_path):
    xlsx = _ledger(tmp_path / "a.xlsx")
    assert sniff(xlsx, xlsx.read_bytes()[:8192]).description == "Excel workbook (XLSX)"
    pst = tmp_path / "archive.pst"
    pst.write_bytes(b"!BDN" + bytes(508))
    found = sniff(pst, pst.read_bytes())
    assert found.kind == "other" and "Outlook data file (PST)" in found.refusal
    assert looks_like_csv(b"a,b,c\n1,2,3\n") and not looks_like_csv(b"Dear Sir, hello.\nRegards\n")


def test_a_pst_upload_is_refused_with_why_and_kept(matter, tmp_path, ingest):
    pst = tmp_path / "archive.pst"
    pst.write_bytes(b"!BDN" + bytes(1020))
    exhibit = ingest(matter, pst)
    assert exhibit.status == Exhibit.Status.REJECTED and exhibit.quarantined
    assert "Outlook data file (PST)" in exhibit.reason and "MBOX" in exhibit.reason
    assert storage.blob_path(exhibit.sha256, quarantined=True).read_bytes() == pst.read_bytes()


def test_the_hidden_parts_are_named_and_unhidden_in_the_copy_printed(tmp_path):
    ledger = _ledger(tmp_path / "ledger.xlsx")
    notes = inspect_workbook(ledger, 0)
    assert notes == ["Sheet “Side payments” is hidden in the workbook; it is shown on these pages.",
                     "Sheet “Ledger”: hidden row(s) 4 shown on these pages.",
                     "Sheet “Ledger”: hidden column(s) B shown on these pages."]
    printable_copy(ledger, tmp_path / "shown.xlsx")
    shown = openpyxl.load_workbook(tmp_path / "shown.xlsx")
    assert shown["Side payments"].sheet_state == "visible"
    assert not shown["Ledger"].row_dimensions[4].hidden and not shown["Ledger"].column_dimensions["B"].hidden
    assert shown["Ledger"]["C10"].value == "=SUM(C2:C8)" and shown["Ledger"]["C4"].value == 98765.43
    assert inspect_workbook(tmp_path / "shown.xlsx", 0) == []


def test_the_printed_copy_holds_saved_values_and_columns_as_wide_as_their_text(tmp_path):
    notes = printable_copy(_narrow_book(tmp_path / "fees.xlsx"), tmp_path / "shown.xlsx")
    assert notes == ["Sheet “Fees”: 1 formula cell(s) had no value saved in the file (B4); the values printed there "
                     "were calculated by LibreOffice."]
    sheet = openpyxl.load_workbook(tmp_path / "shown.xlsx")["Fees"]
    assert (sheet["B2"].value, sheet["B3"].value, sheet["B4"].value) == (datetime(2009, 7, 6), 2469135.78, "=1+1")
    assert "D" not in sheet.column_dimensions  # "end" fits the default width: the column is left as it was
    widths = {letter: sheet.column_dimensions[letter].width for letter in "ABC"}
    assert widths["A"] >= len("Consulting fee to Harlow, March retainer") and widths["B"] >= len("2,469,135.78")
    assert widths["C"] >= len("wire via Cyprus") and not sheet.column_dimensions["C"].hidden
    # The note is wider than any column is made: it wraps from the top of its cell, its row tall enough for 3 lines.
    assert widths["A"] == 90 and sheet["A5"].alignment.wrap_text and sheet["A5"].alignment.vertical == "top"
    assert sheet.row_dimensions[5].height >= 45 and not sheet["A1"].alignment.wrap_text


def test_a_cell_with_more_text_than_the_tallest_row_is_named(tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.title = "Notes"
    workbook.active["A1"] = "word " * 1000
    workbook.save(tmp_path / "notes.xlsx")
    notes = printable_copy(tmp_path / "notes.xlsx", tmp_path / "shown.xlsx")
    assert notes == ["Sheet “Notes”: cell(s) A1 hold more text than a printed cell shows (409 points of lines); the "
                     "pages show the beginning, the native all of it."]
    assert openpyxl.load_workbook(tmp_path / "shown.xlsx")["Notes"].row_dimensions[1].height == 409


def test_a_csv_is_laid_out_as_text_cells_as_written(tmp_path):
    path = tmp_path / "payments.csv"
    path.write_bytes('Date,Amount\r\n03/04/2021,"1,234.50"\r\n2021-03-05,=1+1\r\n'.encode())
    _csv_to_xlsx(path, tmp_path / "table.xlsx", 0)
    sheet = openpyxl.load_workbook(tmp_path / "table.xlsx").active
    assert [[cell.value for cell in row] for row in sheet.iter_rows()] == [
        ["Date", "Amount"], ["03/04/2021", "1,234.50"], ["2021-03-05", "=1+1"]]
    assert {cell.data_type for row in sheet.iter_rows() for cell in row} == {"s"}


def test_calc_is_told_from_writer_alone_and_its_absence_named(tmp_path, monkeypatch):
    # Runs where Calc is installed too: a PATH whose soffice has no libsclo.so beside it is LibreOffice without Calc.
    program = tmp_path / "program"
    program.mkdir()
    (program / "soffice").write_text("#!/bin/sh\nexit 1\n")
    (program / "soffice").chmod(0o755)
    monkeypatch.setenv("PATH", str(program))
    assert not calc_installed()
    source = _ledger(tmp_path / "ledger.xlsx")
    with pytest.raises(IngestFailure, match="libreoffice-calc-nogui"):
        workbook_to_pdf(Spec(source=str(source), kind="workbook", out_dir=str(tmp_path / "out")), tmp_path / "out", [])
    (program / "libsclo.so").write_bytes(b"")
    assert calc_installed()


# The upload end to end, where only Writer is installed; where Calc is, the test above checks the same message.
@pytest.mark.skipif(calc_installed(), reason="checks the upload without LibreOffice Calc, and Calc is installed")
def test_without_calc_a_spreadsheet_fails_naming_the_package_to_install(matter, tmp_path, ingest):
    exhibit = ingest(matter, _ledger(tmp_path / "ledger.xlsx"))
    assert (exhibit.status, exhibit.kind) == (Exhibit.Status.FAILED, "workbook")
    assert "libreoffice-calc-nogui" in exhibit.reason and "original is kept unchanged" in exhibit.reason
