"""Duplicates and threads: the same message from two custodians is one exhibit with two custodians; messages are
grouped into conversations by their reference headers, then by normalised subject, in the order sent."""

import io
import zipfile

import pytest

from matters.email.parse import normalised_subject
from matters.email.threads import exhibit_thread, thread_keys
from matters.models import Exhibit
from matters.productions.bates.volume import QUOTE, SEPARATOR
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

from .email_messages import as_bytes, ingest_bytes, message, pdf_bytes

pytestmark = pytest.mark.django_db


def test_the_same_message_from_two_custodians_is_one_exhibit_with_both(client, matter, attorney):
    mail = message(body="Ben,\nthe renewal is attached.\n")
    first = ingest_bytes(matter, attorney, as_bytes(mail), custodian="Ana Ruiz")
    # The recipient's copy: a Received header added on delivery, CRLF line ends, trailing spaces; other bytes.
    received = b"Received: from mx.stone.example by mail.stone.example; Wed, 4 Mar 2026 07:30:05 +0000\r\n"
    copy = received + as_bytes(message(body="Ben, \nthe renewal is attached.  \n"))
    second = ingest_bytes(matter, attorney, copy, name="copy.eml", custodian="Ben Stone")

    assert first.sha256 != second.sha256
    assert second.status == Exhibit.Status.DUPLICATE and second.duplicate_of_id == first.pk
    assert second.label == "" and "Ben Stone" in second.reason and first.display_label in second.reason
    assert first.custodian_names == ["Ana Ruiz", "Ben Stone"]
    other = ingest_bytes(matter, attorney, as_bytes(message(body="A different body.\n")), name="other.eml",
                         custodian="Ben Stone")
    assert other.status == Exhibit.Status.READY  # same Message-ID, different body: not the same message

    client.force_login(attorney)
    assert "<dt>Custodian</dt><dd>Ana Ruiz; Ben Stone</dd>" in client.get(first.get_absolute_url()).content.decode()
    duplicate_page = client.get(second.get_absolute_url())
    assert duplicate_page.status_code == 200 and first.display_label in duplicate_page.content.decode()
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[first], prefix="RUIZ", created_by=attorney, enqueue=False).pk)
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        dat = volume.read("VOL001/DATA/VOL001.dat").decode("utf-8").split("\r\n")
    header = [f.strip(QUOTE) for f in dat[0].split(SEPARATOR)]
    row = dict(zip(header, (f.strip(QUOTE) for f in dat[1].split(SEPARATOR))))
    assert row["CUSTODIAN"] == "Ana Ruiz; Ben Stone"


def test_threads_follow_references_then_subject_and_show_in_the_order_sent(client, matter, attorney):
    root = ingest_bytes(matter, attorney, as_bytes(message(
        subject="Lease renewal", message_id="<a@x.example>", date="Mon, 02 Mar 2026 09:00:00 -0500")), name="a.eml")
    # Uploaded before the message it answers, and sent later: thread order is the sent date, not the upload.
    late = ingest_bytes(matter, attorney, as_bytes(message(
        subject="RE: Lease renewal", message_id="<c@x.example>", date="Wed, 04 Mar 2026 09:00:00 +0100",
        in_reply_to="<b@x.example>", references="<a@x.example> <b@x.example>")), name="c.eml")
    reply = ingest_bytes(matter, attorney, as_bytes(message(
        subject="Re: Lease renewal", message_id="<b@x.example>", date="Tue, 03 Mar 2026 23:30:00 -0800",
        in_reply_to="<a@x.example>", references="<a@x.example>")), name="b.eml")
    # A reply from a program that writes neither header joins by its subject.
    bare = ingest_bytes(matter, attorney, as_bytes(message(
        subject="AW: FW: lease  RENEWAL", message_id="<d@x.example>", date="Thu, 05 Mar 2026 10:00:00 +0000")),
        name="d.eml")
    unrelated = ingest_bytes(matter, attorney, as_bytes(message(
        subject="Parking permits", message_id="<e@x.example>")), name="e.eml")

    thread = exhibit_thread(reply)
    assert [item.exhibit_id for item in thread] == [root.pk, reply.pk, late.pk, bare.pk]
    assert exhibit_thread(unrelated) == [unrelated.message]
    client.force_login(attorney)
    page = client.get(late.get_absolute_url()).content.decode()
    section = page[page.index('id="thread"'):]
    # Each item begins with its message's label (a later "held whole by" link may name another message).
    def item(exhibit):
        return f'<li><a href="{exhibit.get_absolute_url()}">{exhibit.display_label}</a>'

    assert section.index(item(root)) < section.index(item(reply)) < section.index(
        f"<li><strong>{late.display_label}</strong>") < section.index(item(bare))
    assert "2026-03-04 07:30 UTC" in section  # the reply sent at 23:30 -08:00


def test_thread_keys_join_chains_whose_middle_message_is_missing():
    rows = [(1, "<a@x>", "", [], "budget"), (3, "<c@x>", "<b@x>", ["<a@x>", "<b@x>"], "q3 numbers"),
            (4, "<z@x>", "<y@x>", ["<y@x>"], "budget"), (5, "<w@x>", "<v@x>", ["<v@x>"], "parking"),
            (6, "<u@x>", "", ["<v@x>"], "")]
    keys = thread_keys(rows)
    assert keys[1] == keys[3] == "t1"  # by its References, though <b@x> was never collected and the subject changed
    assert keys[4] == "t1"  # names only messages not in the matter: joined by its subject
    assert keys[5] == keys[6] == "t5"  # both answer <v@x>, which is not in the matter either


def test_normalised_subject_strips_reply_and_forward_prefixes_and_tags():
    assert normalised_subject("RE: Fwd: [EXTERNAL] Re[2]: Lease  Renewal ") == "lease renewal"
    assert normalised_subject("Réunion: budget") == "réunion: budget"


def test_sniffing_tells_messages_and_mailboxes_from_text(tmp_path):
    from matters.exhibits.sniff import sniff

    eml = as_bytes(message())
    assert sniff(tmp_path, eml[:8192]).kind == "email"
    assert sniff(tmp_path, b"From ana@x.example Tue Mar  3 23:30:00 2026\n" + eml[:8192]).kind == "mailbox"
    assert sniff(tmp_path, b"From: the desk of Ana\n\nJust a note, not a message.").kind == "other"
    assert sniff(tmp_path, io.BytesIO(b"Subject: x\nFrom: a@b\n\nbody").read()).kind == "email"


def test_a_produced_family_carries_its_range_parent_and_the_messages_headers(matter, attorney):
    mail = message(cc="Cy Park <cy@ruiz-law.example>")
    for number in (1, 2):
        mail.add_attachment(pdf_bytes(f"Schedule {number} to the lease renewal, rent table."),
                            maintype="application", subtype="pdf", filename=f"schedule-{number}.pdf")
    parent = ingest_bytes(matter, attorney, as_bytes(mail), custodian="Ana Ruiz")
    loose = ingest_bytes(matter, attorney, pdf_bytes("An unrelated memo about parking permits."), name="memo.pdf")
    children = list(parent.children.order_by("family_position"))
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[parent, *children, loose], prefix="RUIZ", created_by=attorney, enqueue=False).pk)
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        dat = volume.read("VOL001/DATA/VOL001.dat").decode("utf-8").split("\r\n")
    header = [f.strip(QUOTE) for f in dat[0].split(SEPARATOR)]
    rows = [dict(zip(header, (f.strip(QUOTE) for f in line.split(SEPARATOR)))) for line in dat[1:] if line]
    message_row, first, second, memo = rows
    assert message_row["BEGATTACH"] == message_row["BEGBATES"] and message_row["ENDATTACH"] == second["ENDBATES"]
    assert (first["BEGATTACH"], first["ENDATTACH"]) == (message_row["BEGBATES"], second["ENDBATES"])
    assert first["PARENT_BATES"] == second["PARENT_BATES"] == message_row["BEGBATES"]
    assert (message_row["ATTACHMENT_COUNT"], first["ATTACHMENT_COUNT"]) == ("2", "0")
    assert (message_row["FROM"], message_row["CC"], message_row["SUBJECT"]) == (
        "Ana Ruiz <ana@ruiz-law.example>", "Cy Park <cy@ruiz-law.example>", "Lease renewal")
    assert (message_row["DATESENT"], message_row["TIMESENT"]) == ("03/04/2026", "07:30:00")  # 23:30 -08:00 in UTC
    assert first["CUSTODIAN"] == "Ana Ruiz" and first["FROM"] == ""
    assert all(memo[name] == "" for name in ("BEGATTACH", "ENDATTACH", "PARENT_BATES", "ATTACHMENT_COUNT"))


def test_choosing_one_member_of_a_family_produces_the_whole_family_in_order(matter, attorney):
    mail = message()
    for number in (1, 2):
        mail.add_attachment(pdf_bytes(f"Exhibit {number} to the renewal: the floor plan, page {number}."),
                            maintype="application", subtype="pdf", filename=f"plan-{number}.pdf")
    mail.add_attachment(b"PK\x03\x04 not really a zip", maintype="application", subtype="zip", filename="x.zip")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    loose = ingest_bytes(matter, attorney, pdf_bytes("An unrelated memo about parking permits."), name="memo.pdf")
    first, second, archive = parent.children.order_by("family_position")
    assert archive.status == Exhibit.Status.REJECTED
    production = production_create(matter=matter, exhibits=[loose, second], prefix="RUIZ", created_by=attorney,
                                   enqueue=False)
    produced = list(production.documents.order_by("order").values_list("exhibit_id", flat=True))
    assert produced == [loose.pk, parent.pk, first.pk, second.pk]
