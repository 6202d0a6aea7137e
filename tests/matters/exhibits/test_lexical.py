"""BM25 over a matter's pages for the retriever (matters/exhibits/lexical.py), on SQLite and PostgreSQL alike:
rarer terms weigh more, any one term is enough, phrases are phrases, and only the matter's ready pages of the
exhibits asked for are ranked."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matters.exhibits import lexical
from matters.exhibits.lexical import bm25_pages
from matters.models import Exhibit
from matters.services import matter_create
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db

FILLER = "The parties appeared before the court and the court heard argument on the motion."


@pytest.fixture
def record(matter):
    """Twelve pages that all say "court" and "motion"; one of them also names the rare "estoppel"."""
    texts = [f"{FILLER} Page {i} of the hearing." for i in range(12)]
    texts[7] = f"{FILLER} Counsel raised promissory estoppel."
    exhibit = ExhibitFactory(matter=matter, pages=texts)
    return {page.number: page.pk for page in exhibit.pages.all()}


def ranked(matter, terms, **kwargs) -> list[int]:
    hits = bm25_pages(matter=matter, terms=terms, **kwargs)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and all(score > 0 for score in scores)
    return [page_id for page_id, _ in hits]


def test_a_page_with_the_rare_term_beats_pages_with_only_common_ones(matter, record):
    order = ranked(matter, [["court"], ["motion"], ["estoppel"]])
    assert order[0] == record[8]
    assert set(order) == set(record.values())  # every page says "court": all are candidates


def test_any_one_of_the_terms_is_enough(matter, record):
    ExhibitFactory(matter=matter, pages=["The lessor withheld the deposit.", "Nothing relevant here at all."])
    terms = [["deposit"], ["indemnity"], ["arbitration"], ["subrogation"], ["novation"]]
    order = ranked(matter, terms)
    assert len(order) == 1
    assert ranked(matter, [["novation"]]) == []


def test_more_of_the_terms_rank_higher(matter):
    exhibit = ExhibitFactory(matter=matter, pages=[
        "The lessor kept the deposit.",
        "The lessor kept the deposit and charged a penalty under the lease.",
        "A penalty was charged.",
    ])
    ids = {page.number: page.pk for page in exhibit.pages.all()}
    assert ranked(matter, [["deposit"], ["penalty"], ["lessor"]])[0] == ids[2]


def test_a_phrase_is_matched_as_a_phrase(matter):
    exhibit = ExhibitFactory(matter=matter, pages=[
        "The claim is for breach of contract and damages.",
        "The contract was signed; the breach came later.",
        "Breach of contract, then breach of contract again, the complaint says.",
    ])
    ids = {page.number: page.pk for page in exhibit.pages.all()}
    order = ranked(matter, [["breach", "of", "contract"]])
    assert set(order) == {ids[1], ids[3]}
    assert order[0] == ids[3]  # the phrase twice


def test_only_the_exhibits_asked_for_and_only_ready_ones(matter, record):
    second = ExhibitFactory(matter=matter, pages=["A second exhibit on estoppel."])
    processing = ExhibitFactory(matter=matter, pages=["Estoppel in an exhibit still being read."])
    Exhibit.objects.filter(pk=processing.pk).update(status=Exhibit.Status.PROCESSING)
    everything = ranked(matter, [["estoppel"]])
    assert set(everything) == {record[8], second.pages.get().pk}
    assert ranked(matter, [["estoppel"]], exhibit_ids=[second.pk]) == [second.pages.get().pk]
    assert ranked(matter, [["estoppel"]], exhibit_ids=[processing.pk]) == []
    assert ranked(matter, [["estoppel"]], exhibit_ids=[]) == []


def test_another_matters_pages_are_never_ranked(matter, record, attorney):
    other = matter_create(name="Other v. Other", created_by=attorney)
    ExhibitFactory(matter=other, pages=["Estoppel, estoppel, estoppel."])
    assert ranked(matter, [["estoppel"]]) == [record[8]]
    assert len(ranked(other, [["estoppel"], ["court"]])) == 1


def test_limit_and_empty_terms(matter, record):
    assert len(ranked(matter, [["court"]], limit=3)) == 3
    assert ranked(matter, []) == [] and ranked(matter, [[], ["--"]]) == []
    assert ranked(matter, [["Estoppel"], ["estoppel"]]) == [record[8]]  # one term, said twice


def test_pages_added_later_are_counted_and_found(matter, record):
    assert ranked(matter, [["estoppel"]]) == [record[8]]
    later = ExhibitFactory(matter=matter, pages=["Estoppel again, in a later upload."])
    assert set(ranked(matter, [["estoppel"]])) == {record[8], later.pages.get().pk}


def test_reading_in_tiers_ranks_as_reading_every_page(matter, record, monkeypatch):
    # The rarest terms' pages are read first and the common ones' only while they could still rank: the ranking
    # must be the one of every page holding any term.
    ExhibitFactory(matter=matter, pages=["Estoppel and waiver.", "Waiver of the motion.", "The court on waiver.",
                                         "A hearing on the waiver of estoppel."])
    terms = [["court"], ["motion"], ["estoppel"], ["waiver"], ["hearing"], ["the", "court"]]
    monkeypatch.setattr(lexical, "TIER_PAGES", 10_000)  # one tier: every page holding any term
    every = bm25_pages(matter=matter, terms=terms, limit=5)
    monkeypatch.setattr(lexical, "TIER_PAGES", 1)  # a tier per term
    tiers = bm25_pages(matter=matter, terms=terms, limit=5)
    assert [page for page, _ in tiers] == [page for page, _ in every]
    assert [score for _, score in tiers] == pytest.approx([score for _, score in every])


def test_past_the_pages_to_read_the_best_pages_still_come_first(matter, record, monkeypatch):
    monkeypatch.setattr(lexical, "TIER_PAGES", 1)
    monkeypatch.setattr(lexical, "READ_PAGES", 3)  # "court" is on 12 pages: read where "motion" is too
    monkeypatch.setattr(lexical, "READ_PAGES_POSTGRES", 3)
    order = ranked(matter, [["court"], ["motion"], ["estoppel"]], limit=3)
    assert order[0] == record[8] and len(order) == 3


_VOCABULARY = ["court", "motion", "lease", "tenant", "estoppel", "waiver", "deposit", "hearing", "appeal", "notice",
               "the", "of", "breach", "contract", "damages", "rent"]


@pytest.fixture
def salad(matter):
    """Sixty pages of the vocabulary drawn with falling frequency, in three exhibits, so terms run from most pages
    to a few."""
    rng = random.Random(11)
    weights = [1 / (rank + 1) for rank in range(len(_VOCABULARY))]
    return [ExhibitFactory(matter=matter, pages=[" ".join(rng.choices(_VOCABULARY, weights, k=rng.randint(5, 60)))
                                                 for _ in range(20)]) for _ in range(3)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(terms=st.lists(st.one_of(st.sampled_from(_VOCABULARY).map(lambda w: [w]),
                                st.lists(st.sampled_from(_VOCABULARY), min_size=2, max_size=3)), min_size=1,
                      max_size=8),
       tier=st.integers(1, 40), limit=st.integers(1, 30), some=st.booleans())
def test_any_tiers_rank_as_one_read_of_every_page(matter, salad, terms, tier, limit, some):
    exhibit_ids = [salad[0].pk, salad[2].pk] if some else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lexical, "TIER_PAGES", 10**6)  # one read of every page holding any term
        every = bm25_pages(matter=matter, terms=terms, exhibit_ids=exhibit_ids, limit=limit)
        all_scores = dict(bm25_pages(matter=matter, terms=terms, exhibit_ids=exhibit_ids, limit=1000))
        patch.setattr(lexical, "TIER_PAGES", tier)
        tiers = bm25_pages(matter=matter, terms=terms, exhibit_ids=exhibit_ids, limit=limit)
    # A word on more than half the pages adds at most 2.2e-6 (its idf is FTS5's floor), left out where not read.
    assert [score for _, score in tiers] == pytest.approx([score for _, score in every], abs=1e-4)
    assert all(all_scores[page] == pytest.approx(score, abs=1e-4) for page, score in tiers)  # ties may swap
