"""A packet over a matter larger than its budget: the pages the request is about, the law in its own section,
why each page is there, and what happens when a method is missing."""

import pytest

from matters.models import Origin, Page
from pipeline.models import ModelServer, Role, RoleAssignment
from pipeline.packet import AUTHORITY_PREAMBLE, LAW_OPEN, NO_AUTHORITY, evidence_packet, page_markers
from pipeline.retrieval import semantic
from pipeline.retrieval.embedding import embedding_progress, matter_embed
from pipeline.retrieval.models import ChunkEmbedding
from tests.factories import ExhibitFactory, MatterFactory
from tests.support.fake_embedder import fake_embedder
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.django_db(transaction=True)

FILLER = ("The parties appeared through counsel and the clerk entered the scheduling order for the next term. "
          "Counsel conferred about discovery and filed a joint status report with the court. ") * 12
DEPOSIT = ("The landlord kept the whole security deposit of the tenant after the lease ended, citing carpet "
           "stains, and sent no itemized list of deductions within thirty days as the statute requires. ")
ROOF = ("The roof over the bedroom leaked through the winter and the tenant reported each leak in writing; the "
        "landlord sent no roofer until March. ")


@pytest.fixture
def big_matter():
    """Twelve filings of three pages each, the deposit dispute in the ninth, the roof in the eleventh."""
    matter = MatterFactory()
    exhibits = []
    for n in range(12):
        pages = [FILLER + f" Filing {n} page {p}." for p in range(1, 4)]
        if n == 8:
            pages[1] = DEPOSIT * 4
        if n == 10:
            pages[2] = ROOF * 6
        exhibits.append(ExhibitFactory(matter=matter, origin=Origin.COURT, pages=pages))
    return matter, exhibits


def _budget(pages: int) -> int:
    return pages * (len(FILLER) + 40)


def _cites(packet) -> set[tuple[str, int]]:
    return {(p.label, p.page) for p in packet.pages}


def test_a_plainly_worded_request_gets_its_pages_not_the_first_exhibits(big_matter):
    matter, exhibits = big_matter
    packet = evidence_packet(matter, query="Why did the landlord keep the tenant's money when the lease was over?",
                             budget_chars=_budget(3))
    assert (exhibits[8].label, 2) in _cites(packet)
    assert (exhibits[0].label, 1) not in _cites(packet)
    trace = packet.trace["evidence"]
    chosen = next(p for p in trace["pages"] if (p["label"], p["page"]) == (exhibits[8].label, 2))
    assert chosen["query"] == 1 and chosen["rank"] == 1 and chosen["lexical_rank"] == 1
    assert "landlord" in trace["queries"][0]["terms"] and trace["queries"][0]["methods"] == ["lexical"]
    assert packet.trace["warnings"] == ["No server holds the embedder role: pages were ranked by their words alone."]
    assert len(packet.omitted) == 36 - len(packet.pages)


def test_each_query_gets_its_share_of_the_budget(big_matter):
    matter, exhibits = big_matter
    packet = evidence_packet(matter, query="deposit deductions", queries=["roof leaks in the bedroom"],
                             budget_chars=_budget(2))
    assert {(exhibits[8].label, 2), (exhibits[10].label, 3)} <= _cites(packet)
    assert [q["n"] for q in packet.trace["evidence"]["queries"]] == [1, 2]


def test_a_passage_running_over_the_page_break_takes_the_next_page(big_matter):
    matter, exhibits = big_matter
    first, second = exhibits[3].pages.get(number=1), exhibits[3].pages.get(number=2)
    first.text = FILLER + " The inspector found that the furnace vented carbon monoxide into the hall and"
    first.save()
    second.text = "the family was taken to the hospital that night. " + FILLER
    second.save()
    packet = evidence_packet(matter, query="furnace carbon monoxide inspector", budget_chars=_budget(3))
    assert {(exhibits[3].label, 1), (exhibits[3].label, 2)} <= _cites(packet)
    taken = next(p for p in packet.trace["evidence"]["pages"] if p["page_id"] == second.pk)
    assert taken["neighbour_of"] == first.pk and taken["direction"] == "next"


def test_a_request_of_common_words_says_so_and_falls_back_to_exhibit_order(big_matter):
    matter, exhibits = big_matter
    packet = evidence_packet(matter, query="Is it what they would have been, and why?", budget_chars=_budget(2))
    trace = packet.trace["evidence"]
    assert trace["fallback_exhibit_order"] is True
    assert "has no words to search for" in trace["queries"][0]["warnings"][0]
    assert (exhibits[0].label, 1) in _cites(packet)


def test_the_law_comes_in_its_own_section_with_its_citation_and_markers(big_matter):
    matter, exhibits = big_matter
    ExhibitFactory(matter=matter, origin=Origin.AUTHORITY, cites_as="Smith v. Jones, 123 F.4th 456 (1st Cir. 2024)",
                   pages=["*456 A landlord who withholds a security deposit without an itemized statement *457 "
                          "forfeits the right to keep any part of it."])
    packet = evidence_packet(matter, query="deposit", budget_chars=_budget(3), authorities=True)
    prompt = packet.prompt_text()
    assert AUTHORITY_PREAMBLE in prompt
    assert f'{LAW_OPEN} cites_as="Smith v. Jones, 123 F.4th 456 (1st Cir. 2024)"' in prompt
    assert 'markers="*456, *457"' in prompt
    # An authority is never evidence: it is not in the EVIDENCE section, and no evidence page is in the law.
    assert all(p.origin != Origin.AUTHORITY for p in packet.pages)
    assert [a.cites_as for a in packet.authorities] == ["Smith v. Jones, 123 F.4th 456 (1st Cir. 2024)"]


def test_a_matter_without_authorities_tells_the_model_the_law_is_missing(big_matter):
    matter, _ = big_matter
    packet = evidence_packet(matter, query="deposit", budget_chars=_budget(3), authorities=True)
    assert packet.authorities == [] and NO_AUTHORITY in packet.prompt_text()
    # Stages that take no law get no AUTHORITY section at all.
    assert NO_AUTHORITY not in evidence_packet(matter, query="deposit", budget_chars=_budget(3)).prompt_text()


def test_markers_name_star_pages_paragraphs_and_slip_pages():
    assert page_markers("text *615 more *616 and *615 again", 3) == "*615, *616"
    assert page_markers("¶ 12 First.\n¶ 13 Second.\n¶ 14 Third.", 2) == "¶¶ 12–14"
    assert page_markers("5\nOpinion of the Court\nWe hold...", 9) == "page 5"
    assert page_markers("No pagination here.", 1) == ""


def test_an_embedder_that_is_down_leaves_lexical_retrieval_and_a_warning(big_matter):
    matter, exhibits = big_matter
    dead = ModelServer.objects.create(name="embedder", base_url="http://127.0.0.1:9", model_name="minilm")
    RoleAssignment.objects.create(role=Role.EMBEDDER, server=dead)
    packet = evidence_packet(matter, query="security deposit deductions", budget_chars=_budget(3))
    assert (exhibits[8].label, 2) in _cites(packet)
    assert any("did not answer" in w for w in packet.trace["warnings"])
    assert any("0 of 36 pages are embedded" in w for w in packet.trace["warnings"])


@pytest.fixture
def embedder():
    with ScriptedServer() as server:
        batches = fake_embedder(server)
        record = ModelServer.objects.create(name="embedder", base_url=server.url, model_name="fake-embedder")
        RoleAssignment.objects.create(role=Role.EMBEDDER, server=record)
        semantic.forget()
        yield batches
        semantic.forget()


def test_the_sweep_embeds_evidence_and_law_never_output_and_resumes(big_matter, embedder):
    matter, exhibits = big_matter
    law = ExhibitFactory(matter=matter, origin=Origin.AUTHORITY, pages=["A statute on deposits."])
    generated = ExhibitFactory(matter=matter, origin=Origin.CLIENT, pages=["A draft LawDesk wrote."],
                               generated_reason="matches draft version 3")
    assert matter_embed(matter_id=matter.pk, max_pages=10) == 10
    assert embedding_progress(matter).embedded == 10
    assert matter_embed(matter_id=matter.pk) == 27  # the rest, from where the first sweep stopped
    progress = embedding_progress(matter)
    assert (progress.embedded, progress.total, progress.complete) == (37, 37, True)
    embedded_pages = set(ChunkEmbedding.objects.values_list("page_id", flat=True))
    assert law.pages.get().pk in embedded_pages and generated.pages.get().pk not in embedded_pages
    sent = [text for batch in embedder for text in batch]
    assert len(sent) == len(set(sent))  # a chunk text seen before is not sent again
    assert matter_embed(matter_id=matter.pk) == 0


def test_a_page_whose_text_changes_is_embedded_again(big_matter, embedder):
    matter, exhibits = big_matter
    matter_embed(matter_id=matter.pk)
    page = exhibits[5].pages.get(number=1)
    Page.objects.filter(pk=page.pk).update(text="A new text of this page about a broken window.")
    assert embedding_progress(matter).embedded == 35
    assert matter_embed(matter_id=matter.pk) == 1
    row = ChunkEmbedding.objects.get(page=page)
    assert (row.start, row.end, row.page_chars) == (0, 46, 46)


def test_fusion_ranks_with_both_methods_and_records_the_similarity(big_matter, embedder):
    matter, exhibits = big_matter
    matter_embed(matter_id=matter.pk)
    packet = evidence_packet(matter, query="The roof leaked in the winter; the tenant reported the leaks.",
                             budget_chars=_budget(2))
    assert (exhibits[10].label, 3) in _cites(packet)
    trace = packet.trace["evidence"]
    assert trace["queries"][0]["methods"] == ["lexical", "semantic"]
    chosen = next(p for p in trace["pages"] if (p["label"], p["page"]) == (exhibits[10].label, 3))
    assert chosen["semantic_rank"] == 1 and chosen["similarity"] > 0.5
    assert "warnings" in packet.trace and not packet.trace["warnings"]
    assert packet.trace["embedding"] == {"model": "fake-embedder", "embedded": 36, "total": 36}


def test_vectors_added_after_a_search_are_searched_next_time(big_matter, embedder):
    matter, exhibits = big_matter
    matter_embed(matter_id=matter.pk)
    query = "flooded basement sump pump failure"
    before = evidence_packet(matter, query=query, budget_chars=_budget(1))
    extra = ExhibitFactory(matter=matter, origin=Origin.COURT, pages=["The sump pump failed and the basement "
                                                                      "flooded twice. " * 20])
    matter_embed(matter_id=matter.pk)
    after = evidence_packet(matter, query=query, budget_chars=_budget(1))
    assert (extra.label, 1) not in _cites(before) and (extra.label, 1) in _cites(after)


def test_an_input_the_embedder_refuses_as_too_long_is_embedded_from_its_start(big_matter):
    matter, exhibits = big_matter
    with ScriptedServer() as server:
        fake_embedder(server, max_chars=400)
        record = ModelServer.objects.create(name="embedder", base_url=server.url, model_name="fake-embedder")
        RoleAssignment.objects.create(role=Role.EMBEDDER, server=record)
        assert matter_embed(matter_id=matter.pk) == 36
    assert embedding_progress(matter).complete
    assert not ChunkEmbedding.objects.filter(dims=0).exists()


def test_repeated_pages_across_batches_are_sent_once_and_every_row_has_its_vector(embedder):
    # The server embeds batch n + 1 while batch n is written: a text of the batch in flight must wait for it, not
    # be sent twice, nor be written without its vector.
    matter = MatterFactory()
    boilerplate = "CONFIDENTIAL — SUBJECT TO PROTECTIVE ORDER. " * 3
    texts = [boilerplate, f"The tenant paid rent in month {1}.", boilerplate, boilerplate,
             f"The tenant paid rent in month {2}.", boilerplate, boilerplate]
    ExhibitFactory(matter=matter, pages=texts)
    assert matter_embed(matter_id=matter.pk, batch_pages=2) == len(texts)
    sent = [text for batch in embedder for text in batch]
    assert sorted(sent) == sorted({" ".join(t.split()) for t in texts})
    rows = ChunkEmbedding.objects.filter(matter=matter)
    assert rows.count() == len(texts) and not rows.filter(dims=0).exists()
    assert len({bytes(v) for v in rows.filter(text_sha256=rows.first().text_sha256).values_list("vector", flat=True)
                }) == 1
