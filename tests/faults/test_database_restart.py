"""PostgreSQL restarted while a worker runs: every connection drops and new ones are refused for a few seconds. The
worker reaches the database through a loopback proxy that the test cuts and restores (the shared server itself is
never restarted); it reconnects, the exhibit it was reading when the database went away is processed again, and
it goes on with the next file."""

import time

import pytest
from django.db import connection

from matters.exhibits.services import exhibit_create
from matters.models import AuditEntry, Exhibit
from tests.faults.conftest import LEASE_ENV, OCR_ENV, wait_for
from tests.support.processes import database_url
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

OUTAGE_S = 3


def upload(matter, attorney, path):
    with open(path, "rb") as stream:
        return exhibit_create(matter=matter, stream=stream, original_name=path.name, origin="client",
                              uploaded_by=attorney)


def status_of(exhibit_id: int) -> str:
    return Exhibit.objects.values_list("status", flat=True).get(pk=exhibit_id)


def test_a_worker_reconnects_after_the_database_restarts_and_goes_on(matter, attorney, corpus, processes):
    if connection.vendor != "postgresql":
        pytest.skip("a database server restart applies to PostgreSQL (SQLite is a file in the data directory)")
    settings = connection.settings_dict
    with TcpProxy((settings.get("HOST") or "127.0.0.1", int(settings.get("PORT") or 5432))) as proxy:
        through_proxy = database_url().replace(f":{settings.get('PORT') or 5432}/", f":{proxy.port}/")
        worker = processes.worker(DATABASE_URL=through_proxy, **LEASE_ENV, **OCR_ENV)
        first = upload(matter, attorney, corpus("court/ca2_1-1.pdf"))
        wait_for(lambda: status_of(first.pk) == "ready", timeout_s=60, what="the first file")

        scan = upload(matter, attorney, corpus("odd/scan-2p.pdf"))  # OCR: seconds of work to cut into
        wait_for(lambda: status_of(scan.pk) == "processing", timeout_s=60, what="the scan to be taken",
                 every_s=0.02)
        proxy.cut()  # the server goes down: connections dropped, new ones refused
        time.sleep(OUTAGE_S)
        accepted_before = proxy.accepted
        proxy.restore()

        wait_for(lambda: status_of(scan.pk) not in ("queued", "processing"), timeout_s=120,
                 what="the interrupted scan to be processed again")
        scan.refresh_from_db()
        assert scan.status == "ready", scan.reason
        assert scan.pages.count() == scan.page_count == 2
        # Taken over through its lease: the attempt the outage broke never wrote an end of its own.
        requeued = AuditEntry.objects.filter(matter=matter, action="exhibit.status", object_id=str(scan.pk),
                                             detail__to="queued")
        assert requeued.count() == 1
        last = upload(matter, attorney, corpus("court/ca7_3.pdf"))
        wait_for(lambda: status_of(last.pk) == "ready", timeout_s=60, what="a file sent after the restart")
        assert worker.poll() is None  # the same process, still running
        assert proxy.accepted > accepted_before  # it connected again through the restored server
