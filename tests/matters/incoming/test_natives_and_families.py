"""Received volumes as review platforms write them: a workbook produced natively behind a slip sheet is read as
the workbook (its figures are evidence under the document's one Bates number), a native that cannot be read says
why while the rest of the volume goes on, and BEGATTACH/ENDATTACH/PARENT_BATES make families."""

import io
import zipfile

import openpyxl
import pymupdf
import pytest

from matters import storage
from matters.drafts.verifier.check import verify_text
from matters.exhibits.ingest.sheets import calc_installed
from matters.incoming.loadfiles import guess_field_map
from matters.incoming.services import import_production
from matters.models import Exhibit
from matters.selectors import exhibit_family, exhibits_of_matter, pages_for_bates
from tests.matters.exhibits.email_messages import as_bytes, message
from tests.support.record import by_text
from tests.support.volumes import build_loadfile_volume

pytestmark = pytest.mark.django_db
needs_calc = pytest.mark.skipif(not calc_installed(), reason="LibreOffice Calc is not installed")
SLIP = "DOCUMENT PRODUCED IN NATIVE FORMAT"


def native_pdf(text: str) -> bytes:
    doc = pymupdf.open()
    # A text layer counts only with enough letters (MIN_USABLE_CHARS); the rest stays OCR's job.
    doc.new_page(width=612, height=792).insert_text((72, 100), f"{text} Produced in Smith v. Jones.", fontsize=12)
    return doc.tobytes()


def ledger_xlsx() -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Ledger"
    sheet.append(["Date", "Memo", "Amount"])
    for day, amount in ((1, 1200.00), (3, 98765.43), (9, 14.99)):
        sheet.append([f"March {day}, 2021", f"payment {day}", amount])
    for row in range(2, 5):
        sheet.cell(row=row, column=3).number_format = "#,##0.00"
    sheet.column_dimensions["A"].width = 18
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def imported(matter, attorney, volume):
    return import_production(matter=matter, paths=[volume.parent], origin="opposing_party", user=attorney)


def test_family_columns_are_matched_under_the_names_review_platforms_write():
    header = ["BegDoc", "EndDoc", "Beg Attach", "END_ATTACH", "ParentID", "Native Link"]
    assert guess_field_map(header) == {"begbates": "BegDoc", "endbates": "EndDoc", "nativepath": "Native Link",
                                       "begattach": "Beg Attach", "endattach": "END_ATTACH",
                                       "parentbates": "ParentID"}
    assert guess_field_map(["BEGBATES", "ENDBATES", "BEGATTACH", "ENDATTACH", "PARENT_BATES"])["parentbates"] == (
        "PARENT_BATES")


@needs_calc
def test_a_workbook_behind_a_slip_sheet_is_read_as_the_workbook(matter, attorney, tmp_path):
    workbook = ledger_xlsx()
    volume = build_loadfile_volume(tmp_path / "in", [
        {"BEGBATES": "DEF000002", "ENDBATES": "DEF000002", "NATIVEPATH": "NATIVES\\DEF000002.xlsx"},
    ], images={"DEF000002": f"{SLIP} NATIVES\\DEF000002.xlsx"}, files={"NATIVES/DEF000002.xlsx": workbook})
    incoming = imported(matter, attorney, volume)
    # No TEXT/ file, no "archive inside the archive": the XLSX is a document, not a nested archive.
    assert incoming.status == "done" and incoming.report == []
    pages = pages_for_bates(matter, "DEF000002")
    [ledger] = {page.exhibit for page in pages}
    assert ledger.kind == Exhibit.Kind.WORKBOOK and ledger.status == Exhibit.Status.READY
    # The one Bates number cites every printed page of the workbook, not the slip sheet.
    assert len(pages) == ledger.page_count >= 1
    text = "\n".join(page.text for page in pages)
    assert "98,765.43" in text and SLIP not in text
    assert any("Produced natively as DEF000002 behind a slip sheet" in note for note in ledger.notes)
    assert storage.blob_path(ledger.sha256).read_bytes() == workbook  # the native kept byte for byte
    findings = verify_text(matter=matter, text="The ledger records a payment of $98,765.43 on March 3, 2021. "
                                               "DEF000002. It records none of $98,765.44. DEF000002.")
    assert by_text(findings, "$98,765.43").status == "grounded"
    assert by_text(findings, "$98,765.44").status != "grounded"


def test_a_native_that_cannot_be_read_says_why_and_the_volume_goes_on(matter, attorney, tmp_path):
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as archive:  # an XLSX by its members, its workbook part not XML at all
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "\x00\x01 not a workbook")
    volume = build_loadfile_volume(tmp_path / "in", [
        {"BEGBATES": "DEF000001", "ENDBATES": "DEF000001", "NATIVEPATH": "NATIVES\\DEF000001.xlsx"},
        {"BEGBATES": "DEF000002", "ENDBATES": "DEF000002", "NATIVEPATH": "NATIVES\\DEF000002.pdf"},
    ], images={}, files={"NATIVES/DEF000001.xlsx": broken.getvalue(),
                         "NATIVES/DEF000002.pdf": native_pdf("Second document of the volume.")})
    incoming = imported(matter, attorney, volume)
    assert incoming.status == "done"
    [line] = incoming.report
    assert line.startswith("DEF000001: its native DEF000001.xlsx could not be read (") and len(line) > 60
    assert pages_for_bates(matter, "DEF000001") == []
    [page] = pages_for_bates(matter, "DEF000002")
    assert "Second document" in page.text
    failed = matter.exhibits.get(original_name="DEF000001.xlsx")
    assert failed.status in (Exhibit.Status.FAILED, Exhibit.Status.REJECTED) and failed.reason
    assert storage.blob_path(failed.sha256).read_bytes() == broken.getvalue()


def test_begattach_endattach_and_parent_bates_make_a_family(matter, attorney, tmp_path):
    family = {"BEGATTACH": "DEF000010", "ENDATTACH": "DEF000012"}
    volume = build_loadfile_volume(tmp_path / "in", [
        {"BEGBATES": "DEF000010", "ENDBATES": "DEF000010", "NATIVEPATH": "N\\10.pdf", **family},
        {"BEGBATES": "DEF000011", "ENDBATES": "DEF000011", "NATIVEPATH": "N\\11.pdf", **family,
         "PARENT_BATES": "DEF000010"},
        {"BEGBATES": "DEF000012", "ENDBATES": "DEF000012", "NATIVEPATH": "N\\12.pdf", **family},
        {"BEGBATES": "DEF000013", "ENDBATES": "DEF000013", "NATIVEPATH": "N\\13.pdf", "BEGATTACH": "DEF000013",
         "ENDATTACH": "DEF000099"},
        {"BEGBATES": "DEF000014", "ENDBATES": "DEF000014", "NATIVEPATH": "N\\14.pdf", "PARENT_BATES": "DEF000404"},
    ], images={}, files={f"N/{n}.pdf": native_pdf(f"Document number {n} of the family volume.")
                         for n in range(10, 15)})
    incoming = imported(matter, attorney, volume)
    assert incoming.status == "done"
    assert incoming.report == [
        "DEF000013: its family range DEF000013–DEF000099 (BEGATTACH–ENDATTACH) cannot be resolved (no document of "
        "this volume ends at DEF000099); it was not linked to a family.",
        "DEF000014: its parent DEF000404 (PARENT_BATES) is the begin number of no document of this volume; it was "
        "not linked to a family."]

    def exhibit_of(bates):
        [page] = pages_for_bates(matter, bates)
        return page.exhibit

    parent, first, second, alone, orphan = (exhibit_of(f"DEF0000{n}") for n in range(10, 15))
    assert exhibit_family(second) == [parent, first, second]
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.parent, first.family_position, second.parent, second.family_position) == (parent, 1, parent, 2)
    assert first.family_seq == second.family_seq == parent.family_seq
    assert alone.parent is None and orphan.parent is None and exhibit_family(alone) == [alone]
    assert list(exhibits_of_matter(matter)) == [parent, first, second, alone, orphan]


def test_an_email_native_is_read_as_a_message_with_its_attachment_once_in_its_family(matter, attorney, tmp_path):
    attachment = native_pdf("Lease renewal terms: rent of $2,450.00 from April 1, 2026.")
    mail = message(subject="Lease renewal")
    mail.add_attachment(attachment, maintype="application", subtype="pdf", filename="renewal.pdf")
    family = {"BEGATTACH": "DEF000020", "ENDATTACH": "DEF000021"}
    volume = build_loadfile_volume(tmp_path / "in", [
        {"BEGBATES": "DEF000020", "ENDBATES": "DEF000020", "NATIVEPATH": "NATIVES\\DEF000020.eml", **family},
        {"BEGBATES": "DEF000021", "ENDBATES": "DEF000021", "NATIVEPATH": "NATIVES\\DEF000021.pdf", **family,
         "PARENT_BATES": "DEF000020"},
    ], images={}, files={
        "NATIVES/DEF000020.eml": as_bytes(mail), "NATIVES/DEF000021.pdf": attachment})
    incoming = imported(matter, attorney, volume)
    assert incoming.status == "done" and incoming.report == []
    [email] = {page.exhibit for page in pages_for_bates(matter, "DEF000020")}
    assert email.kind == Exhibit.Kind.EMAIL and email.status == Exhibit.Status.READY
    assert "Ana Ruiz" in "\n".join(page.text for page in pages_for_bates(matter, "DEF000020"))
    [renewal] = {page.exhibit for page in pages_for_bates(matter, "DEF000021")}
    assert renewal.parent == email and "$2,450.00" in renewal.pages.get().text
    # The attachment the message holds and the record that produces it again are one member of the family.
    assert [member.pk for member in exhibit_family(email)] == [email.pk, renewal.pk]


def test_parent_bates_nests_a_family_and_a_parent_outside_the_range_is_reported(matter, attorney, tmp_path):
    family = {"BEGATTACH": "DEF000030", "ENDATTACH": "DEF000032"}
    volume = build_loadfile_volume(tmp_path / "in", [
        {"BEGBATES": "DEF000030", "ENDBATES": "DEF000030", "NATIVEPATH": "N\\30.pdf", **family},
        {"BEGBATES": "DEF000031", "ENDBATES": "DEF000031", "NATIVEPATH": "N\\31.pdf", **family,
         "PARENT_BATES": "DEF000030"},
        {"BEGBATES": "DEF000032", "ENDBATES": "DEF000032", "NATIVEPATH": "N\\32.pdf", **family,
         "PARENT_BATES": "DEF000031"},
        {"BEGBATES": "DEF000033", "ENDBATES": "DEF000033", "NATIVEPATH": "N\\33.pdf", **family,
         "PARENT_BATES": "DEF000030"},
    ], images={}, files={f"N/{n}.pdf": native_pdf(f"Document number {n} of the nested volume.")
                         for n in range(30, 34)})
    incoming = imported(matter, attorney, volume)
    assert incoming.report == [
        "DEF000033: its family range DEF000030–DEF000032 (BEGATTACH–ENDATTACH) cannot be resolved (the range does "
        "not hold this document); it was not linked to a family."]
    top, message, attachment, outside = (page.exhibit for n in range(30, 34)
                                         for page in pages_for_bates(matter, f"DEF0000{n}"))
    assert exhibit_family(attachment) == [top, message, attachment]
    attachment.refresh_from_db()
    assert attachment.parent == message and attachment.family_depth == 2 and outside.parent is None
