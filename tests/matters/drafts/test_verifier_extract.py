"""What the verifier reads out of a draft, with offsets: citations, record cites, dates, amounts, quotations."""

from decimal import Decimal

from matters.drafts.verifier.citations import find_case_citations
from matters.drafts.verifier.dates import find_dates
from matters.drafts.verifier.money import find_amounts
from matters.drafts.verifier.quotes import find_quotations, prepare
from matters.drafts.verifier.record import find_bates, find_exhibit_cites
from matters.drafts.verifier.statutes import find_statutes
from matters.drafts.verifier.text import flatten, match_words, sentences


def test_statutes_keep_their_full_section_numbers():
    text = "Under 18 U.S.C. § 1028A, 17 C.F.R. § 240.10b-5 and 50 U.S.C. 1701, and 15 U.S.C. §§ 78j(b), 78t(a)."
    found = [(s.title, s.code, s.section, s.subsections, text[s.start:s.end]) for s in find_statutes(text)]
    assert found == [
        ("18", "U.S.C.", "1028A", [], "18 U.S.C. § 1028A"),
        ("17", "C.F.R.", "240.10b-5", [], "17 C.F.R. § 240.10b-5"),
        ("50", "U.S.C.", "1701", [], "50 U.S.C. 1701"),
        ("15", "U.S.C.", "78j", ["b"], "15 U.S.C. §§ 78j(b)"),
        ("15", "U.S.C.", "78t", ["a"], "78t(a)"),
    ]


def test_a_citation_broken_across_lines_reads_as_one_with_its_pin_cite_and_year():
    text = "See Doe v. Roe, 728 F.2d 911,\n915 (7th Cir. 1984)."
    [case] = find_case_citations(flatten(text))
    assert (case.volume, case.reporter, case.page, case.pin_cite, case.year) == ("728", "F.2d", "911", "915", 1984)
    assert (case.plaintiff, case.defendant) == ("Doe", "Roe")
    assert text[case.start:case.end] == "Doe v. Roe, 728 F.2d 911,\n915 (7th Cir. 1984)"


def test_each_citation_keeps_its_own_year_and_short_forms_resolve_to_their_case():
    text = ("Smith v. Jones, 566 U.S. 1, 5 (2012). Id. at 7. Roe v. Wade, 410 U.S. 113 (1973). "
            "Smith, 566 U.S. at 9. See Jones, supra, at 3.")
    cases = find_case_citations(flatten(text))
    assert [(c.form, c.year) for c in cases] == [("full", 2012), ("id", None), ("full", 1973), ("short", None),
                                                 ("supra", None)]
    assert [c.antecedent for c in cases] == [None, 0, None, 0, 0]


def test_unknown_reporters_and_impossible_years_are_problems():
    text = "Compare 45 F.9th 12 (5th Cir. 2019), with Foo v. Bar, 100 F.3d 5 (2d Cir. 1950), and 410 U.S. 113 (1973)."
    cases = find_case_citations(flatten(text))
    problems = {c.text: c.problem for c in cases}
    assert "F.9th" in problems["45 F.9th 12 (5th Cir. 2019)"]
    assert "1950" in next(p for t, p in problems.items() if "100 F.3d 5" in t)
    assert next(p for t, p in problems.items() if "410 U.S. 113" in t) == ""


def test_bates_numbers_and_ranges_in_every_form():
    text = ("See SMITH000123; SMITH000123-125, SMITH000123–SMITH000125 and SMITH 000130 through SMITH 000131. "
            "(See RTX3090.) The RTX3090 card. (ECF 1234).")
    found = [(b.text, b.first, b.last, b.known_prefix) for b in find_bates(text, {"SMITH"})]
    assert found == [
        ("SMITH000123", 123, 123, True),
        ("SMITH000123-125", 123, 125, True),
        ("SMITH000123–SMITH000125", 123, 125, True),
        ("SMITH 000130 through SMITH 000131", 130, 131, True),
        ("RTX3090", 3090, 3090, False),  # where a record cite goes: read, so it can be reported
    ]


def test_exhibit_cites_with_pages():
    text = "Ex. 3 at 2; Exhibit C, p. 4; Exhibits 12 at 3-4; Ex. A."
    assert [(e.label, e.first_page, e.last_page) for e in find_exhibit_cites(text)] == [
        ("3", 2, 2), ("C", 4, 4), ("12", 3, 4), ("A", None, None)]


def test_dates_in_the_usual_forms_and_section_numbers_are_not_dates():
    text = ("March 3, 2021; 3 March 2021; 2021-03-03; 03/03/2021; Mar. 3rd, 2021. See §§ 2.3, 4.1 and "
            "§ 12-10-2019 and No. 11-12-2013 and version 1.2.21.")
    assert [d.readings for d in find_dates(text)] == [("2021-03-03",)] * 5


def test_a_numeric_date_with_two_readings_is_read_in_the_matters_order():
    [mdy] = find_dates("on 03/04/2021", "mdy")
    [dmy] = find_dates("on 03/04/2021", "dmy")
    assert mdy.readings == ("2021-03-04", "2021-04-03") and mdy.ambiguous
    assert dmy.readings == ("2021-04-03", "2021-03-04")
    [one] = find_dates("on 13/04/2021", "mdy")
    assert one.readings == ("2021-04-13",) and not one.ambiguous


def test_money_forms_and_written_amounts():
    text = "$1,250.00, USD 1,250, $1.2 million, five hundred dollars ($500) and six hundred dollars ($500)"
    amounts = find_amounts(text)
    assert [(a.currency, a.value) for a in amounts] == [
        ("USD", Decimal("1250.00")), ("USD", Decimal("1250.00")), ("USD", Decimal("1200000.00")),
        ("USD", Decimal("500.00")), ("USD", Decimal("500.00"))]
    assert [a.words_disagree for a in amounts] == [False, False, False, False, True]
    assert amounts[3].text == "five hundred dollars ($500)"


def test_continental_amounts_only_where_the_matter_writes_them():
    text = "Der Betrag von 1.250,00 € wurde gezahlt."
    assert [(a.currency, a.value) for a in find_amounts(text, "de")] == [("EUR", Decimal("1250.00"))]
    assert find_amounts(text, "en") == []


def test_quotations_straight_and_curly():
    text = 'He said “the roof leaks” and "we will not pay" (emphasis added).'
    assert [q.inner for q in find_quotations(text)] == ["the roof leaks", "we will not pay"]


def test_proper_alterations_match_and_a_changed_word_does_not():
    source = match_words("The tenant wrote: We will not pay the rent for April, because the roof leaks badly.")
    assert prepare("[w]e will not pay the rent . . . because the roof leaks").find(source)
    assert prepare("the tenant wrote: [w]e will not pay [sic] the rent").find(source)
    assert prepare("[the lessee] wrote: we will not pay").find(source)
    assert prepare("We will not pay the rent for May").find(source) is None
    assert prepare("because the roof leaks ... the rent for April").find(source) is None  # order matters


def test_sentences_do_not_break_at_legal_abbreviations():
    text = "See Smith v. Jones, 566 U.S. 1 (2012). Id. at 7. The rent was due. SMITH000001."
    assert [text[s.start:s.end] for s in sentences(text)] == [
        "See Smith v. Jones, 566 U.S. 1 (2012).", "Id. at 7.", "The rent was due.", "SMITH000001."]


def test_a_law_review_citation_is_read_as_an_authority():
    [article] = find_case_citations(flatten("See 100 Harv. L. Rev. 1, 5 (1987)."))
    assert (article.form, article.reporter_cite, article.pin_cite, article.year) == ("full", "100 Harv. L. Rev. 1",
                                                                                   "5", 1987)
