"""kill -9 of a real documents worker (``manage.py db_worker``) in the middle of OCR and in the middle of stamping a
production: the other running worker takes the work over once its lease expires; the exhibit is processed again,
the production is stamped again in its own range, no Bates number is used twice, its files are made and recorded
once (nothing of the interrupted attempt is left), originals keep their bytes."""

import hashlib
import zipfile

import pymupdf
import pytest

from matters import storage
from matters.exhibits.services import exhibit_create
from matters.models import AuditEntry, BatesPage, Exhibit, GeneratedDocument, Page, Production
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from tests.faults.conftest import kill_worker, ready_exhibits, sha256_file, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def test_a_worker_killed_mid_ocr_has_its_exhibit_processed_again_by_another(matter, attorney, corpus, two_workers):
    scan = corpus("odd/scan-2p.pdf")  # two scanned court pages, no text layer
    before = sha256_file(scan)
    with open(scan, "rb") as stream:
        exhibit = exhibit_create(matter=matter, stream=stream, original_name="scan-2p.pdf", origin="client",
                                 uploaded_by=attorney)

    def mid_ocr():
        row = Exhibit.objects.get(pk=exhibit.pk)
        assert row.status in ("queued", "processing"), f"finished before the kill: {row.status}"
        return row if row.status == "processing" and row.progress_page >= 1 and row.lease_owner else None

    processing = wait_for(mid_ocr, timeout_s=120, what="the first OCR'd page", every_s=0.02)
    assert processing.progress_page < processing.page_count  # pages still to be read: the kill lands mid-file
    killed = kill_worker(two_workers, processing.lease_owner)

    def settled():
        row = Exhibit.objects.get(pk=exhibit.pk)
        return row if row.status not in ("queued", "processing") else None

    exhibit = wait_for(settled, timeout_s=120, what="the exhibit to be processed again")
    assert exhibit.status == "ready", exhibit.reason
    assert exhibit.lease_owner == "" and exhibit.lease_expires_at is None
    numbers = list(Page.objects.filter(exhibit=exhibit).order_by("number").values_list("number", flat=True))
    assert numbers == [1, 2]  # each page once: the dead worker's pages were replaced, not added to
    assert all(Page.objects.filter(exhibit=exhibit).values_list("text", flat=True))
    takeover = AuditEntry.objects.filter(matter=matter, action="exhibit.status", detail__to="queued").get()
    assert takeover.detail["worker"] == processing.lease_owner and str(killed.pid) in takeover.detail["worker"]
    assert sha256_file(storage.blob_path(exhibit.sha256)) == exhibit.sha256 == before


def test_a_worker_killed_mid_stamping_has_the_production_stamped_again_in_its_range(matter, attorney, corpus,
                                                                                      processes):
    # A short document first, so the kill comes after it and before the 53 pages of the two long ones.
    court = ["mo-app-jagels.pdf", "scotus-slip-2012.pdf", "nc-gift-surplus.pdf"]
    exhibits = ready_exhibits(matter, attorney, [corpus(f"court/{name}") for name in court])
    assert all(e.status == "ready" for e in exhibits)
    originals = {e.sha256: sha256_file(storage.blob_path(e.sha256)) for e in exhibits}
    workers = [processes.worker(LAWDESK_DOCUMENT_LEASE_S="2"), processes.worker(LAWDESK_DOCUMENT_LEASE_S="2")]
    # Page images (TIFF) make each document take long enough to be caught mid-production.
    production = production_create(matter=matter, exhibits=exhibits, prefix="SMITH", created_by=attorney,
                                   with_index=False, with_images=True)

    def mid_stamping():
        row = Production.objects.get(pk=production.pk)
        assert row.status == "stamping", f"finished before the kill: {row.status}"
        return row if row.pages_done and row.lease_owner else None

    stamping = wait_for(mid_stamping, timeout_s=120, what="the first stamped document", every_s=0.02)
    assert 0 < stamping.pages_done < stamping.page_count
    kill_worker(workers, stamping.lease_owner)

    def settled():
        row = Production.objects.get(pk=production.pk)
        return row if row.status != "stamping" else None

    production = wait_for(settled, timeout_s=180, what="the production to be stamped again")
    assert production.status == "done", production.reason
    assert Production.objects.filter(matter=matter).count() == 1  # redone in place: no second range reserved
    numbers = list(BatesPage.objects.filter(production=production).values_list("number", flat=True))
    assert sorted(numbers) == list(range(production.first_number, production.last_number + 1))
    assert BatesPage.objects.filter(production__matter=matter).values("bates").distinct().count() == len(numbers)
    files = production_files(production)
    assert sha256_file(files["pdf"]) == production.pdf_sha256 and sha256_file(files["zip"]) == production.zip_sha256
    # The interrupted attempt left no file and no record: the folder holds the two files, each recorded once,
    # and each native in the volume is recorded once.
    assert sorted(p.name for p in files["pdf"].parent.iterdir()) == sorted(p.name for p in files.values())
    with zipfile.ZipFile(files["zip"]) as volume:
        natives = [hashlib.sha256(volume.read(name)).hexdigest() for name in volume.namelist() if "/NATIVES/" in name]
    assert len(natives) == len(exhibits)
    recorded = GeneratedDocument.objects.filter(matter=matter, origin="production").values_list("sha256", flat=True)
    assert sorted(recorded) == sorted([*natives, production.pdf_sha256, production.zip_sha256])
    with pymupdf.open(files["pdf"]) as combined:
        assert combined.page_count == production.page_count
        stamps = [production.bates(n) for n in range(production.first_number, production.last_number + 1)]
        for page, stamp in zip(combined, stamps):
            assert page.get_text().count(stamp) == 1, stamp
    assert AuditEntry.objects.filter(matter=matter, action="production.restart").count() == 1
    assert AuditEntry.objects.filter(matter=matter, action="production.done").count() == 1
    assert {sha: sha256_file(storage.blob_path(sha)) for sha in originals} == originals
    assert all(sha == digest for sha, digest in originals.items())
