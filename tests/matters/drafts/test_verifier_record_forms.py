"""Record cites in every position and form: a Bates-shaped citation sentence with an unknown prefix, party
exhibit cites, docket cites (Doc. 45-2 at 7, ECF No. 31, PageID.412), record documents by paragraph and Id."""

import pytest

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.record import find_bates
from matters.exhibits.services import exhibit_set_cites_as
from tests.support.record import by_text, pdf_pages

pytestmark = pytest.mark.django_db


def test_a_bates_shaped_citation_sentence_with_an_unknown_prefix_is_checked(matter, record):
    findings = verify_text(matter=matter, text="The repairs were refused. RTX3060. The roof leaked. GPU-4090.")
    for text, prefix in (("RTX3060", "RTX"), ("GPU-4090", "GPU-")):
        finding = by_text(findings, text)
        assert finding.kind == "bates_cite" and finding.status == "ungrounded" and finding.blocking
        assert f"prefix “{prefix.rstrip('-')}" in finding.message or f"prefix “{prefix}" in finding.message


def test_party_exhibit_cites_are_read_whole(matter, record):
    findings = verify_text(matter=matter, text="The rent was $1,250.00 (Pl.'s Ex. 1 at 1). Def.'s Ex. 9 at 2.")
    assert by_text(findings, "Pl.'s Ex. 1 at 1").status == "grounded"
    assert by_text(findings, "$1,250.00").status == "grounded"
    assert by_text(findings, "Def.'s Ex. 9 at 2").status == "ungrounded"


FILING = ["Case 1:20-cv-00123 Document 45-2 Filed 03/04/20 Page 1 of 2 PageID #: 411\nDECLARATION OF JANE ROE",
          "Case 1:20-cv-00123 Document 45-2 Filed 03/04/20 Page 2 of 2 PageID #: 412\nThe roof leaked on "
          "April 2, 2021 and nobody came."]


def test_docket_cites_are_checked_against_the_filings(matter, record, ingest, tmp_path):
    ingest(matter, pdf_pages(FILING, tmp_path / "dkt45-2.pdf"), origin="court")
    findings = verify_text(matter=matter, text=(
        "The roof leaked on April 2, 2021. Doc. 45-2 at 2. It leaked on April 2, 2021. ECF No. 45-2, PageID.412. "
        "The landlord agreed. ECF No. 31. See also Doc. 45-2 at 9."))
    assert by_text(findings, "Doc. 45-2 at 2").status == "grounded"
    assert by_text(findings, "ECF No. 45-2, PageID.412").status == "grounded"
    dates = [f for f in findings if f.kind == "date"]
    assert [d.status for d in dates] == ["grounded", "grounded"]
    missing = by_text(findings, "ECF No. 31")
    assert missing.status == "ungrounded" and "docket entry 31" in missing.message
    assert "page 9 does not exist" in by_text(findings, "Doc. 45-2 at 9").message


COMPLAINT = ["COMPLAINT\n1. Plaintiff Jane Roe rents the premises.\n12. The roof leaked in April 2021.",
             "13. Plaintiff wrote to the landlord.\n14. The landlord refused to repair the roof."]


def test_a_record_document_by_paragraph_and_id_after_it(matter, record, ingest, tmp_path, attorney):
    complaint = ingest(matter, pdf_pages(COMPLAINT, tmp_path / "complaint.pdf"), origin="court")
    text = "The roof leaked. Compl. ¶ 12. The landlord refused. Id. ¶ 14. He never came. Id. ¶ 40."
    unset = verify_text(matter=matter, text=text)
    assert by_text(unset, "Compl. ¶ 12").status == "ungrounded" and "cite as “Compl.”" in by_text(
        unset, "Compl. ¶ 12").message
    exhibit_set_cites_as(exhibit=complaint, updated_by=attorney, cites_as="Compl.")
    findings = verify_text(matter=matter, text=text)
    assert not [f for f in findings if f.kind == "case_citation"]  # Id. refers to the complaint, not a case
    assert by_text(findings, "Compl. ¶ 12").status == "grounded"
    id_14 = by_text(findings, "Id. ¶ 14")
    assert id_14.kind == "exhibit_cite" and id_14.status == "grounded" and id_14.sources[0]["page"] == 2
    assert by_text(findings, "Id. ¶ 40").status == "ungrounded"


def test_id_after_an_exhibit_cite_reads_its_own_page(matter, record):
    findings = verify_text(matter=matter,
                           text="Signed on March 3, 2021. Ex. 1 at 1. Rent withheld. Id. at 2. Id. at 5.")
    assert by_text(findings, "Id. at 2").status == "grounded"
    assert "page 5 does not exist" in by_text(findings, "Id. at 5").message


def test_a_bates_number_written_with_a_separator_is_looked_up_as_stamped_too():
    [mention] = find_bates("See SMITH_000123-125.", {"SMITH"})
    assert (mention.first, mention.last) == (123, 125)
    assert mention.forms(124)[0] == "SMITH_000124" and "SMITH000124" in mention.forms(124)
    [spaced] = find_bates("at SMITH 000123", {"SMITH"})
    assert spaced.forms(123) == ["SMITH000123", "SMITH 000123"]
