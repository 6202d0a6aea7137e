"""Query counts the verifier's lookups promise (matters/verifier/evidence.py, check.py, check_records.py): the
same number of queries for a record and a draft of 2 claims and of 20, on SQLite and PostgreSQL alike. The review
page runs the verifier on every edit, so a query per claim or per page would grow with every long brief."""

import pytest

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.evidence import Evidence
from matters.drafts.verifier.facts import matter_index_facts
from tests.factories import ExhibitFactory, MatterFactory, ProductionFactory

pytestmark = pytest.mark.django_db


def ledger(rows: int):
    """A matter whose one exhibit has ``rows`` pages, page n recording a payment of $1,2nn.00 on March n, 2021,
    all produced as SMITH000001 onwards, its dates and amounts indexed as a first verification indexes them."""
    matter = MatterFactory()
    exhibit = ExhibitFactory(matter=matter, label="1", pages=[
        f"Ledger. On March {n}, 2021 the tenant paid $1,2{n:02d}.00 in rent." for n in range(1, rows + 1)])
    ProductionFactory(matter=matter, pages=list(exhibit.pages.order_by("number")))
    matter_index_facts(matter)
    return matter


def draft_citing(rows: int) -> str:
    return " ".join(f"On March {n}, 2021 the tenant paid $1,2{n:02d}.00 (SMITH{n:06d}; Ex. 1 at {n})."
                    for n in range(1, rows + 1))


# The evidence (index current?, exhibits, flagged pages); the Bates prefixes of the matter's productions and of the
# other side's; Bates numbers out and in; the facts asked; exhibit 1 and its pages; OCR confidence of the sources;
# the sources' Bates numbers in and out and their labels; the state of the evidence the findings are kept under
# (exhibits, productions, incoming productions, saved deadlines: matters.drafts.verifier.memo.evidence_state).
QUERIES_PER_VERIFICATION = 18


@pytest.mark.parametrize("rows", [2, 20])
def test_verifying_a_draft_costs_the_same_queries_for_2_claims_and_for_20(rows, django_assert_num_queries):
    """Bates numbers, dates and amounts are each looked up in one batch, an exhibit's pages once whatever the
    number of cites to it."""
    matter = ledger(rows)
    with django_assert_num_queries(QUERIES_PER_VERIFICATION):
        findings = verify_text(matter=matter, text=draft_citing(rows))
    assert {(f.kind, f.status) for f in findings} == {("date", "grounded"), ("amount", "grounded"),
                                                       ("bates_cite", "grounded"), ("exhibit_cite", "grounded")}
    assert len(findings) == 4 * rows


@pytest.mark.parametrize("rows", [2, 20])
def test_the_evidence_of_a_matter_is_read_in_three_queries_whatever_its_pages(rows, django_assert_num_queries):
    """Whether the facts index is current, the evidence exhibits, the pages flagged as possible injections."""
    matter = MatterFactory()
    ExhibitFactory.create_batch(rows, matter=matter, pages=["Rent of $1,250.00 paid on March 3, 2021."])
    matter_index_facts(matter)
    with django_assert_num_queries(3):
        evidence = Evidence(matter)
    assert len(evidence.exhibit_ids) == rows


@pytest.mark.parametrize("rows", [2, 20])
def test_each_batch_lookup_of_the_evidence_is_one_query(rows, django_assert_num_queries):
    """Facts for every (kind, value) asked, nearby dates for every date, the text of every page: one query each;
    Bates numbers: one query for the matter's productions and one for the other side's."""
    matter = ledger(rows)
    evidence = Evidence(matter)
    isos = [f"2021-03-{n:02d}" for n in range(1, rows + 1)]
    with django_assert_num_queries(1):
        found = evidence.pages_with(evidence.date_kinds(), isos)
    assert all(found[iso] for iso in isos)
    with django_assert_num_queries(1):
        near = evidence.dates_near_many(isos)
    assert len(near) == rows
    page_ids = {p for pages in found.values() for p in pages}
    with django_assert_num_queries(1):
        evidence.prefetch_texts(page_ids)
    with django_assert_num_queries(2):
        bates = evidence.bates_pages([f"SMITH{n:06d}" for n in range(1, rows + 1)])
    assert len(bates) == rows
