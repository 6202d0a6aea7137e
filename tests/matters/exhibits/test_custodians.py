"""Custodians: every exhibit names who it was collected from (nobody unless chosen), and a production's DAT says so."""

import io
import zipfile

import pymupdf
import pytest
from django.urls import reverse

from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create
from matters.models import Custodian, Exhibit
from matters.productions.bates.volume import QUOTE, SEPARATOR
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

pytestmark = pytest.mark.django_db


def pdf_bytes(text: str) -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text)
    return doc.tobytes()


def upload(matter, attorney, text: str, **options) -> Exhibit:
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(pdf_bytes(text)), original_name=f"{text[:20]}.pdf",
                             origin=options.pop("origin", "client"), uploaded_by=attorney, enqueue=False, **options)
    return exhibit_process(exhibit_id=exhibit.pk, previews="skip")


def test_custodian_is_nobody_unless_chosen_and_names_are_kept_once_per_matter(matter, attorney):
    matter.client = "Acme Corp."
    matter.save()
    plain = upload(matter, attorney, "Letter of March 3, 2021 regarding the lease.")
    chosen = upload(matter, attorney, "Memorandum of April 9, 2021 on the audit.", custodian="  Jane   Rivera ")
    again = upload(matter, attorney, "Invoice 4471 dated May 1, 2021.", custodian="Jane Rivera")
    assert plain.custodian is None and plain.custodian_names == []
    assert chosen.custodian.name == "Jane Rivera" and again.custodian_id == chosen.custodian_id
    assert Custodian.objects.filter(matter=matter).count() == 1


def test_upload_form_takes_the_custodian_and_the_exhibit_page_shows_it(client, matter, attorney):
    client.force_login(attorney)
    response = client.post(reverse("matters:upload", args=[matter.pk]), {
        "origin": "opposing_party", "custodian": "R. Okafor",
        "file": io.BytesIO(pdf_bytes("Notice of default served on the tenant.")),
    })
    assert response.status_code == 201, response.content
    exhibit = Exhibit.objects.get(pk=response.json()["exhibit"])
    assert exhibit.custodian.name == "R. Okafor"
    page = client.get(exhibit.get_absolute_url()).content.decode()
    assert "<dt>Custodian</dt><dd>R. Okafor</dd>" in page
    other = client.post(reverse("matters:upload", args=[matter.pk]), {
        "origin": "client", "file": io.BytesIO(pdf_bytes("Second notice, unrelated to the first one."))})
    page = client.get(Exhibit.objects.get(pk=other.json()["exhibit"]).get_absolute_url()).content.decode()
    assert "nobody named" in page
    assert 'value="R. Okafor"' in client.get(matter.get_absolute_url()).content.decode()  # offered next time


def test_production_dat_names_each_documents_custodian_not_the_client(matter, attorney):
    matter.client = "Acme Corp."
    matter.save()
    theirs = upload(matter, attorney, "Opposing party's letter demanding payment.", origin="opposing_party",
                    custodian="B. Stone")
    nobody = upload(matter, attorney, "An unsigned note about the meeting on June 2.")
    production = production_create(matter=matter, exhibits=[theirs, nobody], prefix="ACME", created_by=attorney,
                                   enqueue=False)
    production = production_run(production_id=production.pk)
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        dat = volume.read("VOL001/DATA/VOL001.dat").decode("utf-8").split("\r\n")
    header = [f.strip(QUOTE) for f in dat[0].split(SEPARATOR)]
    rows = [dict(zip(header, (f.strip(QUOTE) for f in line.split(SEPARATOR)))) for line in dat[1:] if line]
    assert [row["CUSTODIAN"] for row in rows] == ["B. Stone", ""]
