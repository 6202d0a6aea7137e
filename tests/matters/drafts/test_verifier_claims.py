"""The team's set of correct and fabricated claims: true and false twins of every kind that has blocked true
claims or let a fabrication through (issue 27), written from real corpus pages, with the page text that grounds
each true one quoted beside it. Every true draft must pass with a finding for its claim, every false one must
block; the rates over all drafts are printed (``-s``) and held to the targets: false blocks at most 2%, every
fabrication caught."""

import pytest

from matters.drafts.services import draft_approve, draft_create, draft_verify
from matters.drafts.verifier.check import verify_text
from matters.models import AuditEntry

pytestmark = pytest.mark.django_db

DISTRICT = "United States District Court for the District of Massachusetts"
APPEALS = "United States Court of Appeals for the Eighth Circuit"


# (kind, draft, the claim that must have a finding, court). Each draft is verified alone. ``{G}`` etc. are the
# record's exhibit labels. The page text grounding each true claim is quoted in the comment above it.
TRUE = [
    # Ex. G pp. 7-8 (nc-gift-surplus), the running head "GIFT SURPLUS, LLC V. STATE EX REL. COOPER / 2022-NCSC-1 /
    # Opinion of the Court" between the halves: "held that “the games at issue do not amount to games whose
    # outcomes are determined \n" | "by skill and dexterity, but rather, chance.” Id. at 13"
    ("page break", "Judge Bryant reasoned that “the games at issue do not amount to games whose outcomes are "
                   "determined by skill and dexterity, but rather, chance.” Ex. {G} at 7–8.", "“the games"),
    ("page break", "Judge Bryant reasoned that “the games at issue do not amount to games whose outcomes are "
                   "determined by skill and dexterity, but rather, chance.” Ex. {G} at 7, 8.", "“the games"),
    ("page break", "Judge Bryant reasoned that “the games at issue do not amount to games whose outcomes are "
                   "determined by skill and dexterity, but rather, chance.” Ex. {G} at 7.", "“the games"),
    # Ex. G pp. 2-3: "The Court will inquire, not into the \n" | (running head) "name, but into the game, however
    # skillfully disguised, in \norder to ascertain if it is prohibited."
    ("page break", "As the court put it, “[t]he Court will inquire, not into the name, but into the game, however "
                   "skillfully disguised, in order to ascertain if it is prohibited.” Ex. {G} at 2–3.", "“[t]he"),
    # Ex. G pp. 4-5, footnote 1 and the running head between: "necessary to fill orders as a drop shipping
    # business. \n 1 A fuller history of the General Assembly’s efforts ... at 289–92." | "¶ 5 In its business
    # arrangement with Sandhill, Gift Surplus designs sweepstakes \nkiosks"
    ("page break", "Gift Surplus buys products “as necessary to fill orders as a drop shipping business. In its "
                   "business arrangement with Sandhill, Gift Surplus designs sweepstakes kiosks.” Ex. {G} at 4–5.",
     "“as necessary"),
    # Ex. C pp. 1-2 (ca5 pp. 2-3), the CM/ECF footer, the running head and the page number between the halves:
    # "filled out the \n2014 Personal Enrollment Form, requesting supplemental life insurance in \nCase: 21-50498
    # Document: 00516242060     Page: 2     Date Filed: 03/16/2022" | "No. 21-50498 \n3 \nthe amount of $200,000
    # and dependent life insurance on behalf of her \nhusband in the amount of $100,000."
    ("page break", "St. Pierre “filled out the 2014 Personal Enrollment Form, requesting supplemental life "
                   "insurance in the amount of $200,000 and dependent life insurance on behalf of her husband.” "
                   "Ex. {C} at 1–2.", "“filled out"),
    ("page break", "St. Pierre “filled out the 2014 Personal Enrollment Form, requesting supplemental life "
                   "insurance in the amount of $200,000 and dependent life insurance on behalf of her husband.” "
                   "Ex. {C} at 1.", "“filled out"),
    # Ex. I (the invoice): "Summary for Aug 1, 2024 - Aug 31, 2024"
    ("range", "The invoice covers August 1 through August 31, 2024. Ex. {I} at 1.", "August 1 through"),
    ("range", "The invoice covers the period from 08/01/2024 to 08/31/2024. Ex. {I} at 1.", "08/01/2024"),
    # Ex. G p. 1: "Filed 11 February 2022" and "Heard in the Supreme Court on 23 March 2021": a period's start and
    # end, each on the page, the days between not stated.
    ("range", "The appeal was before the Supreme Court from 23 March 2021 to 11 February 2022. Ex. {G} at 1.",
     "23 March 2021"),
    # Ex. I: "Total in USD\n$7.20"
    ("amount in words", "The invoice totals seven dollars and twenty cents. Ex. {I} at 1.", "seven dollars"),
    ("amount in words", "The invoice totals seven dollars and twenty cents ($7.20). Ex. {I} at 1.", "seven dollars"),
    # Ex. C (ca5 p. 2): "a guaranteed issue \namount of $200,000 for its voluntary life insurance policies"
    ("amount in words", "Standard guaranteed an issue amount of two hundred thousand dollars. Ex. {C} at 1.",
     "two hundred thousand dollars"),
    # Ex. D: "Summary for 01/08/2024 - 31/08/2024": the end only day first reads settles the pair as August.
    ("day-first range", "The statement covers August 1 through August 31, 2024. Ex. {D} at 1.", "August 1"),
    ("day-first range", "The statement covers 1 August 2024 to 31 August 2024. Ex. {D} at 1.", "1 August"),
    # Ex. D: "Prior period 03/04/2024 to 05/06/2024", read both ways; this matter reads month first.
    ("day-first range", "The prior period ran from March 4, 2024 to May 6, 2024. Ex. {D} at 1.", "March 4"),
    # Ex. Y: "Dated: April 15, 2024 / The arbitration hearing will be held from May 1 through May 3": the
    # period takes the page's year.
    ("yearless range", "The hearing was held from May 1 through May 3, 2024. Ex. {Y} at 1.", "May 1"),
    ("yearless range", "The hearing was under way on May 2, 2024. Ex. {Y} at 1.", "May 2"),
    # Ex. G p. 5: "On 75% of turns, the player will never be able to play for the largest prize of $2400"
    ("percentage", "On 75% of turns the player can never play for the largest prize. Ex. {G} at 5.", "75%"),
    ("percentage", "On seventy-five percent of turns the player can never play for the largest prize. "
                   "Ex. {G} at 5.", "seventy-five percent"),
    # Ex. I: "Tax (0%)"
    ("percentage", "The invoice charged tax at 0%. Ex. {I} at 1.", "0%"),
    # Ex. N: "Interest accrues on the unpaid principal at two and one-half percent (2 1/2%) per year. A late
    # charge of one-half percent of the unpaid balance applies"
    ("fractional percentage", "The note bears interest at two and one-half percent a year. Ex. {N} at 1.",
     "two and one-half"),
    ("fractional percentage", "The note bears interest at 2.5% a year. Ex. {N} at 1.", "2.5%"),
    ("fractional percentage", "The note bears interest at 2 1/2% a year. Ex. {N} at 1.", "2 1/2%"),
    ("fractional percentage", "A late charge of one-half percent applies. Ex. {N} at 1.", "one-half percent"),
    ("fractional percentage", "A late charge of one-half of one percent applies. Ex. {N} at 1.", "one-half of"),
    # The Tarrant slip opinion ("Cite as: 569 U. S. ____ (2013)") has only its own pages 1-30: a pin far into the
    # reporter's pages cannot be checked against it, which blocks nothing.
    ("pin cite", "The Compact allocates water among the States. Tarrant Regional Water Dist. v. Herrmann, "
                 "569 U.S. 614, 690 (2013).", "Tarrant"),
    ("pin cite", "The Compact allocates water among the States. Tarrant Regional Water Dist. v. Herrmann, "
                 "569 U.S. 614, 620 (2013). The States negotiated it. Id. at 631.", "Id. at 631"),
    # The Gift Surplus opinion prints "2022-NCSC-1" on every page and numbers its paragraphs "¶ 1" ... "¶ 41";
    # ¶ 29: "We first consider the change plaintiffs call a “ ‘winner-every-time’ feature.”"
    ("neutral citation", "The court first considered the winner-every-time feature. Gift Surplus, LLC v. State ex "
                         "rel. Cooper, 2022-NCSC-1, ¶ 29.", "Gift Surplus"),
    ("neutral citation", "The court first considered the winner-every-time feature. Gift Surplus, LLC v. State ex "
                         "rel. Cooper, 2022-NCSC-1, ¶ 29. It then turned to double nudging. Id. ¶ 32.", "Id. ¶ 32"),
    # "supra" after a public-domain citation refers to it by party name (¶ 31 is a paragraph of the opinion).
    ("neutral citation", "The court first considered the winner-every-time feature. Gift Surplus, LLC v. State ex "
                         "rel. Cooper, 2022-NCSC-1, ¶ 29.\n\nIt then turned to the kiosks. Gift Surplus, supra, "
                         "¶ 31.", "Surplus, supra"),
    # ¶ 1 (p. 2) ends with the block quote of Hest Techs. (quoting State v. Lipkin); ¶ 29 as above.
    ("Id. after a parenthetical", "Chance predominates in the new game. Gift Surplus, LLC v. State ex rel. Cooper, "
                                  "2022-NCSC-1, ¶ 1 (quoting Hest Techs., Inc. v. State ex rel. Perdue, 366 N.C. 289, "
                                  "289 (2012)). The court then considered the new feature. Id. ¶ 29.", "Id. ¶ 29"),
    ("Id. after a parenthetical", "Chance predominates in the new game. Gift Surplus, LLC v. State ex rel. Cooper, "
                                  "2022-NCSC-1, ¶ 1 (citing Hest Techs., Inc. v. State ex rel. Perdue, 366 N.C. 289, "
                                  "289 (2012)). The court then considered the new feature. Id. ¶ 29.", "Id. ¶ 29"),
    # The forms a parenthetical's signal takes after other words, or with none (an explanatory parenthetical).
    ("Id. after a parenthetical", "Chance predominates in the new game. Gift Surplus, LLC v. State ex rel. Cooper, "
                                  "2022-NCSC-1, ¶ 1 (internal quotation marks omitted; quoting Hest Techs., Inc. v. "
                                  "State ex rel. Perdue, 366 N.C. 289, 289 (2012)). The court then considered the "
                                  "new feature. Id. ¶ 29.", "Id. ¶ 29"),
    ("Id. after a parenthetical", "Chance predominates in the new game. Gift Surplus, LLC v. State ex rel. Cooper, "
                                  "2022-NCSC-1, ¶ 1 (relying on Hest Techs., Inc. v. State ex rel. Perdue, 366 N.C. "
                                  "289, 289 (2012)). The court then considered the new feature. Id. ¶ 29.",
     "Id. ¶ 29"),
    # Ex. G p. 5: "Sandhill places the \nkiosks into operation in convenience stores and retail establishments
    # across North \nCarolina. The establishments are predominantly patronized by low-income \ncustomers, who Gift
    # Surplus has identified as its target demographic."
    ("quotation with its cite", "The opinion found that “Sandhill places the kiosks into operation in convenience "
                                "stores and retail establishments across North Carolina. The establishments are "
                                "predominantly patronized by low-income customers.” Ex. {G} at 5.", "“Sandhill"),
    # Ex. X (ca8 letter): "Dr. Xiang submits this letter under Federal Rule of \nAppellate Procedure 28(j) to
    # respond to the government’s \nsupplemental notice"
    ("citation inside a record quotation", "The letter says Dr. Xiang “submits this letter under Federal Rule of "
                                           "Appellate Procedure 28(j) to respond to the government’s supplemental "
                                           "notice.” Ex. {X} at 1.", "“submits"),
    # Ex. G p. 9: "defendants abandoned the argument \non appeal under Appellate Rule 28(b)(6)"
    ("citation inside a record quotation", "The plaintiffs argued that defendants “abandoned the argument on appeal "
                                           "under Appellate Rule 28(b)(6).” Ex. {G} at 9.", "“abandoned"),
    # A district court's matter: a bare "Rule 56(a)" is the Federal Rules of Civil Procedure's (the authority
    # "Rule 56. Summary Judgment (a) Motion for Summary Judgment").
    ("rule of the matter's court", "Summary judgment is proper on this record. Rule 56(a).", "Rule 56(a)",
     DISTRICT),
    # A court of appeals' matter: "Rule 28(j)" is the Federal Rules of Appellate Procedure's.
    ("rule of the matter's court", "Dr. Xiang may answer a supplemental notice by letter. Rule 28(j).",
     "Rule 28(j)", APPEALS),
    # A rule cited just before a short form (the authority "Rule 56. Summary Judgment (a) Motion for Summary
    # Judgment or Partial Summary Judgment."): the short form's case name once reached back over it, and the rule
    # got no finding.
    ("citation before a short form", "The Compact allocates water among the States. Tarrant Regional Water Dist. "
                                     "v. Herrmann, 569 U.S. 614, 620 (2013). Summary judgment is proper. See Fed. R. "
                                     "Civ. P. 56(a), Tarrant, 569 U.S. at 622.", "Fed. R. Civ. P. 56(a)"),
    # A real reporter beside a record cite in one sentence (Ex. I: "Total in USD\n$7.20"; the Tarrant slip opinion
    # as above): neither is taken for a citation of an unknown reporter.
    ("citation-shaped string", "The invoice totals $7.20, Ex. {I} at 1, and the Compact allocates water among the "
                               "States, Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614, 620 (2013).",
     "Tarrant"),
]

FALSE = [
    ("page break", "Judge Bryant reasoned that “the games at issue do not amount to games whose outcomes are "
                   "determined by skill and dexterity, and not by chance.” Ex. {G} at 7–8."),
    ("page break", "Judge Bryant reasoned that “the games at issue do not amount to games whose outcomes are "
                   "determined by skill and dexterity, but rather, chance.” Ex. {G} at 6."),
    ("page break", "As the court put it, “[t]he Court will inquire, not into the name, but into the players, "
                   "however skillfully disguised, in order to ascertain if it is prohibited.” Ex. {G} at 2–3."),
    ("page break", "Gift Surplus buys products “as necessary to fill orders as a drop shipping business. In its "
                   "business arrangement with Sandhill, Gift Surplus builds sweepstakes kiosks.” Ex. {G} at 4–5."),
    ("page break", "St. Pierre “filled out the 2014 Personal Enrollment Form, requesting supplemental life "
                   "insurance in the amount of $200,000 and dependent life insurance on behalf of her daughter.” "
                   "Ex. {C} at 1–2."),
    ("range", "The invoice covers August 1 through September 30, 2024. Ex. {I} at 1."),
    ("range", "The invoice covers the period from 07/01/2024 to 07/31/2024. Ex. {I} at 1."),
    ("range", "The appeal was before the Supreme Court from 23 March 2021 to 12 February 2022. Ex. {G} at 1."),
    # A day-first range once read as January 8 to August 31 grounded every invented day between.
    ("day-first range", "The statement covers January 8 through August 31, 2024. Ex. {D} at 1."),
    ("day-first range", "The statement was issued on January 20, 2024. Ex. {D} at 1."),
    ("day-first range", "The prior period ran from April 3, 2024 to June 5, 2024. Ex. {D} at 1."),
    ("yearless range", "The hearing was held from May 1 through May 7, 2024. Ex. {Y} at 1."),
    ("yearless range", "The hearing was held from May 1 through May 3, 2023. Ex. {Y} at 1."),
    ("yearless range", "The panel heard closing arguments on May 9, 2024. Ex. {Y} at 1."),
    ("amount in words", "The invoice totals seven dollars and fifty cents. Ex. {I} at 1."),
    ("amount in words", "The invoice totals seven dollars and twenty cents ($7.50). Ex. {I} at 1."),
    ("amount in words", "Standard guaranteed an issue amount of three hundred thousand dollars. Ex. {C} at 1."),
    ("amount in words", "Standard guaranteed an issue amount of three hundred thousand dollars."),
    ("percentage", "On 60% of turns the player can never play for the largest prize. Ex. {G} at 5."),
    ("percentage", "On sixty percent of turns the player can never play for the largest prize. Ex. {G} at 5."),
    ("percentage", "The invoice charged tax at 8%. Ex. {I} at 1."),
    ("fractional percentage", "The note bears interest at three and one-half percent a year. Ex. {N} at 1."),
    ("fractional percentage", "The note bears interest at 2% a year. Ex. {N} at 1."),
    ("fractional percentage", "A late charge of one-quarter percent applies. Ex. {N} at 1."),
    ("fractional percentage", "A late charge of one percent applies. Ex. {N} at 1."),
    ("fractional percentage", "The note bears interest at four and one-half percent a year."),
    ("pin cite", "The Compact allocates water among the States. Tarrant Regional Water Dist. v. Herrmann, "
                 "569 U.S. 614, 600 (2013)."),
    ("pin cite", "The Compact allocates water among the States. Tarrant Regional Water Dist. v. Herrmann, "
                 "569 U.S. 614, 620 (2013). The States negotiated it. Id. at 610."),
    ("neutral citation", "The court first considered the winner-every-time feature. Gift Surplus, LLC v. State ex "
                         "rel. Cooper, 2022-NCSC-1, ¶ 99."),
    ("neutral citation", "The court first considered the winner-every-time feature. Gift Surplus, LLC v. State ex "
                         "rel. Cooper, 2022-NCSC-1, ¶ 29. It then turned to double nudging. Id. ¶ 97."),
    ("neutral citation", "The court first considered the winner-every-time feature. Gift Surplus, LLC v. State ex "
                         "rel. Cooper, 2022-NCSC-1, ¶ 29.\n\nIt then turned to the kiosks. Gift Surplus, supra, "
                         "¶ 96."),
    ("neutral citation", "The court first considered the winner-every-time feature. Gift Surplus, LLC v. State ex "
                         "rel. Cooper, 2022-NCSC-1, ¶ 29.\n\nIt then turned to the kiosks. Sweepstakes Co., supra, "
                         "¶ 31."),
    ("Id. after a parenthetical", "Chance predominates in the new game. Gift Surplus, LLC v. State ex rel. Cooper, "
                                  "2022-NCSC-1, ¶ 1 (quoting Hest Techs., Inc. v. State ex rel. Perdue, 366 N.C. 289, "
                                  "289 (2012)). The court then considered the new feature. Id. ¶ 98."),
    ("Id. after a parenthetical", "Chance predominates in the new game. Gift Surplus, LLC v. State ex rel. Cooper, "
                                  "2022-NCSC-1, ¶ 1 (internal quotation marks omitted; quoting Hest Techs., Inc. v. "
                                  "State ex rel. Perdue, 366 N.C. 289, 289 (2012)). The court then considered the "
                                  "new feature. Id. ¶ 98."),
    ("quotation with its cite", "The opinion found that “Sandhill places the kiosks into operation in convenience "
                                "stores and retail establishments across North Carolina. The establishments are "
                                "predominantly patronized by high-income customers.” Ex. {G} at 5."),
    ("citation inside a record quotation", "The letter says Dr. Xiang “submits this letter under Federal Rule of "
                                           "Appellate Procedure 28(k) to respond to the government’s supplemental "
                                           "notice.” Ex. {X} at 1."),
    ("citation inside a record quotation", "The plaintiffs argued that defendants “abandoned the argument on appeal "
                                           "under Appellate Rule 28(b)(7).” Ex. {G} at 9."),
    ("rule of the matter's court", "Summary judgment is proper on this record. Rule 57(a).", None, DISTRICT),
    ("citation before a short form", "The Compact allocates water among the States. Tarrant Regional Water Dist. "
                                     "v. Herrmann, 569 U.S. 614, 620 (2013). Summary judgment is proper. See Fed. R. "
                                     "Civ. P. 57(a), Tarrant, 569 U.S. at 622."),
    # A reporter no reader knows, written as a word (no period), in an attorney's own draft: alone, beside a record
    # cite, with a pin cite, and as two words.
    ("citation-shaped string", "The rule is settled. Smith v. Jones, 346 Fictitious 12 (2d Cir. 2019)."),
    ("citation-shaped string", "The invoice totals $7.20. Ex. {I} at 1; Smith v. Jones, 346 Fictitious 12 (2d Cir. "
                               "2019)."),
    ("citation-shaped string", "The rule is settled. See 346 Fictitious 12, 14 (2d Cir. 2019)."),
    ("citation-shaped string", "The rule is settled. Smith v. Jones, 346 Federal Cases Reporter 12 (D. Mass. "
                               "2019)."),
    # Right after a case name, with no parenthetical: as a word, and abbreviated.
    ("citation-shaped string", "The rule is settled. Smith v. Jones, 346 Fictitious 12."),
    ("citation-shaped string", "The rule is settled. Smith v. Jones, 346 Fict. Rep. 12, 14."),
]


def run(matter, labels, draft: str, court: str = DISTRICT):
    matter.court = court
    text = draft.format(**labels)
    return text, verify_text(matter=matter, text=text)


def test_true_claims_pass_and_fabrications_block(claims_matter, matter):
    false_blocks, silent, missed = [], [], []
    for kind, draft, claim, *court in TRUE:
        text, findings = run(matter, claims_matter, draft, *court)
        blocking = [(f.text, f.message) for f in findings if f.blocking]
        if blocking:
            false_blocks.append((kind, text, blocking))
        start = text.index(claim)
        if not any(f.start <= start < f.end for f in findings):
            silent.append((kind, text, [(f.text, f.status) for f in findings]))
    for kind, draft, *court in FALSE:
        text, findings = run(matter, claims_matter, draft, *court[1:])
        if not any(f.blocking for f in findings):
            missed.append((kind, text, [(f.text, f.status, f.message) for f in findings]))
    false_block_rate = len(false_blocks) / len(TRUE)
    catch_rate = 1 - len(missed) / len(FALSE)
    print(f"\nverifier claims: {len(TRUE)} true, {len(FALSE)} fabricated; false blocks {false_block_rate:.1%} "
          f"({len(false_blocks)}), caught {catch_rate:.1%} ({len(FALSE) - len(missed)}), true claims without a "
          f"finding {len(silent)}")
    assert false_block_rate <= 0.02, false_blocks
    assert not missed, missed
    assert not silent, silent

    # What the findings say, beyond passing: how a bare rule was read, and why a pin was not checked.
    _, findings = run(matter, claims_matter, "Summary judgment is proper on this record. Rule 56(a).")
    [rule] = [f for f in findings if f.text == "Rule 56(a)"]
    assert "Federal Rules of Civil Procedure" in rule.message and "the rules of the matter's court" in rule.message
    _, findings = run(matter, claims_matter, "Dr. Xiang may answer by letter. Rule 28(j).", APPEALS)
    [rule] = [f for f in findings if f.text == "Rule 28(j)"]
    assert rule.status == "grounded" and "Federal Rules of Appellate Procedure" in rule.message
    _, findings = run(matter, claims_matter, "Dr. Xiang may answer by letter. Rule 28(j).",
                      "Circuit Court of Cook County")
    [rule] = [f for f in findings if f.text == "Rule 28(j)"]
    assert rule.status == "unreadable" and "say which" in rule.message
    _, findings = run(matter, claims_matter, next(d for k, d, *_ in TRUE if k == "pin cite"))
    [case] = [f for f in findings if f.kind == "case_citation"]
    assert case.status == "pin_unchecked" and not case.blocking
    assert "not checked" in case.message and "slip opinion" in case.message


def test_a_pin_that_cannot_be_checked_is_not_a_checked_claim(claims_matter, matter, attorney):
    """A model's version whose only authority citation has a pin its exhibit cannot check grounded nothing:
    approving it asks the attorney to confirm having read it; the finding can be confirmed, and blocks nothing."""
    from django.core.exceptions import ValidationError

    from matters.drafts.services import finding_confirm

    text = next(d for k, d, *_ in TRUE if k == "pin cite")
    version = draft_create(matter=matter, title="Pin", text=text, author_kind="model", model_name="test-model")
    [case] = [f for f in draft_verify(version=version) if f.kind == "case_citation"]
    assert case.status == "pin_unchecked" and not case.blocking
    with pytest.raises(ValidationError, match="could be checked"):
        draft_approve(version=version, user=attorney)
    row = version.findings.get(kind="case_citation")
    assert finding_confirm(finding=row, user=attorney, reason="Pin 690 checked in the U.S. Reports.").status == (
        "confirmed")
    draft_approve(version=version, user=attorney, read_confirmed=True)


@pytest.mark.parametrize("text, cite", [
    ("The statute applies. 12 U.S.C. § 1 (2018).", "12 U.S.C. § 1"),
    ("The statute applies. 12 U.S.C. 1 (2018).", "12 U.S.C. 1"),
    ("The regulation applies. 29 C.F.R. § 1910.12 (2020).", "29 C.F.R. § 1910.12"),
    ("The motion was denied. ECF No. 31 at 4 (Mar. 3, 2019).", "ECF No. 31 at 4"),
    ("The invoice was paid. Ex. 12 at 3 (2019 ledger).", "Ex. 12 at 3"),
    ("The court so held. Roe v. Doe, 2019 WI 12, ¶ 4.", "2019 WI 12"),
    ("The court so held. Roe v. Doe, 2020 IL 124112 (2020).", "2020 IL 124112"),
    ("The invoice was produced. SMITH000123 (2019).", "SMITH000123"),
    ("The return was filed. The 2019 Form 1040 (2020) shows it.", "2019 Form 1040"),
    ("The hearing was held on 12 March 2021 (2021 term).", "12 March 2021"),
    ("The court so held. Roe v. Wade, 410 U.S. 113, 120 (1973).", "410 U.S. 113"),
    ("The court so held. Roe v. Wade, 410 U.S. 113.", "410 U.S. 113"),
    ("The court so held. Smith v. Jones, No. 21-50498 (5th Cir. 2022).", "No. 21-50498"),
    ("The deposition says so. Smith v. Jones, Ex. 12 at 3.", "Ex. 12 at 3"),
    ("The hearing in Smith v. Jones, 12 March 2021, was short.", "12 March 2021"),
])
def test_what_a_reader_knows_is_no_unreadable_citation(matter, record, text, cite):
    """Statutes, regulations, record cites, public-domain cites, Bates numbers and real reporters are read by their
    own readers (or are no citation at all), never reported as a citation no reader knows."""
    findings = verify_text(matter=matter, text=text)
    unknown = [(f.text, f.status, f.message) for f in findings
               if f.kind == "case_citation" and ("no reporter" in f.message.lower() or f.status == "unreadable")]
    assert not unknown, (cite, unknown)


def test_a_citation_of_an_unknown_reporter_is_unreadable_in_any_draft(matter, record):
    text = "The rule is settled. Smith v. Jones, 346 Fictitious 12 (2d Cir. 2019)."
    [finding] = [f for f in verify_text(matter=matter, text=text) if f.kind == "case_citation"]
    assert finding.status == "unreadable" and finding.blocking
    assert finding.text == "Smith v. Jones, 346 Fictitious 12 (2d Cir. 2019)" and "“Fictitious”" in finding.message


MODEL_TEXT = ("Judge Alsup presided over the hearing. The rule comes from 346 Fictitious 12. From 2015 to 2019 "
              "the tenant paid late. A hearing is set in the next 2 days.")


def test_a_models_uncited_facts_get_findings_and_approval_asks_it_was_read(matter, attorney):
    from django.core.exceptions import ValidationError

    version = draft_create(matter=matter, title="Summary", text=MODEL_TEXT, author_kind="model",
                           model_name="test-model")
    findings = draft_verify(version=version)
    for sentence in ("Judge Alsup", "346 Fictitious 12", "2015 to 2019", "next 2 days"):
        start = MODEL_TEXT.index(sentence)
        assert any(f.start <= start < f.end or start <= f.start < start + len(sentence) for f in findings), (
            sentence, [(f.text, f.status) for f in findings])
    fictitious = next(f for f in findings if "Fictitious" in f.text)
    assert fictitious.blocking and fictitious.status == "unreadable"
    # A model's sentence that also cites a record page: the citation is read by the case reader, not exempted.
    cited = draft_create(matter=matter, title="Cited", author_kind="model", model_name="test-model",
                         text="The tenant paid late. SMITH000001; Smith v. Jones, 346 Fictitious 12 (2d Cir. 2019).")
    fictitious = next(f for f in draft_verify(version=cited) if "Fictitious" in f.text)
    assert fictitious.blocking and fictitious.status == "unreadable"
    judge = next(f for f in findings if "Judge Alsup" in f.text)
    assert judge.status == "needs_record_cite" and "a person" in judge.message
    # An attorney's own sentence stating the parties needs no cite: only a model's text is read this way.
    person = draft_create(matter=matter, title="Own", text="Judge Alsup presided.", author_kind="person",
                          author=attorney)
    assert draft_verify(version=person) == []

    clean = draft_create(matter=matter, title="Plain", text="Judge Alsup presided over the hearing.",
                         author_kind="model", model_name="test-model")
    with pytest.raises(ValidationError, match="could be checked"):
        draft_approve(version=clean, user=attorney)
    draft_approve(version=clean, user=attorney, read_confirmed=True)
    entry = AuditEntry.objects.filter(action="draft.approve").latest("seq")
    assert entry.detail["read_confirmed"] is True and entry.detail["nothing_checked"] is True


@pytest.mark.parametrize("cite, printed", [("2022-NCSC-1, ¶ 29", "2022-NCSC-1"), ("2019 WI 12, ¶ 29", "2019 WI 12"),
                                           ("2020 IL 124112, ¶ 29", "2020 IL 124112")])
def test_a_public_domain_citation_is_the_opinion_printing_it_and_its_pins_are_its_paragraphs(cite, printed):
    from matters.drafts.verifier.authorities import AuthorityDoc, match_case
    from matters.drafts.verifier.citations import find_case_citations
    from matters.drafts.verifier.pins import check_pin

    # The head block as nc-gift-surplus prints it: court, public-domain citation on its own line, caption; the
    # opinion cites another public-domain case in its body ("377 N.C. 391, 2021-NCSC-57, ¶ 23").
    opinion = AuthorityDoc(1, "5", "opinion", [
        (1, 1, f"IN THE SUPREME COURT\n{printed}\nROE v. DOE\n¶ 1 The appeal.\n¶ 2 See 2021-NCSC-57, ¶ 23."),
        (2, 2, f"ROE V. DOE\n{printed}\nOpinion of the Court\n¶ 28 Facts.\n¶ 29 Holding.\n¶ 30 Remanded.")])
    text = f"The court so held. Roe v. Doe, {cite}. Later, it remanded. Id. ¶ 31."
    full = [c for c in find_case_citations(text) if c.form == "full"]
    assert [(c.plaintiff, c.defendant, c.pin_cite) for c in full] == [("Roe", "Doe", "¶ 29")]
    doc, _, how = match_case(full[0], [opinion])
    assert doc is opinion and how == "reporter citation"
    assert check_pin(full[0].pin_cite, full[0].page, opinion, full[0].reporter_cite).verdict == "ok"
    assert check_pin("¶ 31", full[0].page, opinion, full[0].reporter_cite).verdict == "outside"
    # The case the opinion cites in its body is not the opinion.
    [other] = [c for c in find_case_citations("See 2021-NCSC-57, ¶ 23.") if c.form == "full"]
    assert match_case(other, [opinion]) is None


def test_a_quotation_spliced_from_a_word_near_a_page_end_and_the_next_page_is_no_quotation():
    # A word or two of the quotation near the end of a page, prose after them, then the rest on the next page: a
    # splice of two passages, not one quotation run over a break with furniture between its halves.
    from matters.drafts.verifier.quotes import prepare
    from matters.drafts.verifier.text import match_words

    body = " ".join(f"the record shows item {n} was produced on time" for n in range(24))
    page_5 = match_words(f"{body} The court noted that discovery was incomplete and ordered more briefing. "
                         "Counsel agreed to confer about the schedule within two weeks of the order.")
    page_6 = match_words("denied the motion for sanctions and set the matter for trial.")
    assert not prepare("The court denied the motion for sanctions").find_across(page_5, page_6)
    # The same words ending page 5 and opening page 6 with a footer and a page number between are one quotation.
    page_5 = match_words(f"{body} For these reasons the court Case 1:20-cv-01 Page 5 of 9")
    assert prepare("the court denied the motion for sanctions").find_across(page_5, page_6)
    # And with a numbered footnote of many words closing the page, after a half of three words or more.
    note = "1 " + " ".join(["The parties dispute the schedule at length in their letters."] * 8)
    page_5 = match_words(f"{body} For these reasons the court plainly {note}")
    assert prepare("the court plainly denied the motion").find_across(page_5, page_6)
