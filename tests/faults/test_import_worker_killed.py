"""kill -9 of a real documents worker (``manage.py db_worker``) in the middle of importing another party's volume:
the other running worker takes the import over once its lease expires and finishes it; every record of the load
file ends as exactly one exhibit, every Bates number on exactly one page, and the kept upload and the originals
keep their bytes."""

import zipfile

import pytest

from matters import storage
from matters.incoming.services import incoming_confirm, incoming_receive
from matters.models import AuditEntry, IncomingBatesPage, IncomingDocument, IncomingProduction
from tests.faults.conftest import kill_worker, sha256_file, wait_for
from tests.support.volumes import build_volume

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

# Six scanned documents of two pages: each is OCR'd in turn, so a kill after the first lands mid-import.
PAGES = [2] * 6


def test_a_worker_killed_mid_import_has_the_import_finished_by_another(matter, attorney, tmp_path, two_workers):
    volume = build_volume(tmp_path / "in", pages_per_document=PAGES)
    archive = tmp_path / "VOL001.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        for path in sorted(volume.rglob("*")):
            if path.is_file():
                packed.write(path, path.relative_to(volume.parent))
    before = sha256_file(archive)
    with open(archive, "rb") as upload:
        received = incoming_receive(matter=matter, uploads=[upload], origin="opposing_party", user=attorney)
    incoming = incoming_confirm(incoming=received, field_map=received.field_map, user=attorney)

    def mid_import():
        row = IncomingProduction.objects.get(pk=incoming.pk)
        assert row.status == "importing", f"finished before the kill: {row.status} {row.reason}"
        linked = IncomingDocument.objects.filter(incoming=row).count()
        return row if row.lease_owner and 1 <= linked < len(PAGES) else None

    importing = wait_for(mid_import, timeout_s=180, what="the first imported document", every_s=0.02)
    killed = kill_worker(two_workers, importing.lease_owner)

    def settled():
        row = IncomingProduction.objects.get(pk=incoming.pk)
        return row if row.status != "importing" else None

    incoming = wait_for(settled, timeout_s=300, what="the import to be finished by the other worker")
    assert incoming.status == "done", incoming.reason
    assert incoming.lease_owner == "" and incoming.lease_expires_at is None
    links = list(IncomingDocument.objects.filter(incoming=incoming).select_related("exhibit").order_by("record"))
    assert [link.record for link in links] == list(range(len(PAGES)))
    # Each record of the load file is exactly one exhibit: none made twice, none lost.
    assert matter.exhibits.count() == len(PAGES) == len({link.exhibit_id for link in links})
    assert all(link.exhibit.status == "ready" for link in links), [link.exhibit.reason for link in links]
    for link, count in zip(links, PAGES):
        assert list(link.exhibit.pages.order_by("number").values_list("number", flat=True)) == list(
            range(1, count + 1))
    numbers = list(IncomingBatesPage.objects.filter(incoming=incoming).values_list("bates", flat=True))
    assert sorted(numbers) == [f"DEF{n:06d}" for n in range(1, sum(PAGES) + 1)]
    assert IncomingBatesPage.objects.filter(page__exhibit__matter=matter).count() == sum(PAGES)
    takeover = AuditEntry.objects.get(matter=matter, action="incoming_production.restart")
    assert takeover.detail["worker"] == importing.lease_owner and str(killed.pid) in takeover.detail["worker"]
    assert AuditEntry.objects.filter(matter=matter, action="incoming_production.import").count() == 1
    assert sha256_file(storage.blob_path(incoming.sha256)) == incoming.sha256 == before
    for link in links:
        assert sha256_file(storage.blob_path(link.exhibit.sha256)) == link.exhibit.sha256
