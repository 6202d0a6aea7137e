"""The exhibit list reads only the columns its rows show, and its pages by their ids: every kind of row must come
out as it would from the whole exhibit, with no query of its own, and the pages must hold the list's order."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matters.exhibits import listing
from matters.exhibits.rows import exhibit_row_html
from matters.models import Exhibit
from matters.selectors import exhibits_of_matter

from .email_messages import as_bytes, ingest_bytes, message, pdf_bytes, reply_body

pytestmark = pytest.mark.django_db

ORIGINAL = "Ben,\nthe landlord agreed to hold the rent at 4,200 a month for the renewal term.\nAna\n"
SCHEDULE = pdf_bytes("Schedule A: rent table for the renewal term.")


def _every_kind_of_row(matter, attorney) -> None:
    """A thread whose reply holds the first message whole and repeats its attachment (a family, a child, a
    duplicate, an inclusive message and a held one), and single files in every state a row shows."""
    root = message(message_id="<a@x.example>", body=ORIGINAL, date="Mon, 02 Mar 2026 09:00:00 -0500")
    root.add_attachment(SCHEDULE, maintype="application", subtype="pdf", filename="schedule-a.pdf")
    reply = message(subject="Re: Lease renewal", message_id="<b@x.example>", in_reply_to="<a@x.example>",
                    references="<a@x.example>", date="Tue, 03 Mar 2026 09:00:00 -0500",
                    body=reply_body("Signed; the schedule again.", ORIGINAL))
    reply.add_attachment(SCHEDULE, maintype="application", subtype="pdf", filename="schedule-a.pdf")
    for number, mail in enumerate((root, reply), start=1):
        ingest_bytes(matter, attorney, as_bytes(mail), name=f"m{number}.eml")
    states = {
        "processing": {"status": Exhibit.Status.PROCESSING, "progress_page": 2, "page_count": 5},
        "opening": {"status": Exhibit.Status.PROCESSING, "progress_page": 0},
        "queued": {"status": Exhibit.Status.QUEUED},
        "rejected": {"status": Exhibit.Status.REJECTED, "reason": "The file is encrypted & has no password."},
        "generated": {"generated_reason": "It matches draft 3's export <v2>."},
        "overridden": {"generated_reason": "It matches draft 3's export.", "generated_override_reason": "Client's"},
        "scanned": {"pages_ocr": 1, "title": "Scan of the lease"},
    }
    for name, fields in states.items():
        exhibit = ingest_bytes(matter, attorney, pdf_bytes(f"The {name} file."), name=f"{name}.pdf")
        Exhibit.objects.filter(pk=exhibit.pk).update(**fields)


def test_every_kind_of_row_is_the_whole_exhibits_row_and_asks_nothing_more(matter, attorney):
    _every_kind_of_row(matter, attorney)
    page = listing.exhibit_list_page(matter, 1)
    with CaptureQueriesContext(connection) as queries:
        rows = [exhibit_row_html(exhibit) for exhibit in page.object_list]
    assert queries.captured_queries == []
    assert rows == [exhibit_row_html(Exhibit.objects.get(pk=exhibit.pk)) for exhibit in page.object_list]
    shown = "".join(rows)
    # Each kind is there, so the comparison above covered it.
    for mark in ("held whole by", 'status-inclusive">inclusive', "attachment 1 of", 'status-duplicate"',
                 "Open Exhibit", "page 2 of 5", "opening the file", 'status-queued"', "encrypted &amp; has",
                 'status-generated">generated', "draft 3&#x27;s export &lt;v2&gt;", "(1 OCR)", "Scan of the lease"):
        assert mark in shown, mark
    assert shown.count('status-generated">generated') == 1  # the overridden one is evidence again


def _inclusive_or_under_one(exhibit) -> bool:
    """What the list shows under review="inclusive", read the long way."""
    if exhibit.kind == Exhibit.Kind.EMAIL:
        return exhibit.message.inclusive
    parent = exhibit.parent
    return parent is not None and parent.kind == Exhibit.Kind.EMAIL and parent.message.inclusive


@pytest.mark.parametrize("review", ["", "inclusive"])
def test_the_pages_hold_the_lists_order_and_a_page_past_the_end_shows_the_last(matter, attorney, monkeypatch,
                                                                               review):
    _every_kind_of_row(matter, attorney)
    per_page = 1 if review else 3  # the thread's reply and its attachment are all it lists
    monkeypatch.setattr(listing, "EXHIBITS_PER_PAGE", per_page)
    expected = [e.pk for e in exhibits_of_matter(matter) if not review or _inclusive_or_under_one(e)]
    first = listing.exhibit_list_page(matter, 1, review=review)
    pages = [listing.exhibit_list_page(matter, number, review=review) for number in first.paginator.page_range]
    assert [e.pk for page in pages for e in page.object_list] == expected
    assert len(expected) > per_page  # more than one page
    last = listing.exhibit_list_page(matter, "999", review=review)
    assert [e.pk for e in last.object_list] == [e.pk for e in pages[-1].object_list]
    assert last.number == first.paginator.num_pages
