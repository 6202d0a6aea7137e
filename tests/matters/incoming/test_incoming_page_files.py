"""A received volume's page files are judged by content and decoded in the limited child, never in the worker."""

import io
import resource
import zipfile

import pymupdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from matters.exhibits.services import exhibit_create
from matters.exhibits.sniff import sniff
from matters.incoming.services import import_production, incoming_receive
from matters.models import IncomingProduction
from matters.productions.bates.volume import dat_bytes
from matters.selectors import pages_for_bates

pytestmark = pytest.mark.django_db


def _page_pdf(text: str) -> bytes:
    with pymupdf.open() as doc:
        doc.new_page(width=612, height=792).insert_text((72, 100), text, fontsize=14)
        return doc.tobytes()


def _png(size: tuple[int, int], text: str = "") -> bytes:
    out = io.BytesIO()
    if text:
        with pymupdf.open("pdf", _page_pdf(text)) as doc:
            doc[0].get_pixmap(dpi=100).pil_save(out, format="PNG")
    else:
        Image.new("1", size, 1).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _volume(path, pages: dict[str, tuple[str, bytes]]):
    """A ZIP volume of one-page documents: Bates number -> (image file name, bytes)."""
    rows = [{"BEGBATES": bates, "ENDBATES": bates} for bates in pages]
    opt = "".join(f"{bates},VOL001,IMAGES\\{name},Y,,,1\r\n" for bates, (name, _) in pages.items())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("VOL001/DATA/VOL001.dat", dat_bytes(rows))
        archive.writestr("VOL001/DATA/VOL001.opt", opt)
        for name, data in pages.values():
            archive.writestr(f"VOL001/IMAGES/{name}", data)
    return path


def test_a_huge_image_named_in_the_opt_is_refused_in_the_child(matter, attorney, tmp_path):
    bomb = _png((14_000, 14_000))
    volume = _volume(tmp_path / "VOL001.zip", {"DEF000001": ("DEF000001.png", bomb),
                                               "DEF000002": ("DEF000002.png", _png((0, 0), "Invoice 2021-07"))})
    assert volume.stat().st_size < 200_000
    peak_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)

    # Decoding 196 megapixels here would take this process past 500 MiB; in the child it never happens here.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before_kib < 300 * 1024
    [refusal] = [item for item in incoming.report if item.startswith("DEF000001")]
    assert "DEF000001.png" in refusal and "decompression bomb" in refusal
    assert not pages_for_bates(matter, "DEF000001")
    assert pages_for_bates(matter, "DEF000002")  # the next document is imported as usual


def test_an_html_file_listed_as_an_image_is_refused_with_its_reason(matter, attorney, tmp_path):
    html = b"<!DOCTYPE html><html><body><img src='file:///etc/passwd'></body></html>"
    volume = _volume(tmp_path / "VOL001.zip", {"DEF000001": ("DEF000001.tif", html)})
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    [refusal] = incoming.report
    assert "DEF000001.tif" in refusal and "HTML document" in refusal and "not a PDF, TIFF, JPEG or PNG" in refusal
    assert not matter.exhibits.exists()


def test_page_files_are_judged_by_content_not_by_name(matter, attorney, tmp_path):
    volume = _volume(tmp_path / "VOL001.zip", {
        "DEF000001": ("DEF000001.tif", _png((0, 0), "Lease renewal signed")),  # a PNG named .tif
        # a PDF named .jpg
        "DEF000002": ("DEF000002.jpg", _page_pdf("Rent ledger for March 2021, unit 4B, paid in full")),
    })
    incoming = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert incoming.report == []
    assert pages_for_bates(matter, "DEF000001") and pages_for_bates(matter, "DEF000002")
    [page] = pages_for_bates(matter, "DEF000002")
    assert "Rent ledger" in page.text


def _zip_with_stored_pdf_first() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(zipfile.ZipInfo("VOL001/NATIVES/A.pdf"), _page_pdf("Stored first member"))
        archive.writestr("VOL001/DATA/VOL001.dat", dat_bytes([{"BEGBATES": "DEF000001", "ENDBATES": "DEF000001",
                                                                "NATIVEPATH": "NATIVES\\A.pdf"}]))
    return out.getvalue()


def test_a_zip_whose_first_member_is_a_stored_pdf_is_a_zip(matter, attorney, tmp_path):
    data = _zip_with_stored_pdf_first()
    assert b"%PDF-" in data[:1024]
    path = tmp_path / "volume.bin"
    path.write_bytes(data)
    assert sniff(path, data[:8192]).mime_type == "application/zip"

    incoming = incoming_receive(matter=matter, uploads=[SimpleUploadedFile("VOL001", data)], origin="opposing_party",
                                user=attorney)
    assert incoming.status == IncomingProduction.Status.AWAITING_CONFIRMATION
    assert incoming.field_map.get("begbates") == "BEGBATES"

    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(data), original_name="letter.pdf", origin="client",
                             uploaded_by=attorney, enqueue=False)
    assert exhibit.status == "rejected" and "ZIP archive" in exhibit.reason


def test_the_worker_itself_never_opens_a_received_file(matter, attorney, tmp_path, monkeypatch):
    """Volume images and stamped PDFs are read only in child processes: PyMuPDF in this process is made to fail."""
    from matters.productions.bates.stamp import StampSpec, stamp_page

    stamped = tmp_path / "stamped.pdf"
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 100), "Letter from the defendant's insurer about the claim, March 2021.")
        stamp_page(doc[0], "DEF000101", StampSpec.from_position("bottom-right"))
        doc.save(stamped)
    volume = _volume(tmp_path / "VOL001.zip", {"DEF000001": ("DEF000001.png", _png((0, 0), "Lease renewal"))})

    def refuse(*args, **kwargs):
        raise AssertionError("a received file was opened in the worker process")

    monkeypatch.setattr(pymupdf, "open", refuse)
    monkeypatch.setattr(pymupdf, "Document", refuse)
    first = import_production(matter=matter, paths=[stamped], origin="opposing_party", user=attorney)
    second = import_production(matter=matter, paths=[volume], origin="opposing_party", user=attorney)
    assert first.report == [] and second.report == []
    assert pages_for_bates(matter, "DEF000101") and pages_for_bates(matter, "DEF000001")


def test_a_volume_without_load_files_finds_its_pdfs_by_content(matter, attorney, tmp_path):
    with zipfile.ZipFile(tmp_path / "VOL002.zip", "w") as archive:
        with pymupdf.open() as doc:
            doc.new_page().insert_text((72, 100), "Produced letter about the roof repairs of July 2021, unit 4B.")
            from matters.productions.bates.stamp import StampSpec, stamp_page

            stamp_page(doc[0], "DEF000201", StampSpec.from_position("bottom-right"))
            archive.writestr("VOL002/DOC0001", doc.tobytes())  # no extension at all
        archive.writestr("VOL002/readme.pdf", b"<!DOCTYPE html><html><body>not a PDF</body></html>")
    incoming = import_production(matter=matter, paths=[tmp_path / "VOL002.zip"], origin="opposing_party",
                                 user=attorney)
    assert pages_for_bates(matter, "DEF000201")
    assert "readme.pdf is named as a PDF but its content is not one; it was not imported." in incoming.report
    assert matter.exhibits.count() == 1
