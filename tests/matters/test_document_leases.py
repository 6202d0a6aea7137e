"""Leases on documents-queue work (matters.leases, matters.recovery), without worker processes: a live lease is
never taken over, an expired one is, a worker that lost its lease writes nothing, and an import read again makes
each record's exhibit once."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from matters import storage
from matters.exhibits.services import exhibit_create
from matters.incoming.services import import_confirmed, incoming_confirm, incoming_receive
from matters.leases import LeaseKeeper
from matters.models import (
    AuditEntry,
    Exhibit,
    GeneratedDocument,
    IncomingBatesPage,
    IncomingDocument,
    IncomingProduction,
    Page,
    Production,
)
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from matters.recovery import exhibits_recover, imports_recover, lease_watch, productions_recover
from tests.support.volumes import PAGES_PER_DOCUMENT, zipped_volume

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def processing(matter, attorney, corpus):
    """An exhibit claimed by a worker ``w:1:a`` whose lease expires in ``expires_in_s`` seconds."""

    def make(expires_in_s: float) -> Exhibit:
        with open(corpus("court/ca2_1-1.pdf"), "rb") as stream:
            exhibit = exhibit_create(matter=matter, stream=stream, original_name="a.pdf", origin="client",
                                     uploaded_by=attorney, enqueue=False)
        Exhibit.objects.filter(pk=exhibit.pk).update(
            status="processing", lease_owner="w:1:a", lease_expires_at=timezone.now() + timedelta(seconds=expires_in_s))
        return exhibit

    return make


def test_an_exhibit_whose_lease_is_live_is_left_to_its_worker(processing):
    exhibit = processing(expires_in_s=30)
    assert exhibits_recover() == []
    assert lease_watch("exhibit", exhibit.pk) == "live"
    assert Exhibit.objects.get(pk=exhibit.pk).status == "processing"


def test_an_exhibit_whose_lease_expired_is_queued_again_once(processing, matter):
    exhibit = processing(expires_in_s=-1)
    assert lease_watch("exhibit", exhibit.pk) == "recovered"
    exhibit.refresh_from_db()
    assert (exhibit.status, exhibit.lease_owner, exhibit.lease_expires_at) == ("queued", "", None)
    assert exhibits_recover() == [] and lease_watch("exhibit", exhibit.pk) == "settled"
    entry = AuditEntry.objects.get(matter=matter, action="exhibit.status", detail__to="queued")
    assert entry.detail["worker"] == "w:1:a"


def test_a_production_is_stamped_again_only_once_its_lease_expired(matter, attorney, ingest, corpus):
    exhibit = ingest(matter, corpus("court/ca2_1-1.pdf"))
    production = production_create(matter=matter, exhibits=[exhibit], prefix="SMITH", created_by=attorney,
                                   enqueue=False)
    later = timezone.now() + timedelta(seconds=30)
    Production.objects.filter(pk=production.pk).update(lease_owner="w:1:a", lease_expires_at=later)
    assert production_run(production_id=production.pk).status == "stamping"  # held by a live worker: untouched
    assert productions_recover() == []
    Production.objects.filter(pk=production.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    # What a worker killed mid-stamping leaves: partial files under their temporary names.
    folder = storage.production_dir(production.pk)
    folder.mkdir(parents=True)
    (folder / f"{production.volume}.zip.part").write_bytes(b"PK\x03\x04 cut short")
    assert productions_recover() == [production.pk]
    done = production_run(production_id=production.pk)
    assert done.status == "done" and (done.first_number, done.last_number) == (1, exhibit.page_count)
    assert done.bates_pages.count() == exhibit.page_count
    files = production_files(done)
    assert sorted(folder.iterdir()) == sorted(files.values())
    recorded = GeneratedDocument.objects.filter(matter=matter, origin="production").values_list("sha256", flat=True)
    assert len(recorded) == 3 and {done.pdf_sha256, done.zip_sha256} <= set(recorded)  # the native, PDF, volume
    assert AuditEntry.objects.filter(matter=matter, action="production.restart").count() == 1


def test_a_keeper_whose_lease_was_taken_over_reports_it_lost(processing):
    exhibit = processing(expires_in_s=30)
    lost = threading.Event()
    keeper = LeaseKeeper(model=Exhibit, pk=exhibit.pk, owner="w:1:a", lease_s=0.3, live={"status": "processing"},
                         on_lost=lost.set)
    with keeper:
        Exhibit.objects.filter(pk=exhibit.pk).update(lease_owner="w:2:b")  # another worker took it over
        assert lost.wait(timeout=10)
    assert keeper.lost
    assert Exhibit.objects.get(pk=exhibit.pk).lease_owner == "w:2:b"


def test_a_keeper_renews_a_live_lease(processing):
    exhibit = processing(expires_in_s=0.5)
    first_expiry = Exhibit.objects.get(pk=exhibit.pk).lease_expires_at
    with LeaseKeeper(model=Exhibit, pk=exhibit.pk, owner="w:1:a", lease_s=3, live={"status": "processing"}) as keeper:
        for _ in range(100):  # the first beat comes a third of the lease after the start
            if Exhibit.objects.get(pk=exhibit.pk).lease_expires_at > first_expiry + timedelta(seconds=1):
                break
            keeper.stopping.wait(0.1)
    assert not keeper.lost
    assert Exhibit.objects.get(pk=exhibit.pk).lease_expires_at > first_expiry + timedelta(seconds=1)


@pytest.fixture
def confirmed_import(matter, attorney, tmp_path):
    """A volume of three documents received and confirmed, waiting for a worker (nothing read yet)."""
    with open(zipped_volume(tmp_path), "rb") as upload:
        incoming = incoming_receive(matter=matter, uploads=[upload], origin="opposing_party", user=attorney)
    return incoming_confirm(incoming=incoming, field_map=incoming.field_map, user=attorney)


def test_an_import_is_taken_back_only_once_its_lease_expired(confirmed_import, matter):
    IncomingProduction.objects.filter(pk=confirmed_import.pk).update(
        lease_owner="w:1:a", lease_expires_at=timezone.now() + timedelta(seconds=30))
    assert import_confirmed(incoming_id=confirmed_import.pk).status == "importing"  # a live worker holds it
    assert imports_recover() == [] and lease_watch("import", confirmed_import.pk) == "live"
    IncomingProduction.objects.filter(pk=confirmed_import.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert lease_watch("import", confirmed_import.pk) == "recovered"
    row = IncomingProduction.objects.get(pk=confirmed_import.pk)
    assert (row.status, row.lease_owner, row.lease_expires_at) == ("importing", "", None)
    assert imports_recover() == [] and lease_watch("import", confirmed_import.pk) == "settled"
    entry = AuditEntry.objects.get(matter=matter, action="incoming_production.restart")
    assert entry.detail["worker"] == "w:1:a"


@pytest.mark.ocr
def test_an_import_read_again_keeps_the_exhibits_it_made_and_makes_each_missing_one_once(confirmed_import, matter):
    assert import_confirmed(incoming_id=confirmed_import.pk).status == "done"
    links = list(IncomingDocument.objects.filter(incoming=confirmed_import).order_by("record"))
    assert [link.record for link in links] == [0, 1, 2]
    made = {link.record: link.exhibit_id for link in links}
    # As a worker killed while reading the second record leaves it: the first record whole, the second's exhibit
    # claimed and half read, the third never reached, no Bates number recorded yet for the last two.
    second, third = links[1].exhibit, links[2].exhibit
    IncomingBatesPage.objects.filter(incoming=confirmed_import, page__exhibit__in=[second, third]).delete()
    Page.objects.filter(exhibit=second, number__gt=1).delete()
    Exhibit.objects.filter(pk=second.pk).update(status="processing", lease_owner="w:1:a", progress_page=1,
                                                lease_expires_at=timezone.now() - timedelta(seconds=1))
    links[2].delete()
    Page.objects.filter(exhibit=third).delete()
    Exhibit.objects.filter(pk=third.pk).delete()
    # The prefixes go with the numbers they were read from: one only the dead reading saw does not outlive it.
    IncomingProduction.objects.filter(pk=confirmed_import.pk).update(
        status="importing", lease_owner="w:1:a", lease_expires_at=timezone.now() - timedelta(seconds=1),
        bates_prefixes=["DEF", "XYZ"])

    assert imports_recover() == [confirmed_import.pk]
    again = import_confirmed(incoming_id=confirmed_import.pk)
    assert again.status == "done", again.reason
    links = list(IncomingDocument.objects.filter(incoming=again).order_by("record"))
    assert [link.record for link in links] == [0, 1, 2]
    assert (links[0].exhibit_id, links[1].exhibit_id) == (made[0], made[1])  # kept, not made again
    assert matter.exhibits.count() == 3 and all(link.exhibit.status == "ready" for link in links)
    numbers = sorted(IncomingBatesPage.objects.filter(incoming=again).values_list("bates", flat=True))
    assert numbers == [f"DEF{n:06d}" for n in range(1, sum(PAGES_PER_DOCUMENT) + 1)]
    assert IncomingProduction.objects.get(pk=again.pk).bates_prefixes == ["DEF"]
    for link, count in zip(links, PAGES_PER_DOCUMENT):
        assert list(link.exhibit.pages.values_list("number", flat=True)) == list(range(1, count + 1))
