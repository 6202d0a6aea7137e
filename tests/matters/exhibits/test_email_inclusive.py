"""Inclusive messages: within a thread, the messages no other message holds whole (text and attachments) are
marked inclusive, shown on the exhibit and matter pages, and the matter page can list only them."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from matters.email.inclusive import ThreadMessage, comparable_text, contains_text, inclusive_marks
from matters.email.threads import matter_threads_update
from matters.models import EmailMessage

from .email_messages import as_bytes, ingest_bytes, message, pdf_bytes, quoted, reply_body

ORIGINAL = ("Ben,\nthe landlord agreed to hold the rent at 4,200 a month for the renewal term, provided we sign\n"
            "before March 20. Please confirm the tenant's board has approved.\nAna\n")


def ingest_thread(matter, attorney, *mails):
    return [ingest_bytes(matter, attorney, as_bytes(mail), name=f"m{number}.eml")
            for number, mail in enumerate(mails, start=1)]


def marks_of(*exhibits):
    records = {r.exhibit_id: r for r in EmailMessage.objects.filter(exhibit__in=exhibits)}
    return [(records[e.pk].inclusive, records[e.pk].included_in_id and records[e.pk].included_in.exhibit_id)
            for e in exhibits]


@pytest.mark.django_db
def test_a_reply_quoting_the_whole_message_makes_it_non_inclusive_and_a_branch_gives_two_leaves(
        client, matter, attorney):
    root = message(message_id="<a@x.example>", body=ORIGINAL, date="Mon, 02 Mar 2026 09:00:00 -0500")
    first = message(subject="Re: Lease renewal", message_id="<b@x.example>", in_reply_to="<a@x.example>",
                    references="<a@x.example>", date="Tue, 03 Mar 2026 09:00:00 -0500",
                    body=reply_body("Confirmed; the board approved on Friday.", ORIGINAL))
    # The second branch re-wraps the quoted text, as Outlook does: still the whole message.
    rewrapped = ORIGINAL.replace("for the renewal term, provided", "for the renewal\nterm, provided")
    second = message(subject="RE: Lease renewal", message_id="<c@x.example>", in_reply_to="<a@x.example>",
                     references="<a@x.example>", date="Tue, 03 Mar 2026 10:00:00 -0500",
                     body=reply_body("Can we push the date to March 27?", rewrapped))
    root_ex, first_ex, second_ex = ingest_thread(matter, attorney, root, first, second)

    assert marks_of(root_ex, first_ex, second_ex) == [(False, first_ex.pk), (True, None), (True, None)]

    client.force_login(attorney)
    page = client.get(root_ex.get_absolute_url()).content.decode()
    thread = page[page.index('id="thread"'):]
    assert "held whole by" in thread and thread.count('status-inclusive">inclusive<') == 2
    listing = client.get(matter.get_absolute_url()).content.decode()
    held = f'held whole by <a href="{first_ex.get_absolute_url()}">{first_ex.display_label}</a>'
    assert listing.count('status-inclusive">inclusive') == 2 and held in listing
    only = client.get(matter.get_absolute_url(), {"review": "inclusive"}).content.decode()
    rows = only[only.index('id="exhibit-rows"'):]
    assert first_ex.display_label in rows and second_ex.display_label in rows
    assert f"<td>{root_ex.display_label}</td>" not in rows


@pytest.mark.django_db
def test_a_message_whose_reply_dropped_its_attachment_stays_inclusive(matter, attorney):
    root = message(message_id="<a@x.example>", body=ORIGINAL, date="Mon, 02 Mar 2026 09:00:00 -0500")
    root.add_attachment(pdf_bytes("Schedule A: rent table for the renewal term."), maintype="application",
                        subtype="pdf", filename="schedule-a.pdf")
    reply = message(subject="Re: Lease renewal", message_id="<b@x.example>", in_reply_to="<a@x.example>",
                    references="<a@x.example>", date="Tue, 03 Mar 2026 09:00:00 -0500",
                    body=reply_body("Confirmed.", ORIGINAL))
    root_ex, reply_ex = ingest_thread(matter, attorney, root, reply)
    assert marks_of(root_ex, reply_ex) == [(True, None), (True, None)]

    # A later reply that carries the attachment again holds the whole message.
    again = message(subject="Re: Lease renewal", message_id="<c@x.example>", in_reply_to="<a@x.example>",
                    references="<a@x.example>", date="Wed, 04 Mar 2026 09:00:00 -0500",
                    body=reply_body("Signed copy back, schedule attached again.", ORIGINAL))
    again.add_attachment(pdf_bytes("Schedule A: rent table, countersigned."), maintype="application",
                         subtype="pdf", filename="Schedule-A.pdf")
    (again_ex,) = ingest_thread(matter, attorney, again)
    assert marks_of(root_ex, reply_ex, again_ex) == [(False, again_ex.pk), (True, None), (True, None)]


@pytest.mark.django_db
def test_a_reply_that_quotes_only_part_or_answers_another_branch_holds_nothing(matter, attorney):
    root = message(message_id="<a@x.example>", body=ORIGINAL, date="Mon, 02 Mar 2026 09:00:00 -0500")
    partial = message(subject="Re: Lease renewal", message_id="<b@x.example>", in_reply_to="<a@x.example>",
                      references="<a@x.example>", date="Tue, 03 Mar 2026 09:00:00 -0500",
                      body=reply_body("Only the rent matters.", ORIGINAL.split("provided")[0]))
    root_ex, partial_ex = ingest_thread(matter, attorney, root, partial)
    assert marks_of(root_ex, partial_ex) == [(True, None), (True, None)]
    # The whole-matter recompute agrees with the incremental one.
    EmailMessage.objects.update(inclusive=False)
    matter_threads_update(matter)
    assert marks_of(root_ex, partial_ex) == [(True, None), (True, None)]


def test_holding_needs_a_later_answer_on_word_boundaries():
    a = ThreadMessage(1, comparable_text("Thanks"), message_id="<a>")
    b = ThreadMessage(2, comparable_text("Happy thanksgiving to all"), message_id="<b>", named=["<a>"])
    c = ThreadMessage(3, comparable_text("Thanks, will do."), message_id="<c>", named=["<z>"])
    assert inclusive_marks([a, b, c]) == {1: None, 2: None, 3: None}
    d = ThreadMessage(4, comparable_text("Thanks!\n> Happy Thanksgiving to all"), message_id="<d>", named=["<b>"])
    # d answers b (and through it a), and holds both whole.
    assert inclusive_marks([a, b, c, d]) == {1: 4, 2: 4, 3: None, 4: None}
    unknown = ThreadMessage(5, "", recorded=False)
    assert inclusive_marks([unknown, d]) == {5: None, 4: None}


@given(st.text(max_size=300))
def test_comparable_text_is_idempotent_and_never_fails(body):
    once = comparable_text(body)
    assert comparable_text(once) == once
    assert once == once.strip() and "  " not in once


@given(st.text(min_size=1, max_size=120), st.from_regex(r"[A-Za-z ,.]{0,60}", fullmatch=True),
       st.from_regex(r"[A-Za-z ,.]{0,60}", fullmatch=True))
def test_a_message_is_contained_in_a_reply_quoting_it(own, before, after):
    inner = comparable_text(own)
    assume(inner)
    outer = comparable_text(f"{before}\n\n{quoted(own)}\n\n{after}")
    assert contains_text(outer, inner)


@given(st.text(alphabet=st.characters(blacklist_characters="\r"), max_size=300))
def test_crlf_line_ends_compare_as_lf(body):
    # A body from the wire has CRLF line ends; the same body with LF is the same text.
    assert comparable_text(body.replace("\n", "\r\n")) == comparable_text(body)


@pytest.mark.django_db
def test_a_filter_the_box_does_not_offer_is_refused_with_its_reason_and_lists_every_file(client, matter, attorney):
    root = ingest_bytes(matter, attorney, as_bytes(message(body=ORIGINAL)))
    memo = ingest_bytes(matter, attorney, pdf_bytes("A memo about parking permits."), name="memo.pdf")
    client.force_login(attorney)
    response = client.get(matter.get_absolute_url(), {"review": "privileged-only"})
    page = response.content.decode()
    assert response.status_code == 200 and "Select a valid choice" in page and "Every file is listed." in page
    rows = page[page.index('id="exhibit-rows"'):]
    assert f"<td>{root.display_label}</td>" in rows and f"<td>{memo.display_label}</td>" in rows
    only = client.get(matter.get_absolute_url(), {"review": "inclusive"}).content.decode()
    assert f"<td>{memo.display_label}</td>" not in only[only.index('id="exhibit-rows"'):]
