"""Near-duplicates: a message whose text differs from another's by a little is linked to it with its similarity,
shown on both exhibit pages; unrelated messages of one subject are not, and an exact copy stays a duplicate."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matters.email.inclusive import comparable_text
from matters.email.near_duplicates import NEAR_DUPLICATE_MIN, exhibit_near_duplicates, shingles, similarity
from matters.models import Exhibit, NearDuplicate

from .email_messages import as_bytes, ingest_bytes, message

NOTICE = ("Ben,\nthe landlord has served notice that the rent for the renewal term will rise to 4,600 a month\n"
          "from April 1 unless we exercise the option in section 12 before March 20. The option letter must go\n"
          "by courier to the address in section 21, with a copy to their counsel. Please send me the tenant's\n"
          "signed instruction by Friday so I can prepare the letter.\nAna\n")


def forward_of(body: str, added: str) -> str:
    return (f"{added}\n\n---------- Forwarded message ---------\nFrom: Ana Ruiz <ana@ruiz-law.example>\n"
            f"Date: Tue, Mar 3, 2026 at 11:30 PM\nSubject: Lease renewal\nTo: Ben Stone <ben@stone.example>\n\n{body}")


pytestmark = pytest.mark.django_db


def test_a_forward_with_one_added_line_is_linked_on_both_pages_with_its_similarity(client, matter, attorney):
    original = ingest_bytes(matter, attorney, as_bytes(message(body=NOTICE)), name="notice.eml")
    forward = ingest_bytes(matter, attorney, as_bytes(message(
        subject="Fwd: Lease renewal", message_id="<fwd-1@stone.example>", sender="Ben Stone <ben@stone.example>",
        to="Cy Park <cy@stone.example>", date="Wed, 04 Mar 2026 08:00:00 +0000",
        body=forward_of(NOTICE, "Cy, see below; can you sign this week?"))), name="forward.eml")

    (link,) = NearDuplicate.objects.all()
    expected = similarity(shingles(comparable_text(NOTICE)),
                          shingles(comparable_text(forward_of(NOTICE, "Cy, see below; can you sign this week?"))))
    assert (link.exhibit_id, link.other_id) == (forward.pk, original.pk)
    # The notice's 3-word runs all recur in the forward, which adds the 8 runs beginning in its one line of 8 words
    # (the last two crossing into the notice); the forwarding header is not counted.
    notice_runs = len(re.findall(r"\w+", comparable_text(NOTICE))) - 2
    assert link.similarity == pytest.approx(notice_runs / (notice_runs + 8), abs=1e-4)
    assert link.similarity == pytest.approx(expected, abs=1e-4) and NEAR_DUPLICATE_MIN <= link.similarity < 1
    assert exhibit_near_duplicates(original) == [(forward, link.similarity)]

    client.force_login(attorney)
    shown = f"{int(link.similarity * 100)}% similar"
    for page_of, other in ((original, forward), (forward, original)):
        page = client.get(page_of.get_absolute_url()).content.decode()
        section = page[page.index('id="near-duplicates"'):]
        assert other.display_label in section and shown in section


def test_unrelated_messages_of_the_same_subject_are_not_near_duplicates(matter, attorney):
    ingest_bytes(matter, attorney, as_bytes(message(body=NOTICE)), name="notice.eml")
    other = ingest_bytes(matter, attorney, as_bytes(message(
        message_id="<parking@ruiz-law.example>", date="Thu, 05 Mar 2026 10:00:00 +0000",
        body="Ben,\nthe parking permits for the two bays expire at the end of the month; the building office\n"
             "needs the plates of both cars and a copy of the lease to renew them.\nAna\n")), name="parking.eml")
    assert other.message.subject_normalised == "lease renewal"
    assert NearDuplicate.objects.count() == 0


def test_an_exact_copy_stays_a_duplicate_and_is_not_a_near_duplicate(matter, attorney):
    first = ingest_bytes(matter, attorney, as_bytes(message(body=NOTICE)), custodian="Ana Ruiz")
    copy = ingest_bytes(matter, attorney, b"Received: by mx.stone.example; Wed, 4 Mar 2026 07:30:05 +0000\r\n"
                        + as_bytes(message(body=NOTICE)), name="copy.eml", custodian="Ben Stone")
    assert copy.status == Exhibit.Status.DUPLICATE and copy.duplicate_of_id == first.pk
    assert NearDuplicate.objects.count() == 0 and exhibit_near_duplicates(first) == []


def test_reading_a_message_again_replaces_its_links(matter, attorney):
    from matters.email.near_duplicates import message_near_duplicates_update

    ingest_bytes(matter, attorney, as_bytes(message(body=NOTICE)), name="notice.eml")
    forward = ingest_bytes(matter, attorney, as_bytes(message(
        subject="FW: Lease renewal", message_id="<fwd-2@stone.example>",
        body=forward_of(NOTICE, "FYI."))), name="forward.eml")
    record = forward.message
    assert len(message_near_duplicates_update(record)) == 1 and NearDuplicate.objects.count() == 1
    record.body_text = "Nothing like the notice at all, a note about parking."
    assert message_near_duplicates_update(record) == [] and NearDuplicate.objects.count() == 0


@given(st.text(max_size=200), st.text(max_size=200))
def test_similarity_is_symmetric_bounded_and_one_for_the_same_text(a, b):
    sa, sb = shingles(comparable_text(a)), shingles(comparable_text(b))
    assert similarity(sa, sb) == similarity(sb, sa)
    assert 0 <= similarity(sa, sb) <= 1
    assert similarity(sa, sa) == (1.0 if sa else 0.0)
