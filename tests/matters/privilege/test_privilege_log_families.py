"""The privilege log names families: a withheld attachment's row names the message it was attached to (its Bates
number, and its subject when the message itself is produced), and a message's row names its withheld
attachments."""

import csv
import io

import pytest

from matters.models import Production, ProductionDocument
from matters.privilege.log import log_csv_bytes, log_pdf_bytes
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from tests.matters.exhibits.email_messages import as_bytes, ingest_bytes, message, pdf_bytes

pytestmark = pytest.mark.django_db
ADVICE = {"basis": "attorney_client", "description": "Counsel's advice to the client on the lease terms"}


def family_with_two_attachments(matter, attorney):
    mail = message(subject="Lease renewal: schedules",
                   body="Ben, the renewal is attached with counsel's notes on the holdover clause.\n")
    mail.add_attachment(pdf_bytes("Counsel's privileged notes on the holdover clause."), maintype="application",
                        subtype="pdf", filename="notes.pdf")
    mail.add_attachment(pdf_bytes("Schedule 2: the rent table for the renewal term."), maintype="application",
                        subtype="pdf", filename="schedule-2.pdf")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    return parent, *parent.children.order_by("family_position")


def produce(matter, attorney, exhibits, withheld):
    production = production_run(production_id=production_create(
        matter=matter, exhibits=exhibits, prefix="RUIZ", created_by=attorney, enqueue=False,
        withheld={exhibit.pk: ADVICE for exhibit in withheld}).pk)
    assert production.status == Production.Status.DONE, production.reason
    return production


def log_of(production) -> list[dict]:
    return list(csv.DictReader(io.StringIO(log_csv_bytes(production).decode("utf-8-sig"))))


def first_bates(production, exhibit) -> str:
    return production.bates(ProductionDocument.objects.get(production=production, exhibit=exhibit).first_number)


def test_a_withheld_attachment_names_its_produced_message_and_subject(matter, attorney):
    parent, notes, schedule = family_with_two_attachments(matter, attorney)
    production = produce(matter, attorney, [parent], withheld=[notes])
    (row,) = log_of(production)
    assert row["bates_begin"] == first_bates(production, notes)
    assert row["document_type"] == "Attachment"
    assert row["family"] == f"attachment 1 of {first_bates(production, parent)}, email “Lease renewal: schedules”"
    with_pdf = log_pdf_bytes(production)
    import pymupdf

    with pymupdf.open(stream=with_pdf) as pdf:
        assert f"attachment 1 of {first_bates(production, parent)}" in " ".join(pdf[0].get_text().split())


def test_a_withheld_message_names_its_withheld_attachments_and_they_name_it_without_its_subject(
        client, matter, attorney):
    parent, notes, schedule = family_with_two_attachments(matter, attorney)
    production = produce(matter, attorney, [parent], withheld=[parent, notes, schedule])
    rows = {row["bates_begin"]: row for row in log_of(production)}
    parent_bates, notes_bates, schedule_bates = (first_bates(production, e) for e in (parent, notes, schedule))
    assert rows[parent_bates]["family"] == (f"withheld attachments: {notes_bates} (attachment 1), "
                                            f"{schedule_bates} (attachment 2)")
    assert rows[notes_bates]["family"] == f"attachment 1 of {parent_bates}, withheld"
    assert rows[schedule_bates]["family"] == f"attachment 2 of {parent_bates}, withheld"
    assert all("Lease renewal" not in row["family"] for row in rows.values())

    client.force_login(attorney)
    page = client.get(f"/matters/{matter.pk}/productions/{production.pk}/privilege-log/").content.decode()
    assert f"attachment 2 of {parent_bates}, withheld" in page


def test_a_document_of_no_family_has_no_family_entry(matter, attorney):
    loose = ingest_bytes(matter, attorney, pdf_bytes("A privileged memo about the holdover clause."),
                         name="memo.pdf")
    production = produce(matter, attorney, [loose], withheld=[loose])
    assert [row["family"] for row in log_of(production)] == [""]


def test_a_withheld_messages_own_headers_may_be_logged_but_its_body_may_not(matter, attorney):
    from matters.models import PrivilegeLogEntry

    parent, notes, schedule = family_with_two_attachments(matter, attorney)
    production = production_create(matter=matter, exhibits=[parent], prefix="RUIZ", created_by=attorney,
                                   enqueue=False, withheld={e.pk: ADVICE for e in (parent, notes, schedule)})
    entry = PrivilegeLogEntry.objects.get(document__production=production, document__exhibit=parent)
    assert entry.author == "Ana Ruiz <ana@ruiz-law.example>"  # its From header, which its withheld page shows too
    # Written past the form's own check, as a stale row could be: the message's body in the author column.
    PrivilegeLogEntry.objects.filter(pk=entry.pk).update(
        author="Ana Ruiz: the renewal is attached with counsel's notes")
    production = production_run(production_id=production.pk)
    assert production.status == Production.Status.FAILED
    assert "the privilege log" in production.reason and "author" in production.reason
