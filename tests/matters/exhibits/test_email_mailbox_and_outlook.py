"""Mailboxes and Outlook files: each message of an .mbox becomes an exhibit of its own; an Outlook .msg is read
with extract-msg (the tests write their .msg files: :mod:`.outlook_messages`), and a file named .msg that is
something else is told for what it is."""

import mailbox
import struct
from datetime import UTC, datetime

import pytest

from matters import storage
from matters.models import Exhibit

from . import outlook_messages as mapi
from .email_messages import as_bytes, ingest_bytes, message, page_text, pdf_bytes

pytestmark = pytest.mark.django_db


def test_each_message_of_a_mailbox_becomes_an_exhibit_listed_on_the_mailbox_page(client, matter, attorney,
                                                                                  tmp_path):
    path = tmp_path / "inbox.mbox"
    box = mailbox.mbox(path)
    first = message(subject="Lease renewal", message_id="<m1@x.example>")
    first.add_attachment(pdf_bytes("Exhibit A to the lease: the floor plan of suite 400."), maintype="application",
                         subtype="pdf", filename="floor-plan.pdf")
    for mail in (first, message(subject="From the landlord", message_id="<m2@x.example>",
                                body="From now on, rent is due on the first.\n"),
                 message(subject="Parking", message_id="<m3@x.example>")):
        box.add(mailbox.mboxMessage(as_bytes(mail)))
    box.close()
    data = path.read_bytes()
    container = ingest_bytes(matter, attorney, data, name="inbox.mbox", custodian="Ana Ruiz")

    assert container.kind == Exhibit.Kind.MAILBOX and container.status == Exhibit.Status.READY, container.reason
    messages = list(Exhibit.objects.filter(matter=matter, kind=Exhibit.Kind.EMAIL).order_by("id"))
    assert [m.original_name for m in messages] == [f"inbox.mbox, message {n}.eml" for n in (1, 2, 3)]
    assert all(m.status == Exhibit.Status.READY and m.parent_id is None for m in messages)
    assert all(m.custodian.name == "Ana Ruiz" for m in messages)
    # A body line starting "From " was escaped in the mailbox (">From ") and reads back as written.
    assert "From now on, rent is due on the first." in page_text(messages[1])
    assert ">From" not in page_text(messages[1])
    [plan] = messages[0].children.all()
    assert plan.status == Exhibit.Status.READY and "suite 400" in page_text(plan)
    listing = page_text(container)
    assert "3 message(s)" in listing and "Lease renewal" in listing and messages[2].display_label in listing
    assert storage.blob_path(container.sha256).read_bytes() == data
    client.force_login(attorney)
    assert client.get(container.get_absolute_url()).status_code == 200
    assert "Message-ID" in client.get(messages[0].get_absolute_url()).content.decode()


def test_a_mailbox_over_the_message_limit_lists_what_it_left_out(matter, attorney, tmp_path, settings):
    settings.LAWDESK_MAILBOX_MAX_MESSAGES = 1
    path = tmp_path / "two.mbox"
    box = mailbox.mbox(path)
    for number in (1, 2):
        box.add(mailbox.mboxMessage(as_bytes(message(message_id=f"<n{number}@x.example>", subject=f"S{number}"))))
    box.close()
    container = ingest_bytes(matter, attorney, path.read_bytes(), name="two.mbox")
    assert container.status == Exhibit.Status.READY
    assert Exhibit.objects.filter(kind=Exhibit.Kind.EMAIL).count() == 1
    assert any("2 messages" in note and "LAWDESK_MAILBOX_MAX_MESSAGES" in note for note in container.notes)


def received_msg() -> bytes:
    """A message as Outlook keeps one it received: its MAPI properties, the internet headers it arrived with
    (PidTagTransportMessageHeaders), a recipient and a PDF attached."""
    headers = ("Received: from mx.stone.example by mx.ruiz-law.example; Tue, 03 Mar 2026 23:30:05 -0800\r\n"
               "From: Ben Stone <ben@stone.example>\r\nTo: Ana Ruiz <ana@ruiz-law.example>\r\n"
               "Cc: Cy Park <cy@ruiz-law.example>\r\nSubject: Signed lease\r\n"
               "Date: Tue, 03 Mar 2026 23:30:00 -0800\r\nMessage-ID: <lease-msg@stone.example>\r\n"
               "In-Reply-To: <ask-1@ruiz-law.example>\r\nMIME-Version: 1.0\r\n\r\n")
    properties = mapi.Properties(
        strings={mapi.SUBJECT: "Signed lease", mapi.MESSAGE_CLASS: "IPM.Note", mapi.TRANSPORT_HEADERS: headers,
                 mapi.BODY: "Ana, the signed lease is attached. Rent starts April 1.\r\n",
                 mapi.SENDER_NAME: "Ben Stone", mapi.SENDER_EMAIL: "ben@stone.example", mapi.SENDER_ADDRTYPE: "SMTP",
                 mapi.DISPLAY_TO: "Ana Ruiz", mapi.INTERNET_MESSAGE_ID: "<lease-msg@stone.example>"},
        times={mapi.CLIENT_SUBMIT_TIME: datetime(2026, 3, 4, 7, 30, tzinfo=UTC),
               mapi.DELIVERY_TIME: datetime(2026, 3, 4, 7, 30, 5, tzinfo=UTC)})
    return mapi.msg_bytes(properties, [mapi.recipient("Ana Ruiz", "ana@ruiz-law.example")],
                          [mapi.attachment("signed-lease.pdf", pdf_bytes("Lease of suite 400, signed March 3, 2026."),
                                           "application/pdf")])


def test_an_outlook_msg_becomes_a_message_exhibit_with_its_headers_and_attachment(matter, attorney):
    data = received_msg()
    assert data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")  # a compound file ([MS-CFB] 2.2)
    parent = ingest_bytes(matter, attorney, data, name="Signed lease.msg", custodian="Ana Ruiz")

    assert parent.kind == Exhibit.Kind.EMAIL and parent.type_name == "Outlook email"
    assert parent.status == Exhibit.Status.READY, parent.reason
    text = page_text(parent)
    for line in ("From: Ben Stone <ben@stone.example>", "To: Ana Ruiz <ana@ruiz-law.example>",
                 "Cc: Cy Park <cy@ruiz-law.example>",
                 "Date: Tue, 03 Mar 2026 23:30:00 -0800 (UTC: 2026-03-04 07:30:00)", "Subject: Signed lease",
                 "Attachments: signed-lease.pdf"):
        assert line in text
    assert "Ana, the signed lease is attached. Rent starts April 1." in " ".join(text.split())
    record = parent.message
    assert (record.source_format, record.message_id, record.in_reply_to) == (
        "msg", "<lease-msg@stone.example>", "<ask-1@ruiz-law.example>")
    assert record.sent_at == datetime(2026, 3, 4, 7, 30, tzinfo=UTC) and record.sent_utc_offset_min == -480
    [child] = parent.children.all()
    assert child.original_name == "signed-lease.pdf" and child.status == Exhibit.Status.READY
    assert "signed March 3, 2026" in page_text(child)
    assert storage.blob_path(parent.sha256).read_bytes() == data


def test_an_outlook_msg_without_internet_headers_is_read_from_its_properties(matter, attorney):
    # A message from Sent Items or Drafts carries no transport headers: who, to whom and when are MAPI properties.
    properties = mapi.Properties(
        strings={mapi.SUBJECT: "Draft settlement terms", mapi.MESSAGE_CLASS: "IPM.Note",
                 mapi.BODY: "Proposed: $48,000 in two instalments.\r\n", mapi.SENDER_NAME: "Ana Ruiz",
                 mapi.SENDER_EMAIL: "/O=RUIZ LAW/OU=EXCHANGE/CN=RECIPIENTS/CN=ANA", mapi.SENDER_ADDRTYPE: "EX",
                 mapi.SENDER_SMTP: "ana@ruiz-law.example", mapi.DISPLAY_TO: "Ben Stone",
                 mapi.INTERNET_MESSAGE_ID: "<draft-7@ruiz-law.example>"},
        times={mapi.CLIENT_SUBMIT_TIME: datetime(2026, 3, 5, 16, 0, tzinfo=UTC)})
    data = mapi.msg_bytes(properties, [mapi.recipient("Ben Stone", "ben@stone.example")])
    parent = ingest_bytes(matter, attorney, data, name="draft.msg")

    assert parent.status == Exhibit.Status.READY, parent.reason
    text = page_text(parent)
    assert "Subject: Draft settlement terms" in text and "Proposed: $48,000 in two instalments." in text
    assert "From: Ana Ruiz <ana@ruiz-law.example>" in text and "To: Ben Stone <ben@stone.example>" in text
    assert parent.message.message_id == "<draft-7@ruiz-law.example>"
    assert parent.message.sent_at == datetime(2026, 3, 5, 16, 0, tzinfo=UTC)


def test_a_msg_that_is_really_text_is_refused_as_what_it_is(matter, attorney):
    exhibit = ingest_bytes(matter, attorney, b"Meeting notes, typed in a text editor and saved as .msg.\n",
                           name="notes.msg")
    assert exhibit.status == Exhibit.Status.REJECTED and "not accepted" in exhibit.reason


def test_a_compound_file_that_claims_to_be_outlook_and_is_not_fails_with_the_reason(matter, attorney):
    # The compound-file signature ([MS-CFB] 2.2) and an Outlook property stream's name, and nothing a reader needs.
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + "__substg1.0_0037001F".encode("utf-16-le") + bytes(512)
    exhibit = ingest_bytes(matter, attorney, data, name="forged.msg")
    assert exhibit.kind == Exhibit.Kind.EMAIL and exhibit.type_name == "Outlook email"
    assert exhibit.status == Exhibit.Status.FAILED
    assert "not a readable Outlook message" in exhibit.reason and "kept unchanged" in exhibit.reason
    assert storage.blob_path(exhibit.sha256).read_bytes() == data


def tnef_attribute(level: int, name: int, kind: int, data: bytes) -> bytes:
    """One TNEF attribute ([MS-OXTNEF] 2.1.3.1): level, id, type, length, data, checksum (sum of the data's
    bytes modulo 65536)."""
    return struct.pack("<BHHI", level, name, kind, len(data)) + data + struct.pack("<H", sum(data) & 0xFFFF)


def test_a_winmail_dat_is_unpacked_into_the_files_it_carries(matter, attorney):
    inside = pdf_bytes("Side letter of June 2, 2021: the landlord waives the late fee.")
    winmail = (struct.pack("<IH", 0x223E9F78, 1)  # TNEF signature, legacy key
               + tnef_attribute(2, 0x9002, 6, bytes(14))  # attAttachRendData: an attachment begins
               + tnef_attribute(2, 0x8010, 1, b"side-letter.pdf\x00")  # attAttachTitle
               + tnef_attribute(2, 0x800F, 6, inside))  # attAttachData
    mail = message(subject="Side letter", message_id="<tnef@x.example>")
    mail.add_attachment(winmail, maintype="application", subtype="ms-tnef", filename="winmail.dat")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    [child] = parent.children.all()
    assert child.original_name == "side-letter.pdf" and child.status == Exhibit.Status.READY
    assert "waives the late fee" in page_text(child)
    assert any("TNEF" in note and "1 file(s)" in note for note in parent.notes)


def test_a_damaged_winmail_dat_is_kept_as_it_came(matter, attorney):
    mail = message(subject="Broken", message_id="<tnef-2@x.example>")
    mail.add_attachment(b"\x78\x9f\x3e\x22garbage", maintype="application", subtype="ms-tnef",
                        filename="winmail.dat")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    assert parent.status == Exhibit.Status.READY
    [child] = parent.children.all()
    assert child.original_name == "winmail.dat" and child.status == Exhibit.Status.REJECTED
    assert any("could not be unpacked" in note or "holds no files" in note for note in parent.notes)
