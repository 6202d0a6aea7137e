"""The pure parts of retrieval: a request's terms, a page's chunks, reciprocal rank fusion."""

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.retrieval.chunks import CHUNK_CHARS, MIN_TAIL_CHARS, page_spans
from pipeline.retrieval.fusion import rrf
from pipeline.retrieval.queries import query_terms


def test_a_request_keeps_its_content_words_and_drops_the_asking():
    terms = query_terms("Please draft a motion explaining why the tenant's deposit should be returned")
    words = [t[0] for t in terms if len(t) == 1]
    assert {"motion", "explaining", "tenant", "deposit", "returned"} <= set(words)
    assert not {"please", "draft", "a", "why", "the", "should", "be"} & set(words)


def test_citations_sections_bates_and_quotations_stay_whole():
    terms = query_terms('Under 569 U.S. 614 and § 1983, was "notice of appeal" timely? See SMITH000123 and '
                        "2022-NCSC-1 in No. 17-2218.")
    assert ["569", "u", "s", "614"] in terms
    assert ["notice", "of", "appeal"] in terms
    assert ["smith000123"] in terms
    assert ["2022", "ncsc", "1"] in terms and ["17", "2218"] in terms
    # The pieces of a kept citation are not also searched alone: "614" would match any page numbered 614.
    assert ["614"] not in terms and ["2218"] not in terms


def test_a_request_of_only_function_words_has_no_terms():
    assert query_terms("Is it what they would have been, and why?") == []
    assert query_terms("") == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_request_gives_word_terms(text):
    for term in query_terms(text):
        assert term and all(word and word.isalnum() or "_" in word for word in term)


def test_chunks_cover_the_page_within_the_limit_and_overlap():
    text = " ".join(f"Sentence {n} of the opinion says the court reviews de novo." for n in range(120))
    spans = page_spans(text)
    assert spans[0].start == 0 and spans[-1].end == len(text)
    assert all(s.end - s.start <= CHUNK_CHARS + MIN_TAIL_CHARS for s in spans)
    for before, after in zip(spans, spans[1:], strict=False):
        assert after.start < before.end  # overlapping: a sentence cut at one boundary is whole in a neighbour
        assert text[before.end - 1] in " ." or before.end == len(text)
    assert page_spans("  \n\t ") == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=5000))
def test_chunks_of_any_text_cover_it(text):
    spans = page_spans(text)
    if not text.strip():
        assert spans == []
        return
    covered = set()
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
        covered.update(range(span.start, span.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_rrf_rewards_agreement_over_one_first_place():
    fused = [item for item, _ in rrf({"lexical": [1, 2, 3], "semantic": [3, 4, 2]})]
    # 3 and 2 are ranked by both; 1 only by one method, even at its first place.
    assert fused[:2] == [3, 2] and fused.index(1) > 1
    assert rrf({}) == []
