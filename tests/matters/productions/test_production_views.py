"""The productions page: start a production in the browser's form, see it progress, download it, see void ranges."""

import pymupdf
import pytest
from django.urls import reverse

from matters.forms import MatterForm
from matters.models import Matter, Production
from matters.productions.reservation import AEO, production_create
from matters.productions.stamping import production_run

pytestmark = pytest.mark.django_db


def test_form_starts_a_production_in_the_chosen_order_and_downloads_follow(client, attorney, matter, corpus, ingest):
    first = ingest(matter, corpus("court/ca7_3.pdf"))
    second = ingest(matter, corpus("court/cafc_3.pdf"))
    client.force_login(attorney)
    url = reverse("matters:productions", args=[matter.pk])
    page = client.get(url).content.decode()
    assert "<title>Productions – Smith v. Jones – LawDesk</title>" in page
    assert page.count("Productions received") == 1
    assert f'name="include-{first.pk}" checked' in page
    response = client.post(url, {
        "prefix": "SMITH", "digits": "7", "position": "top-right", "cover_sheets": "none", "with_index": "on",
        "keep_forms": "on", f"include-{first.pk}": "on", f"order-{first.pk}": "2", f"confidentiality-{first.pk}": AEO,
        f"include-{second.pk}": "on", f"order-{second.pk}": "1", f"confidentiality-{second.pk}": "custom",
        f"custom-{second.pk}": "SUBJECT TO PROTECTIVE ORDER",
    })
    assert response.status_code == 302
    production = Production.objects.get()
    assert production.keep_forms and 'name="keep_forms"' in page
    assert [d.exhibit_id for d in production.documents.all()] == [second.pk, first.pk]
    assert [d.confidentiality for d in production.documents.all()] == ["SUBJECT TO PROTECTIVE ORDER", AEO]
    assert 'hx-trigger="every 1s"' in client.get(url).content.decode()  # the list follows a stamping production
    production_run(production_id=production.pk)
    listing = client.get(url).content.decode()
    assert "<td>SMITH0000001–SMITH" in listing and 'hx-trigger="every 1s"' not in listing
    download = client.get(reverse("matters:production_download", args=[matter.pk, production.pk, "pdf"]))
    assert download.status_code == 200 and download["Content-Disposition"].startswith("attachment")
    pdf = pymupdf.open("pdf", b"".join(download.streaming_content))
    assert pdf[1].search_for("SMITH0000001") and pdf[1].search_for("SUBJECT TO PROTECTIVE ORDER")
    assert matter.audit_entries.filter(action="production.download").count() == 1


def test_void_ranges_and_gaps_are_shown(client, attorney, matter, corpus, ingest):
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    failed = production_create(matter=matter, exhibits=[exhibit], prefix="SMITH", created_by=attorney, enqueue=False)
    Production.objects.filter(pk=failed.pk).update(status="failed",
                                                   reason="The production could not be made: disk full")
    production_create(matter=matter, exhibits=[exhibit], prefix="SMITH", start=5, created_by=attorney, enqueue=False)
    client.force_login(attorney)
    page = client.get(reverse("matters:productions", args=[matter.pk])).content.decode()
    assert "Range void, never reused." in page and "disk full" in page
    assert "SMITH000002–SMITH000004" in page and "skipped by a chosen start number" in page


def test_non_member_cannot_see_or_download(client, make_user, matter, attorney, corpus, ingest):
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[exhibit], prefix="SMITH", created_by=attorney, enqueue=False).pk)
    client.force_login(make_user("eve", "attorney", is_superuser=True))
    assert client.get(reverse("matters:productions", args=[matter.pk])).status_code == 404
    assert client.get(reverse("matters:production_download", args=[matter.pk, production.pk, "zip"])).status_code == 404


def prefix_offered(client, matter) -> str:
    page = client.get(reverse("matters:productions", args=[matter.pk])).content.decode()
    start = page.index('name="prefix" value="') + len('name="prefix" value="')
    return page[start:page.index('"', start)]


def test_the_new_production_form_offers_the_prefix_the_matter_last_produced_with(client, attorney, matter, corpus,
                                                                                 ingest):
    matter.client = "Harold Whitcombe"
    matter.save()
    exhibit = ingest(matter, corpus("court/ca2_1-1.pdf"))
    client.force_login(attorney)
    assert prefix_offered(client, matter) == "HAROLD"  # a first production: a guess from the client
    production_create(matter=matter, exhibits=[exhibit], prefix="WHITCOMBE", created_by=attorney, enqueue=False)
    assert prefix_offered(client, matter) == "WHITCOMBE"
    production_create(matter=matter, exhibits=[exhibit], prefix="WCO-", created_by=attorney, enqueue=False)
    assert prefix_offered(client, matter) == "WCO-"  # the last one, not the first


def test_a_prefix_set_on_the_matter_is_offered_before_the_last_one_used(client, attorney, matter, corpus, ingest):
    exhibit = ingest(matter, corpus("court/ca2_1-1.pdf"))
    production_create(matter=matter, exhibits=[exhibit], prefix="OTHER", created_by=attorney, enqueue=False)
    matter.bates_prefix = "SMITHCO"
    matter.save()
    client.force_login(attorney)
    assert prefix_offered(client, matter) == "SMITHCO"


def test_a_matter_prefix_that_could_not_number_a_page_is_refused(client, attorney):
    form = MatterForm({"name": "Roe v. Doe", "label_style": "numeric", "bates_prefix": "ROE2"})
    assert not form.is_valid() and "does not end in a digit" in " ".join(form.errors["bates_prefix"])
    assert MatterForm({"name": "Roe v. Doe", "label_style": "numeric", "bates_prefix": "ROE-"}).is_valid()


def test_a_matter_created_with_its_prefix_offers_it_for_its_first_production(client, attorney, corpus, ingest):
    client.force_login(attorney)
    response = client.post(reverse("matters:new"), {"name": "Roe v. Doe", "client": "Jane Roe",
                                                    "label_style": "numeric", "bates_prefix": "ROEDEF"})
    assert response.status_code == 302
    matter = Matter.objects.get(name="Roe v. Doe")
    ingest(matter, corpus("court/ca2_1-1.pdf"))
    assert prefix_offered(client, matter) == "ROEDEF"  # not JANE
