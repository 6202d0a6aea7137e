"""Query counts the topology and the evidence packet promise: the same number of queries for 2 rows and for 20,
on SQLite and PostgreSQL alike. A count that grows with the rows is a query per row (N+1), which a deployment with
a few thousand pages or a rack of servers would pay on every page view and every stage."""

import pytest

from pipeline.models import ProbeResult
from pipeline.packet import evidence_packet
from pipeline.topology.selectors import snapshot_load
from tests.factories import ExhibitFactory, MatterFactory, ModelServerFactory, ProductionFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("servers", [2, 20])
def test_snapshot_load_reads_the_topology_in_six_queries_whatever_its_size(servers, django_assert_num_queries):
    """GPUs with their hosts, boards and their GPUs, servers with their GPUs and latest build, learned
    efficiencies."""
    for server in ModelServerFactory.create_batch(servers):
        ProbeResult.objects.create(server=server, status=ProbeResult.Status.UP, decode_tok_s=50.0, ceiling_tok_s=100.0,
                                   efficiency_key=f"v100:{server.name}", build_info="b5000 (abc123)")
    with django_assert_num_queries(6):
        snapshot = snapshot_load()
    assert len(snapshot.servers) == servers and len(snapshot.boards) == servers
    assert len(snapshot.gpus) == 2 * servers and len(snapshot.efficiencies) == servers
    assert {s.build_info for s in snapshot.servers} == {"b5000 (abc123)"}
    assert all(len(s.gpu_ids) == 2 for s in snapshot.servers)


@pytest.mark.parametrize("pages", [2, 20])
def test_evidence_packet_reads_pages_and_bates_numbers_in_four_queries(pages, django_assert_num_queries):
    """The pages with their exhibits, then the Bates numbers, their productions and incoming numbers, each once."""
    matter = MatterFactory()
    halves = (pages // 2, pages - pages // 2)
    exhibits = [ExhibitFactory(matter=matter, pages=[f"Exhibit {e} page {n}." for n in range(1, count + 1)])
                for e, count in enumerate(halves, start=1)]
    ProductionFactory(matter=matter, pages=list(exhibits[0].pages.all()))
    with django_assert_num_queries(4):
        packet = evidence_packet(matter)
    assert len(packet.pages) == pages
    assert packet.pages[0].bates == ["SMITH000001"] and packet.pages[-1].bates == []
