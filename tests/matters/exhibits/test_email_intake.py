"""Email intake: a message becomes a parent exhibit showing its headers and body, its attachments child exhibits;
bad parts get a reason while the rest of the family goes on; the original is kept byte for byte."""

import base64
import hashlib
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from matters import storage
from matters.models import EmailMessage, Exhibit
from matters.selectors import exhibits_of_matter

from .email_messages import as_bytes, ingest_bytes, message, page_text, pdf_bytes

pytestmark = pytest.mark.django_db


def test_message_pages_show_the_header_block_and_body_and_its_attachment_is_a_child(matter, attorney):
    mail = message(cc="Cy Park <cy@ruiz-law.example>", bcc="file@ruiz-law.example",
                   in_reply_to="<ask-0@stone.example>", references="<root@stone.example> <ask-0@stone.example>")
    mail.add_attachment(pdf_bytes("Lease renewal agreement between Stone LLC and Ruiz Holdings, term five years."),
                        maintype="application", subtype="pdf", filename="renewal.pdf")
    data = as_bytes(mail)
    parent = ingest_bytes(matter, attorney, data, name="Lease renewal.eml", custodian="Ana Ruiz")

    assert parent.status == Exhibit.Status.READY, parent.reason
    assert parent.kind == Exhibit.Kind.EMAIL and parent.type_name == "email"
    text = page_text(parent)
    for line in ("From: Ana Ruiz <ana@ruiz-law.example>", "To: Ben Stone <ben@stone.example>",
                 "Cc: Cy Park <cy@ruiz-law.example>", "Bcc: file@ruiz-law.example",
                 "Date: Tue, 03 Mar 2026 23:30:00 -0800 (UTC: 2026-03-04 07:30:00)", "Subject: Lease renewal",
                 "Attachments: renewal.pdf", "Ben, the renewal is attached."):
        assert line in text
    assert storage.blob_path(parent.sha256).read_bytes() == data

    record = parent.message
    assert (record.message_id, record.in_reply_to, record.references) == (
        "<lease-1@ruiz-law.example>", "<ask-0@stone.example>", ["<root@stone.example>", "<ask-0@stone.example>"])
    assert record.sent_at == datetime(2026, 3, 4, 7, 30, tzinfo=UTC) and record.sent_utc_offset_min == -480
    assert record.date_header == "Tue, 03 Mar 2026 23:30:00 -0800"
    assert record.native_sha256 == hashlib.sha256(data).hexdigest() and len(record.body_sha256) == 64
    assert record.attachment_names == ["renewal.pdf"]

    [child] = parent.children.all()
    assert (child.family_position, child.kind, child.status) == (1, "pdf", Exhibit.Status.READY)
    assert child.custodian == parent.custodian and child.origin == parent.origin
    assert "term five years" in page_text(child)


def test_html_body_is_shown_without_scripts_styles_or_remote_content(matter, attorney):
    mail = message(body="Plain alternative that is not shown when HTML is the only body.\n")
    mail.clear_content()
    mail.set_content(
        "<html><head><style>p {color: red}</style><script>document.write('tracking')</script></head>"
        "<body><p>Payment of $12,500 is due on April 1.</p><img src='https://tracker.example/p.gif' alt='logo'>"
        "<table><tr><td>Rent</td><td>$12,500</td></tr></table></body></html>", subtype="html")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    text = page_text(parent)
    assert parent.status == Exhibit.Status.READY
    assert "Payment of $12,500 is due on April 1." in text and "[image: logo]" in text and "Rent" in text
    assert "tracking" not in text and "color: red" not in text and "tracker.example" not in text


def test_an_attached_message_is_unpacked_in_turn_and_the_family_lists_together(client, matter, attorney):
    inner = message(subject="Original invoice", message_id="<inv-1@stone.example>", body="Invoice 4471 attached.\n")
    inner.add_attachment(pdf_bytes("Invoice 4471: amount due $3,200.00, net 30 days."), maintype="application",
                         subtype="pdf", filename="invoice-4471.pdf")
    outer = message(subject="Fwd: Original invoice", message_id="<fwd-1@ruiz-law.example>", body="See below.\n")
    outer.add_attachment(inner)
    ingest_bytes(matter, attorney, pdf_bytes("A letter uploaded first, unrelated to the family."), name="first.pdf")
    parent = ingest_bytes(matter, attorney, as_bytes(outer), name="forward.eml")

    [attached] = parent.children.all()
    assert attached.kind == Exhibit.Kind.EMAIL and attached.status == Exhibit.Status.READY
    assert "Subject: Original invoice" in page_text(attached)
    [invoice] = attached.children.all()
    assert invoice.family_depth == 2 and "amount due $3,200.00" in page_text(invoice)
    ingest_bytes(matter, attorney, pdf_bytes("A letter uploaded last, also unrelated."), name="last.pdf")

    order = [exhibit.original_name for exhibit in exhibits_of_matter(matter)]
    assert order == ["first.pdf", "forward.eml", "attachment-2.eml", "invoice-4471.pdf", "last.pdf"]
    client.force_login(attorney)
    page = client.get(invoice.get_absolute_url()).content.decode()
    family = page[page.index('id="family"'):]
    assert family.index(parent.display_label) < family.index(attached.display_label) < family.index(
        f"<strong>{invoice.display_label}")
    listing = client.get(reverse("matters:detail", args=[matter.pk])).content.decode()
    assert f"attachment 1 of {attached.display_label}" in listing


def test_depth_and_count_limits_list_what_was_not_made_an_exhibit(matter, attorney, settings):
    settings.LAWDESK_EMAIL_MAX_DEPTH = 1
    settings.LAWDESK_EMAIL_MAX_ATTACHMENTS = 2
    inner = message(subject="Inner", message_id="<in@x.example>")
    inner.add_attachment(b"deep", maintype="application", subtype="octet-stream", filename="deep.bin")
    outer = message(subject="Outer", message_id="<out@x.example>")
    outer.add_attachment(inner)
    for number in (1, 2):
        outer.add_attachment(pdf_bytes(f"Schedule {number} to the lease, with the rent table."),
                             maintype="application", subtype="pdf", filename=f"schedule-{number}.pdf")
    parent = ingest_bytes(matter, attorney, as_bytes(outer))

    children = list(parent.children.order_by("family_position"))
    assert [child.original_name for child in children] == ["attachment-2.eml", "schedule-1.pdf"]
    assert any("the first 2 (LAWDESK_EMAIL_MAX_ATTACHMENTS)" in note for note in parent.notes)
    assert "schedule-2.pdf" in page_text(parent)  # still named on its header page
    nested = children[0]
    assert nested.status == Exhibit.Status.READY and not nested.children.exists()
    assert any("LAWDESK_EMAIL_MAX_DEPTH" in note for note in nested.notes)


def test_malformed_parts_get_a_reason_and_the_rest_of_the_family_goes_on(matter, attorney):
    good = pdf_bytes("Board minutes of May 2, 2021: the sale was approved.")

    data = (
        b"From: Ana Ruiz <ana@ruiz-law.example>\r\nTo: =?x-unknown?q?Ben?= <ben@stone.example>\r\n"
        b"Subject: Minutes\r\nDate: Sun, 02 May 2021 09:15:00 +0200\r\nMessage-ID: <min-1@x.example>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"B\"\r\n\r\n"
        b"--B\r\nContent-Type: text/plain; charset=x-no-such-charset\r\n\r\nCaf\xc3\xa9 minutes attached.\r\n"
        b"--B\r\nContent-Type: application/pdf; name=\"broken.pdf\"\r\nContent-Transfer-Encoding: base64\r\n"
        b"Content-Disposition: attachment; filename=\"broken.pdf\"\r\n\r\n!!!not base64 at all\xff\r\n"
        b"--B\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n"
        b"Content-Disposition: attachment; filename=\"minutes.pdf\"\r\n\r\n" + base64.encodebytes(good) +
        b"\r\n--B--\r\n"
    )
    parent = ingest_bytes(matter, attorney, data)
    assert parent.status == Exhibit.Status.READY, parent.reason
    assert "Café minutes attached." in page_text(parent)
    assert any("x-no-such-charset" in note and "UTF-8" in note for note in parent.notes)
    children = {child.original_name: child for child in parent.children.all()}
    assert children["minutes.pdf"].status == Exhibit.Status.READY
    assert "the sale was approved" in page_text(children["minutes.pdf"])
    assert any("broken.pdf" in note and "encoding is damaged" in note for note in parent.notes)
    assert children["broken.pdf"].status == Exhibit.Status.REJECTED and children["broken.pdf"].reason
    assert "<ben@stone.example>" in parent.message.to
    assert storage.blob_path(parent.sha256).read_bytes() == data


def test_a_message_over_the_size_limit_fails_with_the_reason_and_is_kept(matter, attorney, settings):
    settings.LAWDESK_EMAIL_MAX_MB = 0
    data = as_bytes(message())
    exhibit = ingest_bytes(matter, attorney, data)
    assert exhibit.status == Exhibit.Status.FAILED and "LAWDESK_EMAIL_MAX_MB" in exhibit.reason
    assert storage.blob_path(exhibit.sha256).read_bytes() == data and not EmailMessage.objects.exists()


def test_undated_message_without_message_id_is_read(matter, attorney):
    data = b"From: someone@example.com\r\nSubject: note\r\n\r\nNo date, no id, still a message.\r\n"
    exhibit = ingest_bytes(matter, attorney, data)
    assert exhibit.status == Exhibit.Status.READY
    assert exhibit.message.sent_at is None and exhibit.message.message_id == ""
    assert "Date: (none)" in page_text(exhibit)
