"""exhibit_process: every kind of file ends ``ready`` or in a glossary status with a reason, original kept."""

import io
import re
from difflib import SequenceMatcher

import pymupdf
import pytest
from django.utils import timezone
from PIL import Image

from matters import storage
from matters.exhibits.ingest.child import usable_text
from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create, exhibit_submit_password
from matters.models import Exhibit, Page
from matters.recovery import documents_recover

pytestmark = pytest.mark.django_db


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]{4,}", text.lower())


def word_recall(found: str, expected: str) -> float:
    """Share of the expected words (4+ letters) that appear in the found text."""
    have = set(words(found))
    wanted = words(expected)
    return sum(w in have for w in wanted) / len(wanted)


def test_born_digital_pdf_text_comes_from_the_text_layer(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    assert exhibit.status == Exhibit.Status.READY and exhibit.reason == ""
    with pymupdf.open(corpus("court/ca7_3.pdf")) as doc:
        expected = [page.get_text() for page in doc]
    pages = list(exhibit.pages.order_by("number"))
    assert [p.number for p in pages] == list(range(1, len(expected) + 1))
    assert exhibit.pages_pdf == len(expected) and exhibit.pages_ocr == 0
    assert all(p.source == Page.Source.PDF for p in pages)
    assert word_recall(pages[0].text, expected[0]) == 1.0
    thumbs = storage.derived_dir(exhibit.pk) / "thumbs"
    assert exhibit.previews_ready
    assert sorted(f.name for f in thumbs.iterdir()) == [f"{n:04d}.jpg" for n in range(1, len(expected) + 1)]


def test_invalid_pdf_fails_with_reason_and_keeps_original(matter, corpus, ingest):
    path = corpus("odd/invalid.pdf")
    exhibit = ingest(matter, path)
    assert exhibit.status == Exhibit.Status.FAILED
    assert "damaged beyond repair" in exhibit.reason
    assert exhibit.pages.count() == 0
    assert storage.blob_path(exhibit.sha256).read_bytes() == path.read_bytes()


def test_password_protected_pdf_waits_for_its_password(matter, attorney, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/password-is-test.pdf"))
    assert exhibit.status == Exhibit.Status.NEEDS_PASSWORD
    assert "password-protected" in exhibit.reason

    exhibit_submit_password(exhibit=exhibit, password="wrong", submitted_by=attorney)
    exhibit = exhibit_process(exhibit_id=exhibit.pk)
    assert exhibit.status == Exhibit.Status.NEEDS_PASSWORD
    assert "not accepted" in exhibit.reason
    assert not storage.password_path(exhibit.pk).exists()

    exhibit_submit_password(exhibit=exhibit, password="test", submitted_by=attorney)
    exhibit = exhibit_process(exhibit_id=exhibit.pk)
    assert exhibit.status == Exhibit.Status.READY
    assert exhibit.page_count >= 1 and exhibit.pages.exclude(text="").exists()
    assert not storage.password_path(exhibit.pk).exists()
    assert any("Password-protected" in note for note in exhibit.notes)


def test_permissions_only_encryption_is_processed_with_a_note(matter, tmp_path, ingest):
    path = tmp_path / "restricted.pdf"
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 72), "Settlement agreement between the parties dated March 3, 2021.")
        doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner-secret", user_pw="",
                 permissions=pymupdf.PDF_PERM_ACCESSIBILITY)
    exhibit = ingest(matter, path)
    assert exhibit.status == Exhibit.Status.READY
    assert "Settlement agreement" in exhibit.pages.get().text
    assert any("permission restrictions" in note for note in exhibit.notes)


def test_wrong_startxref_is_repaired_and_processed(matter, corpus, tmp_path, ingest):
    data = corpus("court/ca7_3.pdf").read_bytes()
    broken = re.sub(rb"startxref\s+\d+", b"startxref\n12345", data[-200:])
    path = tmp_path / "bad-xref.pdf"
    path.write_bytes(data[:-200] + broken)
    exhibit = ingest(matter, path)
    assert exhibit.status == Exhibit.Status.READY
    assert any("repaired" in note for note in exhibit.notes)
    assert "Seventh Circuit" in exhibit.pages.get(number=1).text or exhibit.pages.get(number=1).text
    assert storage.blob_path(exhibit.sha256).read_bytes() == path.read_bytes()


def test_image_over_the_decompression_bomb_limit_fails_with_its_size(matter, tmp_path, ingest):
    limit = Image.MAX_IMAGE_PIXELS
    width = 10_000
    height = limit // width + 10
    path = tmp_path / "bomb.png"
    Image.new("1", (width, height), 1).save(path)
    exhibit = ingest(matter, path)
    assert exhibit.status == Exhibit.Status.FAILED
    assert f"{width} x {height} pixels" in exhibit.reason
    assert "decompression bombs" in exhibit.reason


def test_a_failing_file_does_not_stop_the_next(matter, corpus, ingest, settings):
    settings.LAWDESK_INGEST_TIMEOUT_S = 1
    slow = ingest(matter, corpus("odd/cardinal.pdf"))
    settings.LAWDESK_INGEST_TIMEOUT_S = 600
    after = ingest(matter, corpus("court/ca7_3.pdf"))
    assert slow.status == Exhibit.Status.FAILED
    assert "longer than the limit of 1 seconds" in slow.reason
    assert after.status == Exhibit.Status.READY


@pytest.mark.ocr
def test_memory_limit_stops_a_hostile_page_alone(matter, corpus, ingest, settings):
    default_mb = settings.LAWDESK_INGEST_MEMORY_MB
    settings.LAWDESK_INGEST_MEMORY_MB = 400
    enormous = ingest(matter, corpus("odd/enormous.pdf"))
    # The next file, under the usual limit, is processed as if nothing had happened.
    settings.LAWDESK_INGEST_MEMORY_MB = default_mb
    normal = ingest(matter, corpus("odd/scan-1p.pdf"))
    assert enormous.status == Exhibit.Status.FAILED
    assert "memory limit of 400 MiB" in enormous.reason
    assert normal.status == Exhibit.Status.READY and normal.pages_ocr == 1, normal.reason


@pytest.mark.ocr
def test_scan_is_ocrd_with_confidence(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/scan-2p.pdf"))
    assert exhibit.status == Exhibit.Status.READY
    assert exhibit.pages_ocr == 2 and exhibit.pages_pdf == 0
    for page in exhibit.pages.all():
        assert page.source == Page.Source.OCR
        assert page.ocr_confidence is not None and page.ocr_confidence > 60
        assert len(words(page.text)) > 50
        assert page.ocr_rotation_deg == 0  # upright scans, whatever a sideways-read column of brackets says


@pytest.mark.ocr
def test_ecf_header_alone_is_not_a_text_layer(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/header-only.pdf"))
    page = exhibit.pages.get()
    assert page.source == Page.Source.OCR
    # "UNITED" exists only in the scanned image; the text layer holds nothing but the ECF stamp.
    assert "UNITED" in page.text


@pytest.mark.ocr
def test_linn_ocr_matches_ground_truth(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/linn.pdf"))
    truth = corpus("odd/linn.txt").read_text()
    found = exhibit.pages.get().text

    def norm(text: str) -> str:
        return " ".join(text.split())

    similarity = SequenceMatcher(None, norm(found), norm(truth), autojunk=False).ratio()
    print(f"linn.pdf OCR character similarity: {similarity:.4f}")
    assert similarity >= 0.97


@pytest.mark.ocr
def test_rotated_pages_are_read_upright(matter, corpus, ingest):
    truth = corpus("odd/linn.txt").read_text()
    cardinal = ingest(matter, corpus("odd/cardinal.pdf"))
    pages = list(cardinal.pages.order_by("number"))
    assert [p.ocr_rotation_deg for p in pages] == [0, 90, 180, 270]
    for page in pages:
        assert word_recall(page.text, truth) > 0.9, page.number
    skewed = ingest(matter, corpus("odd/rotated_skew.pdf"))
    assert word_recall(skewed.pages.get().text, truth) > 0.9


@pytest.mark.ocr
def test_multipage_tiff_gives_every_page(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/multipage.tiff"))
    assert exhibit.status == Exhibit.Status.READY
    assert exhibit.page_count == 3
    assert list(exhibit.pages.values_list("number", flat=True)) == [1, 2, 3]
    assert (storage.derived_dir(exhibit.pk) / "display.pdf").exists()


def test_docx_is_converted_with_its_header_kept(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/letter.docx"))
    assert exhibit.status == Exhibit.Status.READY
    assert exhibit.kind == "docx"
    first = exhibit.pages.get(number=1)
    assert "Docket No. MD17-00012" in first.text
    assert (round(first.width_pt), round(first.height_pt)) == (612, 792)


@pytest.mark.parametrize("stamp", [
    "Case: 20-1507     Document: 00117684624     Page: 1      Date Filed: 12/22/2020      Entry ID: 6390389",
    "Appeal: 17-2218      Doc: 17            Filed: 10/31/2017      Pg: 1 of 1",
    "Appellate Case: 22-1801     Page: 1      Date Filed: 01/19/2023 Entry ID: 5237514 ",
    "Appellate Case: 21-800     Document: 010110462922     Date Filed: 01/11/2021     Page: 1 ",
    "      Case: 17-3994     Document: 1-3     Filed: 09/20/2017     Page: 1",
    "Case 1:20-cv-01234-ABC Document 12 Filed 01/02/20 Page 3 of 9 PageID #: 45",
])
def test_an_ecf_stamp_alone_is_not_a_text_layer(stamp):
    assert usable_text(stamp + "\n") == ""
    body = "The district court granted summary judgment to the defendant on every claim."
    assert usable_text(f"{stamp}\n{body}\n") == f"{stamp}\n{body}\n"


@pytest.mark.ocr
def test_fourth_circuit_scan_under_its_stamp_is_ocrd(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("court/ca4_17.pdf"))
    page = exhibit.pages.get()
    assert page.source == Page.Source.OCR and exhibit.pages_ocr == 1
    assert len(words(page.text)) > 40  # the order itself, not only "Appeal: 17-2218 Doc: 17 Filed: ..."


def test_blank_scanned_pages_are_not_sent_to_tesseract(matter, tmp_path, ingest):
    path = tmp_path / "blank-scans.pdf"
    with pymupdf.open() as doc:
        white = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 850, 1100), False)
        white.set_rect(white.irect, (255,))
        for _ in range(3):
            doc.new_page().insert_image(pymupdf.Rect(0, 0, 612, 792), pixmap=white)
        doc.save(path)
    exhibit = ingest(matter, path)
    assert exhibit.status == Exhibit.Status.READY and exhibit.page_count == 3
    assert exhibit.pages_ocr == 0
    assert set(exhibit.pages.values_list("source", flat=True)) == {Page.Source.NONE}


def test_huge_pages_are_ocrd_at_a_lower_resolution():
    from matters.exhibits.ingest.child import MAX_OCR_PIXELS, ocr_dpi_for

    with pymupdf.open() as doc:
        doc.new_page(width=612, height=792)
        doc.new_page(width=8000, height=6000)  # an 8000 x 6000 photo at 72 dpi: 111 x 83 inches
        letter, photo = doc[0], doc[1]
        assert ocr_dpi_for(letter, 300) == 300
        dpi = ocr_dpi_for(photo, 300)
        assert dpi < 300
        assert (8000 / 72 * dpi) * (6000 / 72 * dpi) <= MAX_OCR_PIXELS


def test_exhibit_left_processing_without_a_lease_is_queued_again_once_idle(matter, corpus, attorney, time_machine):
    """A row left ``processing`` by a version without leases is judged by idle time; a leased row never is."""
    time_machine.move_to("2026-11-29 10:00:00Z")
    exhibit, leased = (
        exhibit_create(matter=matter, stream=io.BytesIO(corpus(f"court/{name}").read_bytes()),
                       original_name=name, origin="client", uploaded_by=attorney, enqueue=False)
        for name in ("ca7_3.pdf", "cafc_3.pdf"))
    Exhibit.objects.filter(pk=exhibit.pk).update(status=Exhibit.Status.PROCESSING, progress_page=3)
    # A live worker's lease, renewed until well after the idle time: the idle rule must leave it alone.
    Exhibit.objects.filter(pk=leased.pk).update(status=Exhibit.Status.PROCESSING, lease_owner="w:1:a",
                                                lease_expires_at=timezone.now() + timezone.timedelta(hours=2))
    time_machine.move_to("2026-11-29 10:10:00Z")
    assert documents_recover(idle_s=1800)["exhibit"] == []  # could still be alive: left alone
    time_machine.move_to("2026-11-29 10:40:00Z")
    assert documents_recover(idle_s=1800)["exhibit"] == [exhibit.pk]
    exhibit.refresh_from_db()
    assert (exhibit.status, exhibit.progress_page) == (Exhibit.Status.QUEUED, 0)
    assert Exhibit.objects.get(pk=leased.pk).status == Exhibit.Status.PROCESSING
    assert matter.audit_entries.filter(action="exhibit.status", detail__to="queued").count() == 1
    assert exhibit_process(exhibit_id=exhibit.pk, previews="skip").status == Exhibit.Status.READY


def test_failed_exhibit_can_be_processed_again(matter, corpus, attorney, ingest, settings):
    from matters.exhibits.services import exhibit_reprocess

    settings.LAWDESK_INGEST_TIMEOUT_S = 1
    exhibit = ingest(matter, corpus("odd/cardinal.pdf"))
    assert exhibit.status == Exhibit.Status.FAILED
    settings.LAWDESK_INGEST_TIMEOUT_S = 600
    exhibit_reprocess(exhibit=exhibit, requested_by=attorney)
    assert exhibit_process(exhibit_id=exhibit.pk, previews="skip").status == Exhibit.Status.READY
    with pytest.raises(Exception, match="Only a failed exhibit"):
        exhibit_reprocess(exhibit=exhibit, requested_by=attorney)


@pytest.mark.django_db
def test_a_failure_reason_names_no_stored_path(matter, tmp_path, ingest):
    from django.conf import settings

    broken = tmp_path / "scan.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x01" * 40)
    exhibit = ingest(matter, broken)
    assert exhibit.status == "failed" and exhibit.reason
    assert str(settings.DATA_DIR) not in exhibit.reason and "originals/" not in exhibit.reason
