"""Statutes, regulations and court rules, federal and state: each read with its full subdivision, each given a
finding; what cannot be read is reported as unreadable."""

import pytest

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.statutes import read_statutes
from matters.exhibits.services import exhibit_set_cites_as
from tests.support.record import by_text, pdf_pages

FORMS = [
    ("17 CFR § 240.10b-5", "17 C.F.R. § 240.10b-5", []),
    ("17 C.F.R. § 240.10b-5", "17 C.F.R. § 240.10b-5", []),
    ("735 ILCS 5/2-101", "735 ILCS 5/2-101", []),
    ("735 Ill. Comp. Stat. 5/13-202", "735 Ill. Comp. Stat. 5/13-202", []),
    ("N.J. Stat. Ann. § 2A:14-1", "N.J. Stat. Ann. § 2A:14-1", []),
    ("Cal. Civ. Proc. Code § 340", "Cal. Civ. Proc. Code § 340", []),
    ("Tex. Civ. Prac. & Rem. Code Ann. § 16.003", "Tex. Civ. Prac. & Rem. Code Ann. § 16.003", []),
    # Codes the table names by subject ("Tex. $law_subject Code Ann."), cited without "Ann." as briefs often do.
    ("Tex. Civ. Prac. & Rem. Code § 16.003", "Tex. Civ. Prac. & Rem. Code § 16.003", []),
    ("Tex. Bus. & Com. Code § 17.46(b)", "Tex. Bus. & Com. Code § 17.46", ["b"]),
    ("N.Y. C.P.L.R. 213(2)", "N.Y. C.P.L.R. 213", ["2"]),
    ("La. Civ. Code art. 3492", "La. Civ. Code art. 3492", []),
    ("Fed. R. Civ. P. 12(b)(6)", "Fed. R. Civ. P. 12", ["b", "6"]),
    ("Fed. R. Evid. 801(d)(2)(D)", "Fed. R. Evid. 801", ["d", "2", "D"]),
    ("Fed. R. App. P. 4(a)(1)(A)", "Fed. R. App. P. 4", ["a", "1", "A"]),
    ("N.D. Ill. L.R. 7.1", "N.D. Ill. L.R. 7.1", []),
    ("Mass. Gen. Laws ch. 93A, § 2", "Mass. Gen. Laws ch. 93A, § 2", []),
    ("Fla. Stat. § 95.11(3)(a)", "Fla. Stat. § 95.11", ["3", "a"]),
    ("Federal Rule of Civil Procedure 56(a)", "Fed. R. Civ. P. 56", ["a"]),
]


@pytest.mark.parametrize(("written", "cite", "subsections"), FORMS)
def test_each_form_is_read_whole_with_its_subdivisions(written, cite, subsections):
    text = f"The claim is barred. See {written}. The court agreed."
    found, unreadable = read_statutes(text)
    assert unreadable == []
    [mention] = found
    assert text[mention.start:mention.end] == written
    assert (mention.cite, mention.subsections) == (cite, subsections)


@pytest.mark.django_db
def test_every_statute_and_rule_gets_a_finding(matter, record):
    text = "Barred. " + " ".join(f"See {written}." for written, _, _ in FORMS)
    findings = [f for f in verify_text(matter=matter, text=text) if f.kind == "statute_citation"]
    assert [f.text for f in findings] == [written for written, _, _ in FORMS]
    assert {f.status for f in findings} == {"unverified_authority"}
    assert "12(b)(6)" in by_text(findings, "Fed. R. Civ. P. 12(b)(6)").message


@pytest.mark.django_db
def test_a_section_sign_with_no_code_is_unreadable_and_blocks(matter, record):
    findings = verify_text(matter=matter, text="The claim fails under § 12(b). Also 18 U.S.C. § 1028A; see § 1028A(c).")
    lone = by_text(findings, "§ 12(b)")
    assert lone.status == "unreadable" and lone.blocking and "names no code" in lone.message
    assert by_text(findings, "§ 1028A(c)").status == "grounded"  # short form of the code cited before it
    again = verify_text(matter=matter, text="Also 18 U.S.C. § 1028A. Identity theft is separate. Id. § 1028A(c).")
    assert by_text(again, "§ 1028A(c)").status == "grounded"
    assert not [f for f in again if f.kind == "case_citation"]  # the Id. is the statute's, not a case's


def test_a_rule_named_without_its_set_reads_the_set_named_before_it_or_is_unreadable(matter, record):
    # The matter names no court: nothing says which rules a bare "Rule 12(b)(6)" means.
    matter.court = ""
    lone = by_text(verify_text(matter=matter, text="The complaint fails under Rule 12(b)(6)."), "Rule 12(b)(6)")
    assert lone.status == "unreadable" and lone.blocking and "names no set of rules" in lone.message
    findings = verify_text(matter=matter, text="Fed. R. Civ. P. 12(b)(6) applies. Rule 12(c) does too. "
                                               "Fed. R. Evid. 801(d)(2). Rule 803(6) as well.")
    later = by_text(findings, "Rule 12(c)")
    assert later.kind == "statute_citation" and "Fed. R. Civ. P. 12(c)" in later.message
    assert "Fed. R. Evid. 803(6)" in by_text(findings, "Rule 803(6)").message


@pytest.mark.django_db
def test_rules_are_grounded_by_the_rules_themselves(matter, record, ingest, tmp_path, attorney):
    rules = ingest(matter, pdf_pages(["FEDERAL RULES OF CIVIL PROCEDURE\nRule 12. Defenses and Objections\n"
                                      "(b) How to Present Defenses. (6) failure to state a claim"],
                                     tmp_path / "frcp.pdf"), origin="authority")
    text = "Dismissal is proper. Fed. R. Civ. P. 12(b)(6). Summary judgment. Fed. R. Civ. P. 56(a)."
    findings = verify_text(matter=matter, text=text)
    assert by_text(findings, "Fed. R. Civ. P. 12(b)(6)").status == "grounded"
    assert by_text(findings, "Fed. R. Civ. P. 56(a)").status == "unverified_authority"
    exhibit_set_cites_as(exhibit=rules, updated_by=attorney, cites_as="Fed. R. Civ. P. 12")
    assert by_text(verify_text(matter=matter, text=text), "Fed. R. Civ. P. 12(b)(6)").status == "grounded"


def test_a_texas_code_cited_without_ann_is_grounded_by_the_code_and_a_wrong_section_is_not(
        matter, record, ingest, tmp_path, attorney):
    """True and false twins: the stored code prints § 16.003's words; a brief citing it as "Code § 16.003" (no
    "Ann.") is grounded, one citing § 16.004 for the same words is not."""
    code = ingest(matter, pdf_pages(["CIVIL PRACTICE AND REMEDIES CODE\nSec. 16.003. TWO-YEAR LIMITATIONS PERIOD.\n"
                                     "(a) a person must bring suit for personal injury not later than two years"],
                                    tmp_path / "tex.pdf"), origin="authority")
    exhibit_set_cites_as(exhibit=code, updated_by=attorney, cites_as="Tex. Civ. Prac. & Rem. Code Ann. § 16.003")
    findings = verify_text(matter=matter, text="The claim is barred. Tex. Civ. Prac. & Rem. Code § 16.003(a).")
    assert by_text(findings, "Tex. Civ. Prac. & Rem. Code § 16.003(a)").status == "grounded"
    wrong = verify_text(matter=matter, text="The claim is barred. Tex. Civ. Prac. & Rem. Code § 16.004(a).")
    assert by_text(wrong, "Tex. Civ. Prac. & Rem. Code § 16.004(a)").status != "grounded"


@pytest.mark.parametrize(("court", "rules"), [
    ("United States District Court for the District of Maine", "Fed. R. Civ. P."),
    ("D. Mass.", "Fed. R. Civ. P."),
    ("U.S. Court of Appeals for the First Circuit", "Fed. R. App. P."),
    ("Fourth Circuit", "Fed. R. App. P."),
    ("United States Bankruptcy Court for the Western District of Washington", "Fed. R. Bankr. P."),
    # A state's courts name circuits and districts too; a bare "Rule 56" before them is not a federal rule.
    ("Louisiana Fourth Circuit Court of Appeal", None),
    ("Florida First District Court of Appeal", None),
    ("D.C. Superior Court", None),
    ("Supreme Court of Virginia", None),
])
def test_the_set_of_rules_a_court_makes_plain(court, rules):
    from matters.drafts.verifier.statutes import rules_of_court

    found = rules_of_court(court)
    assert (found[0] if found else None) == rules
