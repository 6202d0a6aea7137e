"""A section's cites by construction: a sentence the drafter drew from one excerpt of its packet gets that
excerpt's record cite, a sentence that matches no page gets none, and a legal-standard section citing none of
its law quotes the stored authorities under their own citation; the verifier then checks them as always."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.stages.attribution import (
    Excerpt,
    attach_record_cites,
    content_words,
    prompt_excerpts,
    quote_authorities,
)
from pipeline.stages.control import job_start
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

pytestmark = pytest.mark.django_db

PLAN = json.dumps({"title": "Motion to compel repairs", "sections": [
    {"kind": "statement_of_facts", "heading": "Statement of facts", "questions": ["When was the lease signed?"],
     "queries": ["lease signed"]},
    {"kind": "legal_standard", "heading": "Legal standard", "questions": ["Must a landlord repair?"],
     "queries": ["landlord repair rent"]}]})
# Two sentences copied from the lease's first page without a cite, and one the record does not hold.
SIGNED = "This lease was signed on March 3, 2021 by Acme Holdings LLC and Jane Roe."
RENT = "The monthly rent is due on the first day of each month."
INVENTED = "The neighbours praised the garden fountain during the summer festival."
STANDARD = "The court applies the law of the lease."
QUOTE = "A landlord who fails to repair the premises may not demand the full rent."


def motion_of_two_sections(matter, server, attorney, facts_text: str):
    """Run a motion of :data:`PLAN` whose drafter writes ``facts_text`` for the statement of facts and
    :data:`STANDARD` for the legal standard; return the job and the two section runs."""
    stage_server(server, {"plan": PLAN, "section": lambda call: facts_text if call == 1 else STANDARD})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel the landlord to repair the roof.",
                    user=attorney, enqueue=False)
    runs = run_all(job)
    assert job.status == "done", [(r.stage, r.error) for r in runs]
    facts, standard = [r for r in runs if r.stage == "section"]
    return job, facts, standard


def test_sentences_drawn_from_an_excerpt_get_its_cite_and_the_legal_standard_quotes_the_law(
        matter, record, server, attorney):
    job, facts, standard = motion_of_two_sections(matter, server, attorney, f"{SIGNED} {RENT}\n\n{INVENTED}")
    assert facts.parsed["text"] == (
        "This lease was signed on March 3, 2021 by Acme Holdings LLC and Jane Roe (SMITH000001). The monthly rent is "
        f"due on the first day of each month (SMITH000001).\n\n{INVENTED}")
    assert [a["cite"] for a in facts.parsed["attributed"]] == ["SMITH000001", "SMITH000001"]
    assert "attached a record cite to 2 sentences" in facts.reason and "(SMITH000001)" in facts.reason
    [quoted] = standard.parsed["quoted_authorities"]
    assert quoted["quote"] == QUOTE and "569 U.S. 614" in quoted["cites_as"]
    assert standard.parsed["text"].startswith(f"{STANDARD}\n\n“{QUOTE}” ")
    assert "quoted" in standard.reason and standard.parsed["attributed"] == []
    version = job.draft.latest_version
    findings = list(version.findings.all())
    cites = [f for f in findings if f.kind == "bates_cite" and f.text == "SMITH000001"]
    assert len(cites) >= 2 and {f.status for f in cites} == {"grounded"}
    [case] = [f for f in findings if f.kind == "case_citation"]
    assert case.status in ("grounded", "pin_unchecked"), case.message
    assert not [f for f in findings if f.start >= version.text.index(INVENTED) and f.kind == "bates_cite"
                and f.start < version.text.index(INVENTED) + len(INVENTED) + 20]


def test_a_facts_section_citing_nothing_in_the_record_quotes_its_evidence_under_their_cites(
        matter, record, server, attorney):
    job, facts, standard = motion_of_two_sections(matter, server, attorney, INVENTED)
    signed = "This lease was signed on March 3, 2021 by Acme Holdings LLC and Jane Roe."
    wrote = ("On April 5, 2021 the tenant wrote to the landlord: We will not pay the rent for April, because the "
             "roof leaks and nobody has come to repair it.")
    assert facts.parsed["attributed"] == []
    assert [(q["cite"], q["quote"]) for q in facts.parsed["quoted_record"]] == [
        ("SMITH000001", signed), ("SMITH000002", wrote)]
    assert facts.parsed["text"] == f"{INVENTED}\n\n“{signed}” (SMITH000001).\n\n“{wrote}” (SMITH000002)."
    assert "cited nothing in the record, so LawDesk quoted SMITH000001 and SMITH000002" in facts.reason
    # The legal standard is not a section of facts: it quotes its law, not the record.
    assert standard.parsed["quoted_record"] == [] and standard.parsed["quoted_authorities"]
    version = job.draft.latest_version
    findings = list(version.findings.all())
    for cite in ("SMITH000001", "SMITH000002"):
        assert {f.status for f in findings if f.kind == "bates_cite" and f.text == cite} == {"grounded"}, cite
    quotes = [f for f in findings if f.kind == "quotation" and (signed[:30] in f.text or wrote[:30] in f.text)]
    assert len(quotes) == 2 and {f.status for f in quotes} == {"grounded"}, [(f.text, f.message) for f in quotes]


def test_a_section_of_facts_that_cites_the_record_gets_no_quotation_and_the_quotes_share_the_questions_words():
    from pipeline.stages.attribution import quote_record

    pages = [Excerpt("1", 1, "The tenant paid the rent for every month of the year without fail.", cite="Ex. 1 at 1"),
             Excerpt("2", 1, "The garden was planted with roses and tulips in the early spring.", cite="Ex. 2 at 1")]
    cited = "The tenant paid (Ex. 1 at 1)."
    assert quote_record(cited, pages, "rent paid") == (cited, [])
    text, [quoted] = quote_record("The tenant was faithful.", pages, "Did the tenant pay the rent?")
    assert quoted["cite"] == "Ex. 1 at 1" and text.endswith(f"“{pages[0].text}” (Ex. 1 at 1).")
    assert quote_record("Nothing here.", pages, "zebra crossing") == ("Nothing here.", [])


def test_the_sections_stating_facts_are_the_facts_and_arguments_else_the_first_that_states_no_law():
    from pipeline.stages.motion import states_facts

    def outline(*kinds):
        return {"sections": [{"key": f"{i:02d}-{k}", "kind": k, "writer": "matter" if k == "caption" else "drafter"}
                             for i, k in enumerate(kinds, start=1)]}

    assert states_facts(outline("caption", "introduction", "statement_of_facts", "legal_standard", "argument",
                                "conclusion")) == ["03-statement_of_facts", "05-argument"]
    assert states_facts(outline("caption", "legal_standard", "introduction")) == ["03-introduction"]
    assert states_facts(outline("caption", "legal_standard")) == []


def test_a_sentence_two_pages_share_alike_or_too_short_gets_no_cite():
    pages = [Excerpt("1", 1, "The roof leaks in the bedroom every winter.", cite="SMITH000001"),
             Excerpt("2", 1, "The roof leaks in the bedroom every winter.", cite="SMITH000002")]
    text, attached = attach_record_cites("The roof leaks in the bedroom every winter. Roof leaks.", pages)
    assert attached == [] and text == "The roof leaks in the bedroom every winter. Roof leaks."


def test_a_section_that_already_cites_its_law_gets_no_quotation():
    law = [Excerpt("3", 2, f"{QUOTE} The duty to repair is an implied covenant of every residential lease.",
                   cites_as="Tarrant Regional Water District v. Herrmann, 569 U.S. 614")]
    text = "A landlord must repair. Tarrant Regional Water District v. Herrmann, 569 U.S. 614, 620 (2013)."
    assert quote_authorities(text, law, "landlord repair") == (text, [])
    added, [quoted] = quote_authorities("The law is plain.", law, "landlord repair rent")
    assert quoted["quote"] == QUOTE and added.endswith(f"“{QUOTE}” Tarrant Regional Water District v. Herrmann, "
                                                       "569 U.S. 614.")


def test_the_excerpts_are_read_back_from_the_prompt_as_sent(matter, record):
    from pipeline.packet import evidence_packet

    packet = evidence_packet(matter, query="lease", authorities=True)
    evidence, law = prompt_excerpts(packet.prompt_text())
    assert [(e.cite, e.text) for e in evidence] == [(p.cite, p.text) for p in packet.pages]
    assert [(a.cites_as, a.page, a.text) for a in law] == [(a.cites_as, a.page, a.text) for a in packet.authorities]


WORDS = ["lease", "signed", "March", "roof", "leaks", "rent", "monthly", "landlord", "tenant", "garden", "the", "of"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join), min_size=1, max_size=5),
       st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join), max_size=3))
def test_a_cite_is_attached_only_to_a_sentence_whose_words_are_on_its_page(said, pages):
    excerpts = [Excerpt(str(i), 1, text, cite=f"SMITH00000{i}") for i, text in enumerate(pages, start=1)]
    text = " ".join(s[0].upper() + s[1:] + "." for s in said)
    out, attached = attach_record_cites(text, excerpts)
    cited = re.findall(r"([^.]*) \((SMITH\d+)\)\.", out)
    assert len(cited) == len(attached)
    for sentence, cite in cited:
        page = next(e for e in excerpts if e.cite == cite)
        words = content_words(sentence)
        assert len(words & content_words(page.text)) >= 4
        assert len(words & content_words(page.text)) / len(words) >= 0.7
    assert re.sub(r" \(SMITH\d+\)", "", out) == text  # nothing else of the text changed


def test_the_pin_goes_before_the_year_parenthetical():
    from pipeline.stages.attribution import with_pin

    assert with_pin("Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013)", "620") == (
        "Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614, 620 (2013)")
    assert with_pin("Gift Surplus, LLC v. State ex rel. Cooper, 2022-NCSC-1", "¶ 12") == (
        "Gift Surplus, LLC v. State ex rel. Cooper, 2022-NCSC-1, ¶ 12")
    assert with_pin("18 U.S.C. § 1028A.", "") == "18 U.S.C. § 1028A"


def test_a_plan_stating_no_law_gets_a_legal_standard_before_its_conclusion():
    from pipeline.stages.motion import outline_from

    outline = outline_from({"title": "Motion", "sections": [
        {"kind": "introduction", "heading": "Introduction", "questions": [], "queries": []},
        {"kind": "conclusion", "heading": "Conclusion", "questions": [], "queries": []}]}, queries=["consolidate"])
    assert [s["key"] for s in outline["sections"]] == [
        "01-caption", "02-introduction", "03-legal_standard", "04-conclusion", "05-signature_block",
        "06-certificate_of_service"]
    assert outline["sections"][2]["queries"] == ["consolidate"] and "added a legal standard" in outline["notes"][0]
    argued = outline_from({"title": "Motion", "sections": [
        {"kind": "argument", "heading": "The appeals share one order", "questions": [], "queries": []}]})
    assert [s["kind"] for s in argued["sections"] if s["writer"] == "drafter"] == ["argument"]


def test_a_sentence_the_model_wrapped_over_two_lines_is_read_whole():
    pages = [Excerpt("7", 1, "The court asks whether this appeal should be consolidated with the earlier appeal.",
                     cite="Ex. 7 at 1")]
    text, attached = attach_record_cites("The court asks whether this appeal should be\nconsolidated with the "
                                         "earlier appeal.\nA second line.", pages)
    assert text == ("The court asks whether this appeal should be consolidated with the earlier appeal (Ex. 7 at 1)."
                    "\nA second line.")
    assert [a["cite"] for a in attached] == ["Ex. 7 at 1"]


def test_an_authority_with_no_citation_to_read_is_not_quoted_under_its_file_name(matter, record, server, attorney):
    # A newcomer's authorities, uploaded with no "Cites as", were quoted as "“...” mo-app-jagels.": a file name
    # set where a citation goes. Here neither authority's first page prints a citation.
    for law in (record["opinion"], record["statute"]):
        first = law.content.pages.get(number=1)
        first.text = f"{QUOTE} The tenant may withhold what the repair would cost."
        first.save(update_fields=["text"])
        law.cites_as = ""  # nobody set it
        law.save(update_fields=["cites_as"])
    job, facts, standard = motion_of_two_sections(matter, server, attorney, f"{SIGNED} {RENT}")
    assert standard.parsed["quoted_authorities"] == []
    assert standard.parsed["text"] == STANDARD  # nothing set under a title where a citation goes
    assert "1028a and tarrant have no citation LawDesk can read" in standard.reason
    assert "they were not quoted; set “Cites as” to have them quoted under their citation" in standard.reason
