"""Leases on documents-queue work (matters.leases, matters.recovery), without worker processes: a live lease is
never taken over, an expired one is, and a worker that lost its lease writes nothing."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from matters.leases import LeaseKeeper
from matters.models import AuditEntry, Exhibit, Production
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from matters.recovery import exhibits_recover, lease_watch, productions_recover
from matters.exhibits.services import exhibit_create

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
    assert productions_recover() == [production.pk]
    done = production_run(production_id=production.pk)
    assert done.status == "done" and (done.first_number, done.last_number) == (1, exhibit.page_count)
    assert done.bates_pages.count() == exhibit.page_count
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
