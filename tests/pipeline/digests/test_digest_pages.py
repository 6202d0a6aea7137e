"""Where digests are shown: the exhibit page's panel and the matter's digest list, always as model output; the
buttons that queue them; membership."""

import pytest

from matters.leases import tasks_waiting
from matters.models import AuditEntry
from pipeline.digests.services import digest_make
from pipeline.packet import evidence_packet
from pipeline.tasks import digest_exhibit
from tests.factories import ExhibitFactory, MatterFactory, UserFactory
from tests.pipeline.digests.test_digest_make import LEASE_PAGES, _digest
from tests.support.jobs import register
from tests.support.stage_server import stage_server

pytestmark = pytest.mark.django_db


@pytest.fixture
def digested(server, matter):
    stage_server(server, {"digest": _digest()})
    register(server.url)
    lease = ExhibitFactory(matter=matter, title="Lease", pages=LEASE_PAGES)
    digest_make(exhibit_id=lease.pk)
    return lease


def test_the_exhibit_page_loads_its_digest_labelled_as_model_output(client, attorney, matter, digested):
    client.force_login(attorney)
    page = client.get(f"/matters/{matter.pk}/exhibits/{digested.pk}/").content.decode()
    panel_url = f"/matters/{matter.pk}/exhibits/{digested.pk}/digest/"
    assert f'hx-get="{panel_url}"' in page
    panel = client.get(panel_url, headers={"HX-Request": "true"}).content.decode()
    assert "Model output, not evidence" in panel and "scripted-model" in panel and "digest.v1.txt" in panel
    assert "residential lease" in panel and "The monthly rent is $1,250.00" in panel
    # The roof fact cites page 1, which does not say it: flagged, with the words missing.
    assert "Not borne out: the page it cites does not hold its key words" in panel and "roof" in panel
    assert f'href="/matters/{matter.pk}/exhibits/{digested.pk}/pages/1/"' in panel


def test_the_matter_digest_page_lists_every_exhibit_and_a_failure_says_why(client, attorney, matter, digested, server):
    stage_server(server, {"digest": "{broken"})
    other = ExhibitFactory(matter=matter, title="Invoice", pages=["Invoice for $300.00 dated June 1, 2021."])
    digest_make(exhibit_id=other.pk)
    client.force_login(attorney)
    page = client.get(f"/matters/{matter.pk}/digests/").content.decode()
    assert page.count("Model output, not evidence") == 2
    assert "residential lease" in page and "No digest:" in page and "The exhibit itself is unaffected." in page
    assert f'href="/matters/{matter.pk}/digests/"' in client.get(f"/matters/{matter.pk}/").content.decode()


def test_the_button_queues_the_missing_digests_and_is_recorded(client, attorney, matter, digested,
                                                              django_capture_on_commit_callbacks):
    ExhibitFactory(matter=matter, title="Invoice", pages=["Invoice for $300.00."])
    client.force_login(attorney)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/matters/{matter.pk}/digests/request/", {}, follow=True)
    assert "1 digest queued for the summarizer." in response.content.decode()
    assert tasks_waiting(digest_exhibit).count() == 1
    assert AuditEntry.objects.filter(matter=matter, action="digest.request").count() == 1


def test_non_members_get_404_and_viewers_without_the_permission_cannot_queue(client, matter, digested):
    outsider = UserFactory()
    MatterFactory(members=[outsider])
    client.force_login(outsider)
    for url in (f"/matters/{matter.pk}/digests/", f"/matters/{matter.pk}/exhibits/{digested.pk}/digest/"):
        assert client.get(url).status_code == 404
    assert client.post(f"/matters/{matter.pk}/digests/request/").status_code == 404
    operator = UserFactory(role="operator")
    matter.members.add(operator)
    client.force_login(operator)
    response = client.post(f"/matters/{matter.pk}/digests/request/", follow=True)
    assert "You may not ask for digests in this matter." in response.content.decode()
    assert not tasks_waiting(digest_exhibit).exists()


def test_a_digest_never_enters_the_evidence_packet(matter, digested):
    packet = evidence_packet(matter, query="lease rent roof")
    text = packet.prompt_text()
    assert "The monthly rent is $1,250.00, due on the first day" in text  # the page itself
    assert "A lease of an apartment from Jones to Smith." not in text  # the digest's summary
