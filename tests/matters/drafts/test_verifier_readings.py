"""Readings of the shared verifier readers, in true and false twins: a true claim is never blocked, a
fabrication never passes. Joined ranges of numeric dates keep their two readings; words that state no sum
(a weight in pounds, "not one dollar", "the first million dollars") are no amount; "per centum" is a percentage."""

import pytest

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.dates import find_dates
from matters.drafts.verifier.money import find_amounts
from tests.factories import ExhibitFactory
from tests.support.record import by_text

STATEMENT = "STATEMENT. Statement period 03/04/2021 to 05/06/2021. Second period 03/15/2021 to 05/16/2021."


def test_a_joined_range_of_swappable_numeric_dates_has_two_readings():
    [both] = find_dates("from 03/04/2021 to 05/06/2021", "mdy")
    assert both.joined and both.ambiguous
    assert (both.days[0], both.days[-1]) == ("2021-03-04", "2021-05-06")
    assert (both.other_days[0], both.other_days[-1]) == ("2021-04-03", "2021-06-05")
    [one] = find_dates("from 03/15/2021 to 05/16/2021", "mdy")
    assert one.joined and not one.ambiguous and one.other_days == ()
    # The other order reads no range (February 1 to January 12 runs backwards): one reading only.
    [backwards] = find_dates("from 01/02/2021 to 12/01/2021", "mdy")
    assert not backwards.ambiguous
    # A range is written in one order: an end only one order reads (May 20) settles the other end.
    [settled] = find_dates("from 03/04/2021 to 05/20/2021", "mdy")
    assert settled.joined and not settled.ambiguous


@pytest.mark.django_db
def test_a_joined_numeric_range_gets_the_single_date_ambiguity_rule(matter, record):
    label = ExhibitFactory(matter=matter, origin="client", pages=[STATEMENT]).label
    findings = verify_text(matter=matter, text=(
        f"The first period ran from 03/04/2021 to 05/06/2021. Ex. {label} at 1. "
        f"The second ran from 03/15/2021 to 05/16/2021. Ex. {label} at 1. "
        f"A third ran from 03/04/2021 to 05/20/2021. Ex. {label} at 1. "
        f"A fourth ran from 02/04/2021 to 05/06/2021. Ex. {label} at 1."))
    swappable = by_text(findings, "03/04/2021 to 05/06/2021")
    assert swappable.status == "ambiguous" and "April 3, 2021 to June 5, 2021" in swappable.message
    # The true twin, readable one way only, is grounded; the invented end is never passed.
    assert by_text(findings, "03/15/2021 to 05/16/2021").status == "grounded"
    for invented in ("03/04/2021 to 05/20/2021", "02/04/2021 to 05/06/2021"):
        finding = by_text(findings, invented)
        assert finding.status not in ("grounded", "needs_record_cite", "ambiguous") and finding.blocking


@pytest.mark.parametrize("text", [
    "The tenant has not paid one dollar of the rent.", "She never received one dollar.", "It didn't cost one dollar.",
    "The shipment weighed two thousand pounds.", "a ten pound weight", "the first million dollars of the fund",
    "every last five dollars"])
def test_words_that_are_no_sum_of_money_are_not_read_as_one(text):
    assert find_amounts(text) == []


@pytest.mark.parametrize(("text", "key"), [
    ("She paid one dollar.", "USD:1.00"), ("damages of not less than one dollar", "USD:1.00"),
    ("two thousand pounds sterling", "GBP:2000.00"), ("two thousand pounds (£2,000)", "GBP:2000.00"),
    ("GBP two thousand pounds", "GBP:2000.00"), ("paid three hundred dollars", "USD:300.00"),
    ("interest at ten per centum a year", "PCT:10.0000"), ("at 6 per centum", "PCT:6.0000"),
    ("a 50-percent interest", "PCT:50.0000"), ("a twenty-percent share", "PCT:20.0000")])
def test_sums_and_percentages_are_read(text, key):
    assert [a.key for a in find_amounts(text)] == [key]


STATUTE = "SECTION 4. Interest on a judgment shall run at ten per centum a year. A share of 50-percent vests."


@pytest.mark.django_db
def test_per_centum_on_the_record_grounds_a_percentage_and_no_other(matter, record):
    label = ExhibitFactory(matter=matter, origin="client", pages=[STATEMENT, STATEMENT + " " + STATUTE]).label
    draft = (
        f"Interest runs at 10% a year. Ex. {label} at 2. The share is 50 percent. Ex. {label} at 2. "
        f"Interest runs at 12% a year. Ex. {label} at 2. "
        f"The tenant has not paid one dollar of the rent. Ex. {label} at 1. "
        f"The crate weighed two thousand pounds. Ex. {label} at 1. The tenant paid one dollar. Ex. {label} at 1.")
    findings = verify_text(matter=matter, text=draft)
    assert by_text(findings, "10%").status == "grounded"
    assert by_text(findings, "50 percent").status == "grounded"
    assert by_text(findings, "12%").blocking
    amounts = [f.text for f in findings if f.kind == "amount"]
    assert "two thousand pounds" not in amounts and amounts.count("one dollar") == 1
    # Only the payment claimed is read, and the record does not show it.
    paid = by_text(findings, "one dollar")
    assert paid.start == draft.rindex("one dollar") and paid.blocking



# eyecite's guess at a short form's case name reads back over whatever stands before it in the citation sentence;
# each of these citations was taken into the short form (or the supra) after it and left without a finding.
BEFORE_A_SHORT_FORM = [
    ("See Fed. R. Civ. P. 56(a), ", "statutes", "Fed. R. Civ. P. 56(a)"),
    ("The statute controls. N.C. Gen. Stat. § 1A-1 and ", "statutes", "N.C. Gen. Stat. § 1A-1"),
    ("He admitted it. ECF No. 31 at 4, ", "records", "ECF No. 31 at 4"),
    ("He admitted it. Ex. 3 at 2, ", "records", "Ex. 3 at 2"),
    ("He admitted it. Compl. ¶ 12; ", "records", "Compl. ¶ 12"),
    ("He admitted it. Roe Dep. 12:4-9, ", "transcripts", "Roe Dep. 12:4-9"),
]


@pytest.mark.parametrize("short_form", ["Tarrant, 569 U.S. at 622.", "Tarrant, supra, at 622."])
@pytest.mark.parametrize(("before", "reader", "cite"), BEFORE_A_SHORT_FORM)
def test_a_short_forms_case_name_never_takes_the_citation_before_it(before, reader, cite, short_form):
    from matters.drafts.verifier.units import ReadingSettings, read_paragraph

    court = "United States District Court for the District of Massachusetts"
    paragraph = read_paragraph(before + short_form, ReadingSettings("mdy", "en", court, frozenset(), 2026))
    assert [m.text for m in getattr(paragraph, reader)] == [cite]
    [case] = paragraph.cases
    assert case.text == short_form.rstrip(".")


@pytest.mark.parametrize("before", ["See Fed. R. Civ. P. 56(a), ", "See 28 U.S.C. § 1441(b), and ",
                                    "Compl. ¶ 12; see also "])
def test_a_full_citations_case_name_never_takes_the_citation_before_it(before):
    from matters.drafts.verifier.units import ReadingSettings, read_paragraph

    text = before + "Smith v. Jones, 500 F.3d 100, 105 (2d Cir. 2007)."
    paragraph = read_paragraph(text, ReadingSettings("mdy", "en", "", frozenset(), 2026))
    [case] = paragraph.cases
    assert (case.text, case.plaintiff, case.defendant) == (
        "Smith v. Jones, 500 F.3d 100, 105 (2d Cir. 2007)", "Smith", "Jones")
    assert len(paragraph.statutes) + len(paragraph.records) == 1


@pytest.mark.parametrize("before", ["He admitted it. ECF No. 31 at 4, ", "The rule applies. Fed. R. Civ. P. 56, "])
@pytest.mark.parametrize("cite", ["2022-NCSC-1, ¶ 29", "569 U.S. ___, ___ (2023)"])
def test_a_public_domain_or_unpaged_citations_caption_never_takes_the_citation_before_it(before, cite):
    from matters.drafts.verifier.units import ReadingSettings, read_paragraph

    paragraph = read_paragraph(f"{before}Smith v. Doe, {cite}.", ReadingSettings("mdy", "en", "", frozenset(), 2026))
    [case] = paragraph.cases
    assert (case.text, case.plaintiff, case.defendant) == (f"Smith v. Doe, {cite}", "Smith", "Doe")
    assert [m.text for m in [*paragraph.statutes, *paragraph.records]] == [before.split(". ", 1)[1].rstrip(", ")]


def test_an_id_with_a_pin_is_a_cases_even_when_a_statute_follows_it():
    from matters.drafts.verifier.units import ReadingSettings, read_paragraph

    settings = ReadingSettings("mdy", "en", "", frozenset(), 2026)
    [case] = read_paragraph("Id. at 622, Fed. R. Civ. P. 56.", settings).cases
    assert (case.form, case.text) == ("id", "Id. at 622")
    # "Id. § 1028A(c)" after a statute is the statute's short form.
    [short] = read_paragraph("Also 18 U.S.C. § 1028A. Id. § 1028A(c).", settings).cases
    assert short.form == "statute_id"


HEST = "Hest Techs., Inc. v. State ex rel. Perdue, 366 N.C. 289, 289 (2012)"


@pytest.mark.parametrize("parenthetical", [
    f"(quoting {HEST})", f"(internal quotation marks omitted; quoting {HEST})", f"(first quoting {HEST})",
    f"(alteration in original) (quoting {HEST})", f"(relying on {HEST})", f"(cited with approval in {HEST})",
    f"(Quoting {HEST})", f"(quoting Roe v. Doe, 2 S.E.2d 2, 3 (2010)) (relying on {HEST})",
])
def test_id_after_any_parenthetical_of_a_citation_refers_to_the_citation(parenthetical):
    from matters.drafts.verifier.citations import find_case_citations

    text = (f"Chance predominates. Gift Surplus, LLC v. State ex rel. Cooper, 2022-NCSC-1, ¶ 1 {parenthetical}. "
            "The court then considered it. Id. ¶ 29.")
    cases = find_case_citations(text)
    [hest] = [c for c in cases if c.reporter == "N.C."]
    assert hest.in_parenthetical and hest.text.startswith("Hest Techs.")
    [id_] = [c for c in cases if c.form == "id"]
    assert cases[id_.antecedent].plaintiff == "Gift Surplus, LLC"


def test_a_citation_in_a_parenthetical_of_the_texts_own_is_what_id_refers_to():
    from matters.drafts.verifier.citations import find_case_citations

    cases = find_case_citations("The statute (see Smith v. Jones, 500 F.3d 100 (2d Cir. 2007)) applies. Id. at 105.")
    [smith] = [c for c in cases if c.form == "full"]
    assert not smith.in_parenthetical
    [id_] = [c for c in cases if c.form == "id"]
    assert cases[id_.antecedent] is smith


@pytest.mark.parametrize("short_form", ["Tarrant Reg'l Water Dist. v. Herrmann, 569 U.S. at 622",
                                        "Ass'n v. Mfg. Co., 500 F.3d at 5", "Tarrant, 569 U.S. at 622"])
def test_a_short_form_keeps_its_whole_name(short_form):
    from matters.drafts.verifier.citations import find_case_citations

    [case] = find_case_citations(f"The rule is old. See {short_form}.")
    assert case.text == short_form
