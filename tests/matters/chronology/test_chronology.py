"""The matter's chronology: the selector's order, ranges, filters and evidence-only rule, and its page."""

import datetime as dt

import pytest

from matters.chronology.selectors import matter_chronology
from matters.models import Origin
from tests.factories import ExhibitFactory, MatterFactory, UserFactory

pytestmark = pytest.mark.django_db

LETTER = ("Dear Mr. Smith,\n\nThe roof began to leak on or about March 18, 2021. We repaired it between "
          "April 9 and 13, 2021. Payment is due 03/04/2021.")
LEASE = ["RESIDENTIAL LEASE. This lease is made on March 3, 2021 between Jones and Smith.",
         "The term runs from May 1, 2021 to April 30, 2022. Rent is due monthly."]


@pytest.fixture
def exhibits(matter):
    letter = ExhibitFactory(matter=matter, title="Letter", pages=[LETTER])
    lease = ExhibitFactory(matter=matter, title="Lease", pages=LEASE)
    # LawDesk's own output never enters the chronology, whatever dates it names.
    ExhibitFactory(matter=matter, title="Summary", origin=Origin.SUMMARY, pages=["Signed on January 2, 2021."])
    return letter, lease


def test_every_dated_fact_of_the_evidence_in_date_order_with_its_page_and_words(matter, exhibits):
    letter, lease = exhibits
    facts = matter_chronology(matter)
    assert [(f.start, f.end, f.label, f.page) for f in facts] == [
        ("2021-03-03", "2021-03-03", lease.display_label, 1),
        ("2021-03-04", "2021-03-04", letter.display_label, 1),
        ("2021-03-18", "2021-03-18", letter.display_label, 1),
        ("2021-04-09", "2021-04-13", letter.display_label, 1),
        ("2021-05-01", "2022-04-30", lease.display_label, 2)]
    leak = facts[2]
    assert leak.text == "The roof began to leak on or about March 18, 2021."
    assert leak.qualifier == "on or about" and leak.written == "March 18, 2021" and not leak.is_range
    assert facts[3].is_range and facts[3].when == "April 9, 2021 – April 13, 2021"
    # 03/04/2021 is read in the matter's order (month first) and says it has another reading.
    assert facts[1].other_reading == "2021-04-03" and facts[0].other_reading == ""
    assert set(facts[0].as_dict()) == {"start", "end", "written", "qualifier", "other_reading", "text", "exhibit",
                                       "label", "title", "page", "page_id", "bates", "flagged"}


def test_a_matter_reading_day_first_orders_by_that_reading(matter, exhibits):
    matter.date_order = "dmy"
    matter.save()
    payment = next(f for f in matter_chronology(matter) if f.written == "03/04/2021")
    assert (payment.start, payment.other_reading) == ("2021-04-03", "2021-03-04")


def test_filters_by_exhibit_and_by_span_keep_a_range_that_touches_the_span(matter, exhibits):
    letter, lease = exhibits
    assert {f.exhibit for f in matter_chronology(matter, exhibits=[lease.pk])} == {lease.pk}
    spanned = matter_chronology(matter, start=dt.date(2021, 4, 12), end=dt.date(2021, 6, 1))
    assert [(f.start, f.end) for f in spanned] == [("2021-04-09", "2021-04-13"), ("2021-05-01", "2022-04-30")]
    assert matter_chronology(matter, start=dt.date(2023, 1, 1)) == []


def test_the_page_lists_the_facts_with_links_to_the_page_viewer(client, attorney, matter, exhibits):
    letter, _ = exhibits
    client.force_login(attorney)
    page = client.get(f"/matters/{matter.pk}/chronology/").content.decode()
    assert "April 9, 2021 – April 13, 2021" in page and "Signed on January 2" not in page
    assert f'href="/matters/{matter.pk}/exhibits/{letter.pk}/pages/1/"' in page
    assert page.index("March 3, 2021") < page.index("March 18, 2021") < page.index("May 1, 2021")
    filtered = client.get(f"/matters/{matter.pk}/chronology/", {"exhibit": letter.pk, "start": "2021-04-01"})
    assert "1 dated fact;" not in filtered.content.decode() and "1 dated fact." in filtered.content.decode()
    detail = client.get(f"/matters/{matter.pk}/").content.decode()
    assert f'href="/matters/{matter.pk}/chronology/"' in detail


def test_a_span_that_ends_before_it_starts_is_refused_with_the_reason(client, attorney, matter, exhibits):
    client.force_login(attorney)
    page = client.get(f"/matters/{matter.pk}/chronology/", {"start": "2022-01-01", "end": "2021-01-01"})
    text = page.content.decode()
    assert page.status_code == 200 and "The end of the span comes before its start." in text
    assert "dated fact" not in text


def test_a_non_member_gets_404(client, matter, exhibits):
    outsider = UserFactory()
    MatterFactory(members=[outsider])
    client.force_login(outsider)
    assert client.get(f"/matters/{matter.pk}/chronology/").status_code == 404
