"""Bates numbers in the search box: a number, a range, or any form the verifier reads, finds the exhibit page it
was stamped on (productions sent) or received with (productions received), and names the production."""

import pytest
from django.urls import reverse

from matters.drafts.verifier.record import find_bates
from matters.exhibits.bates_search import matter_bates_prefixes, matter_bates_search
from matters.incoming.services import record_bates_pages
from matters.models import IncomingBatesPage, IncomingProduction, Production
from matters.services import matter_create
from tests.factories import ExhibitFactory, ProductionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def produced(matter):
    """SMITH000001–SMITH000025 sent, over the 25 pages of Exhibit 1; JONES0041–JONES0042 received as Exhibit 2."""
    exhibit = ExhibitFactory(matter=matter, pages=[f"Page {n} of the lease file." for n in range(1, 26)])
    production = ProductionFactory(matter=matter, prefix="SMITH", digits=6,
                                   pages=list(exhibit.pages.order_by("number")))
    received = ExhibitFactory(matter=matter, pages=["The landlord's notice.", "The landlord's reply."])
    incoming = IncomingProduction.objects.create(matter=matter, origin="opposing_party", source_name="VOL001.zip",
                                                 sha256="0" * 64, status=IncomingProduction.Status.DONE)
    record_bates_pages(incoming, [IncomingBatesPage(incoming=incoming, page=page, bates=bates) for page, bates in
                                  zip(received.pages.order_by("number"), ["JONES0041", "JONES0042"], strict=True)])
    return {"exhibit": exhibit, "production": production, "received": received, "incoming": incoming}


def _found(matter, query):
    results = matter_bates_search(matter=matter, query=query)
    return [(hit.bates, hit.direction, hit.page_number) for hit in results.hits]


@pytest.mark.parametrize("query", ["SMITH000003", "smith000003", "SMITH 000003", "SMITH_000003",
                                   "see SMITH000003"])
def test_a_bates_number_in_any_form_the_verifier_reads_finds_its_page(query, matter, produced):
    results = matter_bates_search(matter=matter, query=query)
    [hit] = results.hits
    assert (hit.bates, hit.direction, hit.exhibit_id, hit.page_number) == (
        "SMITH000003", "sent", produced["exhibit"].pk, 3)
    assert hit.production == "SMITH000001–SMITH000025"


@pytest.mark.parametrize("query", ["SMITH000003-SMITH000005", "SMITH000003-005", "SMITH000003 – SMITH000005",
                                   "SMITH000003 through SMITH000005", "smith000003 through smith000005"])
def test_a_range_finds_each_of_its_pages(query, matter, produced):
    assert _found(matter, query) == [("SMITH000003", "sent", 3), ("SMITH000004", "sent", 4),
                                     ("SMITH000005", "sent", 5)]


def test_numbers_received_are_found_with_their_volume(matter, produced):
    results = matter_bates_search(matter=matter, query="JONES0041-JONES0042")
    assert [(h.bates, h.direction, h.exhibit_id, h.page_number) for h in results.hits] == [
        ("JONES0041", "received", produced["received"].pk, 1), ("JONES0042", "received", produced["received"].pk, 2)]
    assert results.hits[0].production == "VOL001.zip"
    assert results.hits[0].production_url == reverse("matters:incoming", args=[matter.pk, produced["incoming"].pk])


def test_words_find_no_bates_and_a_number_past_the_end_finds_nothing(matter, produced):
    assert matter_bates_search(matter=matter, query="lease file") is None
    empty = matter_bates_search(matter=matter, query="SMITH000026")
    assert empty.numbers == ["SMITH000026"] and empty.hits == []


def test_another_matters_numbers_and_an_unfinished_production_are_not_found(matter, produced, attorney):
    other = matter_create(name="Other v. Other", created_by=attorney)
    ProductionFactory(matter=other, prefix="SMITH", digits=6, first_number=100,
                      pages=list(ExhibitFactory(matter=other, pages=["x"]).pages.all()))
    assert matter_bates_search(matter=matter, query="SMITH000100").hits == []
    Production.objects.filter(pk=produced["production"].pk).update(status=Production.Status.STAMPING)
    assert matter_bates_search(matter=matter, query="SMITH000003").hits == []


def test_the_search_box_shows_the_page_and_the_production(client, attorney, matter, produced):
    client.force_login(attorney)
    html = client.get(reverse("matters:detail", args=[matter.pk]), {"q": "SMITH000003"},
                      headers={"HX-Request": "true", "HX-Target": "search-results"}).content.decode()
    page_url = reverse("matters:page", args=[matter.pk, produced["exhibit"].pk, 3])
    assert f'<a href="{page_url}">Exhibit {produced["exhibit"].label}, page 3</a>' in html
    assert "in the production sent, <a href=" in html and "SMITH000001–SMITH000025</a>" in html
    assert "0 pages found" not in html
    whole = client.get(reverse("matters:detail", args=[matter.pk]), {"q": "JONES0042"}).content.decode()
    assert "in the production received, <a href=" in whole and "VOL001.zip</a>" in whole


def test_every_volume_received_is_known_by_its_prefix_however_many_pages_came_before(matter, produced):
    """A matter received 5,001 numbered pages from one party before a volume from another: search and the
    verifier read the second party's numbers as Bates numbers too (a sample of the numbers received once missed
    every prefix past its first 5,000 rows)."""
    page = produced["received"].pages.get(number=1)
    bulk = IncomingProduction.objects.create(matter=matter, origin="opposing_party", source_name="VOL002.zip",
                                             sha256="1" * 64, status=IncomingProduction.Status.DONE)
    record_bates_pages(bulk, [IncomingBatesPage(incoming=bulk, page=page, bates=f"JONES{n:06d}")
                              for n in range(100, 5101)])
    third = IncomingProduction.objects.create(matter=matter, origin="third_party", source_name="ACME-VOL1.zip",
                                              sha256="2" * 64, status=IncomingProduction.Status.DONE)
    other = produced["received"].pages.get(number=2)
    record_bates_pages(third, [IncomingBatesPage(incoming=third, page=other, bates="ACME-0007")])
    assert IncomingProduction.objects.get(pk=third.pk).bates_prefixes == ["ACME-"]
    assert IncomingProduction.objects.get(pk=bulk.pk).bates_prefixes == ["JONES"]
    assert matter_bates_prefixes(matter) == {"SMITH", "JONES", "ACME-"}
    assert [m.text for m in find_bates("see ACME-0007 at 2", matter_bates_prefixes(matter))] == ["ACME-0007"]
    assert _found(matter, "ACME-0007") == [("ACME-0007", "received", 2)]


def test_volumes_imported_before_prefixes_were_kept_get_them_from_their_pages(matter, produced):
    from importlib import import_module

    from django.apps import apps

    incoming = produced["incoming"]
    IncomingProduction.objects.filter(pk=incoming.pk).update(bates_prefixes=[])
    assert matter_bates_prefixes(matter) == {"SMITH"}
    import_module("matters.migrations.0029_incoming_bates_prefixes").fill_prefixes(apps, None)
    assert IncomingProduction.objects.get(pk=incoming.pk).bates_prefixes == ["JONES"]
