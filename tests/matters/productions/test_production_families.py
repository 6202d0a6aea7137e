"""A family is produced whole even when an attachment is a duplicate (the same contract attached to two messages
is stored once): the attachment is produced in its place with the pages it repeats, and the counts are true."""

import zipfile

import pytest

from matters.models import BatesPage, Exhibit
from matters.productions.bates.volume import QUOTE, SEPARATOR
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from tests.matters.exhibits.email_messages import as_bytes, ingest_bytes, message, pdf_bytes

pytestmark = pytest.mark.django_db

CONTRACT = "Supply contract between Ruiz Holdings and Stone Roofing, clause 4: price 48,250.00 per year."


def _dat_rows(production) -> list[dict]:
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        dat = volume.read(f"{production.volume}/DATA/{production.volume}.dat").decode("utf-8").split("\r\n")
        texts = {name: volume.read(name).decode("utf-8") for name in volume.namelist() if "/TEXT/" in name}
    header = [f.strip(QUOTE) for f in dat[0].split(SEPARATOR)]
    rows = [dict(zip(header, (f.strip(QUOTE) for f in line.split(SEPARATOR)))) for line in dat[1:] if line]
    for row in rows:
        row["text"] = texts[row["TEXTPATH"].replace("\\", "/")]
    return rows


def _two_messages_with_one_contract(matter, attorney):
    contract = pdf_bytes(CONTRACT)
    first = message(subject="Contract", message_id="<c-1@ruiz-law.example>", body="Ben, the contract.\n")
    first.add_attachment(contract, maintype="application", subtype="pdf", filename="contract.pdf")
    second = message(subject="Contract again", message_id="<c-2@ruiz-law.example>", body="Ben, signed now.\n",
                     date="Wed, 04 Mar 2026 09:00:00 -0800")
    second.add_attachment(pdf_bytes("Cover note: signature page follows."), maintype="application",
                          subtype="pdf", filename="note.pdf")
    second.add_attachment(contract, maintype="application", subtype="pdf", filename="contract.pdf")
    return (ingest_bytes(matter, attorney, as_bytes(first), name="first.eml"),
            ingest_bytes(matter, attorney, as_bytes(second), name="second.eml"))


def test_a_duplicate_attachment_is_produced_in_its_family_with_a_true_count(matter, attorney):
    first, second = _two_messages_with_one_contract(matter, attorney)
    note, again = second.children.order_by("family_position")
    original = first.children.get()
    assert (again.status, again.duplicate_of_id) == (Exhibit.Status.DUPLICATE, original.pk)

    production = production_run(production_id=production_create(
        matter=matter, exhibits=[second], prefix="RUIZ", created_by=attorney, enqueue=False).pk)
    assert production.status == "done", production.reason
    assert list(production.documents.order_by("order").values_list("exhibit_id", flat=True)) == [
        second.pk, note.pk, again.pk]
    message_row, note_row, contract_row = _dat_rows(production)
    assert message_row["ATTACHMENT_COUNT"] == "2"
    assert (contract_row["PARENT_BATES"], contract_row["ENDATTACH"]) == (message_row["BEGBATES"],
                                                                         contract_row["ENDBATES"])
    assert contract_row["PAGECOUNT"] == "1" and "price 48,250.00" in contract_row["text"]
    assert contract_row["SHA256"] == original.sha256
    # The contract's produced page cites back to the page it shows.
    page = BatesPage.objects.get(production=production, bates=contract_row["BEGBATES"]).page
    assert page.exhibit_id == original.pk and page.number == 1


def test_both_families_produce_the_shared_attachment(matter, attorney):
    first, second = _two_messages_with_one_contract(matter, attorney)
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[first, second], prefix="RUIZ", created_by=attorney, enqueue=False).pk)
    assert production.status == "done", production.reason
    rows = _dat_rows(production)
    assert [row["ATTACHMENT_COUNT"] for row in rows] == ["1", "0", "2", "0", "0"]
    assert sum("price 48,250.00" in row["text"] for row in rows) == 2
