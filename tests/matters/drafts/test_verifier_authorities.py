"""The document must be the authority: a case or section an authority only cites grounds nothing; "cites as";
Id. past (citing ...) parentheticals; pin cites checked against the authority; quotations that say where they are."""

import pytest

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.citations import find_case_citations
from matters.drafts.verifier.pins import pin_numbers
from matters.drafts.verifier.text import flatten
from matters.exhibits.services import exhibit_set_cites_as
from matters.models import AuditEntry
from tests.support.record import pdf_pages

pytestmark = pytest.mark.django_db

SYLLABUS = [
    "DOE v. ACME HOLDINGS LLC. 512 F.3d 441 (9th Cir. 2008). Before: SMITH, Circuit Judge. A landlord's duty "
    "to repair follows from Virginia v. Maryland, 540 U.S. 56, 67 (2003), and from 18 U.S.C. § 1343 as the "
    "district court read it.",
    "The tenant may withhold rent. The claims raise[s] the same questions of law as before. A landlord must "
    "repair . . . within thirty days.",
]


@pytest.fixture
def opinion(matter, record, ingest, tmp_path):
    return ingest(matter, pdf_pages(SYLLABUS, tmp_path / "doe.pdf"), origin="authority")


def test_a_case_cited_inside_another_opinion_is_not_grounded_by_it(matter, opinion):
    findings = verify_text(matter=matter, text="Repairs are owed. Virginia v. Maryland, 540 U.S. 56, 67 (2003).")
    [case] = [f for f in findings if f.kind == "case_citation"]
    assert case.status == "unverified_authority" and case.blocking
    assert f"cited within Exhibit {opinion.label}" in case.message and "p. 1" in case.message
    assert "add the opinion itself" in case.message.lower()


def test_the_opinion_itself_grounds_its_own_citation(matter, opinion):
    findings = verify_text(matter=matter,
                           text="Repairs are owed. Doe v. Acme Holdings LLC, 512 F.3d 441 (9th Cir. 2008).")
    [case] = [f for f in findings if f.kind == "case_citation"]
    assert case.status == "grounded" and case.sources[0]["exhibit"] == opinion.pk


def test_a_statute_mentioned_in_an_opinion_is_not_grounded_by_it(matter, opinion):
    [statute] = [f for f in verify_text(matter=matter, text="Wire fraud is a crime. 18 U.S.C. § 1343.")
                 if f.kind == "statute_citation"]
    assert statute.status == "unverified_authority"
    assert f"cited within Exhibit {opinion.label}" in statute.message


def test_cites_as_is_prefilled_from_the_first_page_editable_and_audited(matter, record, attorney):
    opinion, statute = record["opinion"], record["statute"]
    opinion.refresh_from_db()
    statute.refresh_from_db()
    assert "569 U.S. 614" in opinion.cites_as and "HERRMANN" in opinion.cites_as
    assert statute.cites_as == "18 U.S.C. § 1028A"
    text = "Repairs are owed. Roe v. Smith, 101 F.4th 7 (2d Cir. 2024)."
    assert [f.status for f in verify_text(matter=matter, text=text) if f.kind == "case_citation"] == [
        "unverified_authority"]
    exhibit_set_cites_as(exhibit=opinion, updated_by=attorney, cites_as="Roe v. Smith, 101 F.4th 7")
    assert [f.status for f in verify_text(matter=matter, text=text) if f.kind == "case_citation"] == ["grounded"]
    entry = AuditEntry.objects.filter(action="exhibit.cites_as", object_id=str(opinion.pk)).last()
    assert entry.detail["after"] == "Roe v. Smith, 101 F.4th 7" and "569 U.S. 614" in entry.detail["before"]


def test_id_skips_a_citing_parenthetical(matter, record):
    text = ("Landlords must repair. Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614, 615 (2013) (citing "
            "Virginia v. Maryland, 540 U.S. 56, 67 (2003)). The duty is implied. Id. at 616.")
    findings = verify_text(matter=matter, text=text)
    found_id = next(f for f in findings if f.text.startswith("Id."))
    # The record's opinion shows no reporter pages: the Id. is resolved to it, its pin cannot be checked.
    assert found_id.status == "pin_unchecked" and "Tarrant" in found_id.message
    assert found_id.sources[0]["exhibit"] == record["opinion"].pk


@pytest.mark.parametrize("pin", ["241–242", "241—242", "241-42", "241 - 242"])
def test_pin_cite_ranges_keep_pin_and_year(pin):
    [case] = find_case_citations(flatten(f"See Smith v. Jones, 566 U.S. 1, {pin} (2012)."))
    assert case.pin_cite == pin and case.year == 2012
    assert pin_numbers(case.pin_cite) == [("page", 241, 242)]


STARRED = ["ROE v. WADE PROPERTIES. 610 F.3d 200 (7th Cir. 2010). The landlord appeals. *201 The lease "
           "required repairs.", "*202 The tenant withheld rent. *203 We affirm."]
NEUTRAL = ["STATE v. DOE. 2022-NCSC-1. Opinion of the Court.\n¶ 1 The tenant appeals.\n¶ 2 The facts.",
           "¶ 36 We reverse.\n¶ 37 Remanded."]


def test_pin_cites_are_checked_against_the_authority(matter, record, ingest, tmp_path):
    ingest(matter, pdf_pages(STARRED, tmp_path / "roe.pdf"), origin="authority")
    ingest(matter, pdf_pages(NEUTRAL, tmp_path / "doe.pdf"), origin="authority")
    cases = {f.text: f for f in verify_text(matter=matter, text=(
        "Repairs. Roe v. Wade Properties, 610 F.3d 200, 202 (7th Cir. 2010). "
        "Rent. Roe v. Wade Properties, 610 F.3d 200, 702 (7th Cir. 2010). "
        "Appeal. State v. Doe, 2022-NCSC-1, ¶ 36. Remand. State v. Doe, 2022-NCSC-1, ¶ 52. "
        "Roof. Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614, 620 (2013).")) if f.kind == "case_citation"}
    within = cases["Roe v. Wade Properties, 610 F.3d 200, 202 (7th Cir. 2010)"]
    assert within.status == "grounded" and "star pages" in within.message
    outside = cases["Roe v. Wade Properties, 610 F.3d 200, 702 (7th Cir. 2010)"]
    assert outside.status == "ungrounded" and outside.blocking and "702 is outside" in outside.message
    assert cases["State v. Doe, 2022-NCSC-1, ¶ 36"].status == "grounded"
    paragraph = cases["State v. Doe, 2022-NCSC-1, ¶ 52"]
    assert paragraph.status == "ungrounded" and "¶ 1–37" in paragraph.message
    unchecked = cases["Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614, 620 (2013)"]
    assert unchecked.status == "pin_unchecked" and not unchecked.blocking and "not checked" in unchecked.message


def test_a_quotation_with_brackets_printed_in_the_source_matches(matter, opinion):
    text = ("The court said the claims “raise[s] the same questions of law as before.” "
            "Doe v. Acme Holdings LLC, 512 F.3d 441 (9th Cir. 2008).")
    quote = next(f for f in verify_text(matter=matter, text=text) if f.kind == "quotation")
    assert quote.status == "grounded", quote.message
    text = "A landlord “must repair . . . within thirty days.” Doe v. Acme Holdings LLC, 512 F.3d 441 (9th Cir. 2008)."
    quote = next(f for f in verify_text(matter=matter, text=text) if f.kind == "quotation")
    assert quote.status == "grounded", quote.message


def test_a_quotation_cited_to_the_wrong_page_says_where_it_is(matter, record):
    text = "The tenant wrote that “we will not pay the rent for April, because the roof leaks.” SMITH000001."
    quote = next(f for f in verify_text(matter=matter, text=text) if f.kind == "quotation")
    assert quote.status == "ungrounded" and "nor anywhere" not in quote.message
    assert "other pages" in quote.message and [s["bates"] for s in quote.sources] == ["SMITH000002"]


def test_a_quotation_attributed_to_the_wrong_authority_says_where_it_is(matter, opinion):
    text = ("A court held that “the tenant may withhold rent.” Tarrant Regional Water Dist. v. Herrmann, "
            "569 U.S. 614 (2013).")
    quote = next(f for f in verify_text(matter=matter, text=text) if f.kind == "quotation")
    assert quote.status == "ungrounded" and f"Exhibit {opinion.label}" in quote.message
    assert quote.sources[0]["exhibit"] == opinion.pk


def test_an_attorney_sets_cites_as_on_the_exhibit_page(client, matter, record, make_user, attorney):
    from django.urls import reverse

    opinion = record["opinion"]
    url = reverse("matters:exhibit_cites_as", args=[matter.pk, opinion.pk])
    assistant = make_user("bob", "assistant")
    matter.members.add(assistant)
    client.force_login(assistant)
    assert client.post(url, {"cites_as": "Roe v. Smith, 101 F.4th 7"}).status_code == 403
    client.force_login(attorney)
    page = client.get(reverse("matters:exhibit", args=[matter.pk, opinion.pk]))
    assert "569 U.S. 614" in page.content.decode()  # the prefilled value, shown for editing
    client.post(url, {"cites_as": "Roe v. Smith, 101 F.4th 7"})
    opinion.refresh_from_db()
    assert opinion.cites_as == "Roe v. Smith, 101 F.4th 7"


# The first pages of an opinion as a brief's appendix holds them, each headed by its reporter page.
EXCERPT = ["614\nOPINION OF THE COURT\nROE v. LANDLORD CO., 570 U.S. 614 (2013)\nThe tenant appeals.",
           "615\nThe lease required repairs.", "616\nThe landlord made none."]


def test_a_pin_to_a_page_an_excerpt_does_not_hold_cannot_be_checked(matter, record, ingest, tmp_path):
    ingest(matter, pdf_pages(EXCERPT, tmp_path / "excerpt.pdf"), origin="authority")
    cases = {f.text: f for f in verify_text(matter=matter, text=(
        "Repairs. Roe v. Landlord Co., 570 U.S. 614, 615 (2013). None. Roe v. Landlord Co., 570 U.S. 614, 640 "
        "(2013). Before. Roe v. Landlord Co., 570 U.S. 614, 600 (2013).")) if f.kind == "case_citation"}
    assert cases["Roe v. Landlord Co., 570 U.S. 614, 615 (2013)"].status == "grounded"
    beyond = cases["Roe v. Landlord Co., 570 U.S. 614, 640 (2013)"]
    assert beyond.status == "pin_unchecked" and not beyond.blocking
    assert "614–616 only" in beyond.message and "excerpt" in beyond.message
    before = cases["Roe v. Landlord Co., 570 U.S. 614, 600 (2013)"]
    assert before.status == "ungrounded" and "before the opinion's first page" in before.message


SLIP = ["1\n(Slip Opinion) OCTOBER TERM, 2012\nSUPREME COURT OF THE UNITED STATES\nROE v. LANDLORD CO.\nThe tenant "
        "appeals.", "2\nROE v. LANDLORD CO.\nOpinion of the Court\nWe reverse.",
        "3\nCite as: 570 U. S. ____ (2013)\nOpinion of the Court\nSo ordered."]


def test_a_slip_opinion_checks_slip_pins_and_cannot_check_reporter_pins(matter, record, ingest, tmp_path):
    ingest(matter, pdf_pages(SLIP, tmp_path / "slip.pdf"), origin="authority")
    cases = {f.text: f for f in verify_text(matter=matter, text=(
        "Reversed. Roe v. Landlord Co., 570 U.S. ___, slip op. at 2 (2013). "
        "Ordered. Roe v. Landlord Co., 570 U.S. ___, slip op. at 9 (2013). "
        "Held. Roe v. Landlord Co., 570 U.S. 100, 101 (2013)."))
        if f.kind == "case_citation"}
    assert cases["Roe v. Landlord Co., 570 U.S. ___, slip op. at 2 (2013)"].status == "grounded"
    assert cases["Roe v. Landlord Co., 570 U.S. ___, slip op. at 9 (2013)"].status == "ungrounded"
    near = cases["Roe v. Landlord Co., 570 U.S. 100, 101 (2013)"]
    assert near.status == "pin_unchecked" and "slip opinion" in near.message and "not checked" in near.message
    # The slip opinion shows no reporter pages: a far pin cannot be checked, which blocks nothing (issue 27); a pin
    # before the first page is outside the opinion whatever its pagination.
    [far] = [f for f in verify_text(matter=matter, text="Far. Roe v. Landlord Co., 570 U.S. 100, 702 (2013).")
             if f.kind == "case_citation"]
    assert far.status == "pin_unchecked" and "not checked" in far.message and "slip opinion" in far.message
    [before] = [f for f in verify_text(matter=matter, text="Far. Roe v. Landlord Co., 570 U.S. 100, 99 (2013).")
                if f.kind == "case_citation"]
    assert before.status == "ungrounded" and "before the opinion's first page" in before.message
