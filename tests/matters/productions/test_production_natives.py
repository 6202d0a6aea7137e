"""A spreadsheet is produced natively: the file itself in NATIVES/ with its own extension, one Bates-stamped slip
sheet in the page stream, its printed text in TEXT/; the leak scan reads the native too."""

import io
import zipfile

import openpyxl
import pymupdf
import pytest
from openpyxl.comments import Comment

from matters import storage
from matters.exhibits.services import exhibit_create
from matters.models import Exhibit, Page, PrivilegeLogEntry, Production
from matters.privilege.services import redaction_add
from matters.productions.bates.volume import QUOTE, SEPARATOR
from matters.productions.delivery import production_files
from matters.productions.natives import SLIP_HEADING
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

pytestmark = pytest.mark.django_db

PRINTED = ["Ledger\nDate Memo Amount\nMarch 3, 2021 payment 3 98,765.43", "Side payments\nConsulting fee 44,321.09"]
SECRET = "Harlow asked that the consulting fee stay off the board minutes"


def _workbook_bytes() -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Ledger"
    sheet.append(["Date", "Memo", "Amount"])
    sheet.append(["March 3, 2021", "payment 3", 98765.43])
    # A comment is in the native but not on the printed pages.
    sheet["C2"].comment = Comment(SECRET, "CFO")
    workbook.create_sheet("Side payments").append(["Consulting fee", 44321.09])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _ready_workbook(matter, attorney, data: bytes) -> Exhibit:
    """A workbook exhibit as processing leaves it (its printed pages and their text), made directly: what is
    tested here is the production, and printing needs LibreOffice Calc (tests/matters/exhibits/test_spreadsheets)."""
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(data), original_name="ledger.xlsx", origin="client",
                             uploaded_by=attorney, enqueue=False)
    assert exhibit.kind == Exhibit.Kind.WORKBOOK
    doc = pymupdf.open()
    for number, text in enumerate(PRINTED, start=1):
        doc.new_page().insert_text((72, 72), text)
        Page.objects.create(exhibit=exhibit, number=number, text=text, source="pdf", width_pt=612, height_pt=792)
    display = storage.derived_dir(exhibit.pk) / "display.pdf"
    display.parent.mkdir(parents=True, exist_ok=True)
    doc.save(display)
    Exhibit.objects.filter(pk=exhibit.pk).update(status=Exhibit.Status.READY, page_count=len(PRINTED))
    exhibit.refresh_from_db()
    return exhibit


def _memo(matter, attorney, text: str) -> Exhibit:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text)
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(doc.tobytes()), original_name="memo.pdf",
                             origin="client", uploaded_by=attorney, enqueue=False)
    Page.objects.create(exhibit=exhibit, number=1, text=text, source="pdf", width_pt=612, height_pt=792)
    Exhibit.objects.filter(pk=exhibit.pk).update(status=Exhibit.Status.READY, page_count=1)
    exhibit.refresh_from_db()
    return exhibit


def _produce(matter, attorney, exhibits, **options) -> Production:
    return production_run(production_id=production_create(matter=matter, exhibits=exhibits, prefix="RUIZ",
                                                          created_by=attorney, enqueue=False, **options).pk)


def test_a_spreadsheet_is_produced_natively_behind_a_stamped_slip_sheet(matter, attorney):
    data = _workbook_bytes()
    workbook = _ready_workbook(matter, attorney, data)
    memo = _memo(matter, attorney, "A memo about parking permits for the tenants.")
    production = _produce(matter, attorney, [workbook, memo], with_images=True)
    assert production.status == Production.Status.DONE, production.reason
    assert (production.first, production.last, production.page_count) == ("RUIZ000001", "RUIZ000002", 2)
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        names = set(volume.namelist())
        assert volume.read("VOL001/NATIVES/RUIZ000001.xlsx") == data  # byte for byte
        assert "VOL001/NATIVES/RUIZ000001.pdf" not in names and "VOL001/NATIVES/RUIZ000002.pdf" in names
        assert "VOL001/IMAGES/RUIZ000001.tif" in names and "VOL001/IMAGES/RUIZ000002.tif" in names
        text = volume.read("VOL001/TEXT/RUIZ000001.txt").decode("utf-8")
        dat = volume.read("VOL001/DATA/VOL001.dat").decode("utf-8").split("\r\n")
    assert text.startswith("[RUIZ000001]\n") and "98,765.43" in text and "44,321.09" in text
    header = [f.strip(QUOTE) for f in dat[0].split(SEPARATOR)]
    row = dict(zip(header, (f.strip(QUOTE) for f in dat[1].split(SEPARATOR))))
    assert (row["BEGBATES"], row["ENDBATES"], row["PAGECOUNT"]) == ("RUIZ000001", "RUIZ000001", "1")
    assert row["NATIVEPATH"] == "VOL001\\NATIVES\\RUIZ000001.xlsx" and row["SHA256"] == workbook.sha256
    with pymupdf.open(production_files(production)["pdf"]) as combined:
        slip = combined[1].get_text()  # after the index page
    assert SLIP_HEADING in slip and "RUIZ000001" in slip and "NATIVES\\RUIZ000001.xlsx" in slip


def test_the_leak_scan_reads_the_native_spreadsheet(matter, attorney):
    workbook = _ready_workbook(matter, attorney, _workbook_bytes())
    withheld = _memo(matter, attorney, SECRET + ".")
    production = _produce(matter, attorney, [workbook, withheld], withheld={withheld.pk: {
        "basis": "attorney_client", "description": "Note from counsel re board minutes"}})
    assert production.status == Production.Status.FAILED
    assert "NATIVES/RUIZ000001.xlsx" in production.reason and "withheld" in production.reason
    assert not production_files(production)["zip"].exists()


def test_a_redacted_spreadsheet_is_produced_as_its_pages(matter, attorney):
    workbook = _ready_workbook(matter, attorney, _workbook_bytes())
    page = workbook.pages.get(number=2)
    redaction_add(page=page, rect=[60, 50, 300, 100], reason="AC", user=attorney)
    production = _produce(matter, attorney, [workbook])
    assert production.status == Production.Status.DONE, production.reason
    assert production.page_count == 2
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        names = set(volume.namelist())
    assert "VOL001/NATIVES/RUIZ000001.pdf" in names and not any(name.endswith(".xlsx") for name in names)
    assert PrivilegeLogEntry.objects.get().document_type == "Spreadsheet"
