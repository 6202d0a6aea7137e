"""Incoming productions: volumes with load files, stamped PDFs, broken volumes, hostile ZIPs."""

import io
import json
import zipfile

import pymupdf
import pytest
from django.core.management import call_command

from matters.incoming.archive import UnsafeArchive
from matters.incoming.services import import_production
from matters.models import Page
from matters.productions.bates.stamp import StampSpec, stamp_page
from matters.productions.bates.volume import dat_bytes
from matters.selectors import pages_for_bates
from tests.support.volumes import PAGES_PER_DOCUMENT, build_volume, page_text

pytestmark = pytest.mark.django_db


def zipped(folder, target):
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in folder.rglob("*"):
            if path.is_file():
                archive.write(path, path.relative_to(folder.parent))
    return target


@pytest.mark.ocr
def test_volume_with_load_files_resolves_bates_to_pages(matter, attorney, tmp_path):
    volume = zipped(build_volume(tmp_path / "in"), tmp_path / "VOL001.zip")
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert incoming.report == [] and incoming.field_map["begbates"] == "BegBates"
    assert incoming.bates_prefixes == ["DEF"]
    assert incoming.field_map["endbates"] == "EndDoc"
    exhibits = list(matter.exhibits.order_by("label_seq"))
    assert [e.page_count for e in exhibits] == PAGES_PER_DOCUMENT
    assert {e.origin for e in exhibits} == {"opposing_party"}
    [page] = pages_for_bates(matter, "DEF000005")
    assert (page.exhibit_id, page.number) == (exhibits[1].pk, 2)
    assert page.text == page_text(5) and page.source == Page.Source.LOAD_FILE
    from pipeline.packet import evidence_packet

    cited = next(p for p in evidence_packet(matter).pages if p.exhibit == page.exhibit_id and p.page == 2)
    assert cited.bates == ["DEF000005"] and cited.cite == "DEF000005" and cited.text == page_text(5)


@pytest.mark.ocr
def test_missing_image_and_repeated_number_are_reported_not_dropped(matter, attorney, tmp_path):
    volume = build_volume(tmp_path / "in", missing=6, repeat=2)
    incoming = import_production(matter=matter, paths=[volume], origin="third_party", user=attorney)
    report = " | ".join(incoming.report)
    assert "DEF000002 appears twice in the OPT" in report
    assert "DEF000006: the image IMAGES\\DEF000006.tif named in the OPT is missing" in report
    assert "the text file has 2 pages and the document 1" in report
    [page] = pages_for_bates(matter, "DEF000007")
    assert page.exhibit.page_count == 1  # the third document, imported as far as it is consistent
    assert pages_for_bates(matter, "DEF000006") == []
    assert len(pages_for_bates(matter, "DEF000002")) == 1


def test_stamped_pdfs_without_load_files(matter, attorney, tmp_path):
    paths, number = [], 1
    for count in PAGES_PER_DOCUMENT:
        doc = pymupdf.open()
        for index in range(count):
            doc.new_page().insert_text((72, 100), page_text(number), fontsize=12)
            if count == 2 and index == 1:
                doc[-1].set_rotation(90)  # a landscape page, stamped upright at its displayed bottom edge
            stamp_page(doc[-1], f"DEF {number:06d}", StampSpec.from_position("bottom-right"))
            number += 1
        path = tmp_path / f"doc{number}.pdf"
        doc.save(path)
        paths.append(path)
    unstamped = pymupdf.open()
    unstamped.new_page().insert_text((72, 100), "A cover letter with no number on it at all.", fontsize=12)
    unstamped.save(tmp_path / "letter.pdf")
    paths.append(tmp_path / "letter.pdf")
    incoming = import_production(matter=matter, paths=paths, origin="opposing_party", user=attorney)
    [page] = pages_for_bates(matter, "DEF000005")
    assert page_text(5) in page.text
    assert incoming.report == ["letter.pdf, page 1: no Bates number found at its edges."]
    incoming.refresh_from_db()
    assert incoming.bates_prefixes == ["DEF"]


def test_zip_with_a_path_outside_the_archive_is_refused(matter, attorney, tmp_path):
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("VOL001/DATA/VOL001.dat", "x")
        archive.writestr("../../etc/cron.d/evil", "* * * * * root true")
    with pytest.raises(UnsafeArchive, match="points outside the archive"):
        import_production(matter=matter, paths=[evil], origin="opposing_party", user=attorney)
    assert not (tmp_path.parent / "etc").exists()


def test_zip_that_would_unpack_to_gigabytes_is_refused(matter, attorney, tmp_path, settings):
    settings.LAWDESK_ZIP_MAX_MB = 64
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("VOL001/NATIVES/big.bin", b"\0" * (100 * 2**20))
    with pytest.raises(UnsafeArchive, match="over the limit of 64 MiB"):
        import_production(matter=matter, paths=[bomb], origin="opposing_party", user=attorney)
    settings.LAWDESK_ZIP_MAX_MB = 1024
    with pytest.raises(UnsafeArchive, match="expands 1\\d{3} times"):
        import_production(matter=matter, paths=[bomb], origin="opposing_party", user=attorney)


@pytest.mark.ocr
def test_command_prints_documents_then_discrepancies(matter, tmp_path):
    volume = zipped(build_volume(tmp_path / "in", repeat=3), tmp_path / "VOL001.zip")
    out = io.StringIO()
    call_command("import_production", "--matter", str(matter.pk), "--origin", "opposing_party", str(volume), stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(row["first"], row["last"], row["pages"]) for row in lines[:3]] == [
        ("DEF000001", "DEF000003", 3), ("DEF000004", "DEF000005", 2), ("DEF000006", "DEF000007", 2)]
    assert set(lines[0]) == {"exhibit", "label", "first", "last", "pages", "status", "reason"}
    assert lines[-1] == {"discrepancies": ["DEF000003 appears twice in the OPT; the second entry "
                                           "(IMAGES\\DEF000003.tif) was skipped."]}


def test_upload_preview_confirm_and_report_in_the_browser_pages(client, attorney, matter, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from matters.incoming.services import import_confirmed
    from matters.models import IncomingProduction

    client.force_login(attorney)
    volume = zipped(build_volume(tmp_path / "in"), tmp_path / "VOL001.zip")
    response = client.post(reverse("matters:incoming_upload", args=[matter.pk]),
                           {"origin": "opposing_party",
                            "files": SimpleUploadedFile("VOL001.zip", volume.read_bytes())})
    incoming = IncomingProduction.objects.get()
    assert response.url == reverse("matters:incoming", args=[matter.pk, incoming.pk])
    preview = client.get(response.url).content.decode()
    assert '<option value="BegBates" selected>' in preview and '<option value="EndDoc" selected>' in preview
    assert incoming.status == "awaiting_confirmation" and not matter.exhibits.exists()  # nothing before confirming

    stamped = pymupdf.open()
    stamped.new_page().insert_text((72, 100), page_text(1))
    stamp_page(stamped[0], "DEF000101", StampSpec.from_position("bottom-right"))
    client.post(reverse("matters:incoming_upload", args=[matter.pk]),
                {"origin": "third_party", "files": SimpleUploadedFile("letter.pdf", stamped.tobytes())})
    second = IncomingProduction.objects.exclude(pk=incoming.pk).get()
    client.post(reverse("matters:incoming", args=[matter.pk, second.pk]), {})
    second.refresh_from_db()
    assert second.status == "importing"
    assert import_confirmed(incoming_id=second.pk).status == "done"
    page = client.get(reverse("matters:incoming", args=[matter.pk, second.pk])).content.decode()
    assert "None: the volume is consistent." in page and "letter" in page
    assert pages_for_bates(matter, "DEF000101")


def test_hostile_zip_upload_fails_with_its_reason(client, attorney, matter, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from matters.models import IncomingProduction

    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("../outside.txt", "x")
    client.force_login(attorney)
    client.post(reverse("matters:incoming_upload", args=[matter.pk]),
                {"origin": "opposing_party", "files": SimpleUploadedFile("evil.zip", evil.getvalue())})
    incoming = IncomingProduction.objects.get()
    assert incoming.status == "failed" and "points outside the archive" in incoming.reason


@pytest.mark.parametrize("stamp, position, expected", [
    ("ACME-DEF000001", "bottom-right", "ACME-DEF000001"),
    ("SUF000001.A", "bottom-right", "SUF000001.A"),
    ("abc000001", "top-right", "abc000001"),
])
def test_edge_numbers_are_read_whole_and_nearest_the_edge(stamp, position, expected):
    from matters.incoming.stamped import bates_on_page

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 42), "Docket No. MD17-00012", fontsize=10)  # a docket line near the top
    page.insert_text((72, 760), "ORDER 2024", fontsize=10)
    stamp_page(page, stamp, StampSpec.from_position(position))
    assert bates_on_page(doc[0]) == expected


def test_failed_import_is_recorded_as_failed(matter, attorney, tmp_path):
    from matters.models import IncomingProduction

    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("../x", "x")
    with pytest.raises(UnsafeArchive):
        import_production(matter=matter, paths=[evil], origin="opposing_party", user=attorney)
    incoming = IncomingProduction.objects.get()
    assert incoming.status == "failed" and "outside the archive" in incoming.reason


def test_huge_range_is_skipped_and_duplicate_documents_keep_both_numbers(matter, attorney, tmp_path):
    volume = tmp_path / "in" / "VOL001"
    (volume / "DATA").mkdir(parents=True)
    (volume / "NATIVES").mkdir()
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), "The same letter, produced twice.")
    letter = doc.tobytes()
    (volume / "NATIVES" / "A.pdf").write_bytes(letter)
    (volume / "NATIVES" / "B.pdf").write_bytes(letter)  # the same document produced under two numbers
    rows = [{"BEGBATES": "DUP000001", "ENDBATES": "DUP000001", "NATIVEPATH": "NATIVES\\A.pdf"},
            {"BEGBATES": "DUP000002", "ENDBATES": "DUP000002", "NATIVEPATH": "NATIVES\\B.pdf"},
            {"BEGBATES": "H000000001", "ENDBATES": "H050000000", "NATIVEPATH": "NATIVES\\A.pdf"}]
    (volume / "DATA" / "VOL001.dat").write_bytes(dat_bytes(rows))
    incoming = import_production(matter=matter, paths=[volume.parent], origin="opposing_party", user=attorney)
    assert any("more than any document" in item for item in incoming.report)
    [first], [second] = pages_for_bates(matter, "DUP000001"), pages_for_bates(matter, "DUP000002")
    assert first.pk == second.pk and matter.exhibits.filter(status="ready").count() == 1
