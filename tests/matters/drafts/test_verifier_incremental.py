"""Incremental verification (issue 27): an edit re-checks only the paragraphs it changed and those whose meaning
depends on them, and the findings are the same as verifying the whole text, on every edit of a scripted session
over a brief made of the team's true and fabricated claims and of citations that refer across paragraphs."""

from dataclasses import astuple

import pytest

from matters.drafts.verifier import memo as memos
from matters.drafts.verifier.check import Verification, verify_text
from matters.drafts.verifier.units import paragraph_spans
from tests.matters.drafts.test_verifier_claims import DISTRICT, FALSE, TRUE

pytestmark = pytest.mark.django_db

# Citations that refer across paragraphs: an Id. and a supra after a full citation, a record Id. after a record
# cite, a citation sentence standing as a paragraph of its own after the fact it supports.
CROSS = [
    "The Supreme Court of North Carolina decided the appeal. Gift Surplus, LLC v. State ex rel. Cooper, "
    "2022-NCSC-1, ¶ 29.",
    "The court treated the kiosks as games of chance. Id. ¶ 30.",
    "The Gift Surplus court addressed the kiosks at length. Gift Surplus, supra, ¶ 31.",
    "The invoice states “Google Workspace Business Starter” as its service. Ex. {I} at 1.",
    "It names the same service again. Id. at 1.",
    "The games at issue were found to be games of chance.",
    "Ex. {G} at 7.",
]


def brief(labels) -> list[str]:
    paragraphs = [draft for _, draft, *_ in TRUE] + [draft for _, draft, *_ in FALSE] + CROSS
    return [p.format(**labels) for p in paragraphs]


def both(matter, paragraphs: list[str]) -> tuple[list, int]:
    """The incremental findings of the text (how many paragraphs it checked), after asserting that they are the
    findings of a whole verification."""
    text = "\n\n".join(paragraphs)
    verification = Verification(matter, text, memo=memos.shared)
    incremental = verification.run()
    whole = verify_text(matter=matter, text=text, incremental=False)
    assert [astuple(f) for f in incremental] == [astuple(f) for f in whole]
    return incremental, verification.checked_paragraphs


def count(paragraphs: list[str]) -> int:
    """Paragraphs as the verifier reads them (a twin draft may hold two)."""
    return len(paragraph_spans("\n\n".join(paragraphs)))


def test_every_edit_of_a_session_gives_the_findings_of_a_whole_verification(claims_matter, matter, ingest,
                                                                            corpus, tmp_path):
    memos.shared.clear()
    matter.court = DISTRICT
    paragraphs = brief(claims_matter)
    findings, checked = both(matter, paragraphs)
    assert checked == count(paragraphs) and any(f.blocking for f in findings)

    _, checked = both(matter, paragraphs)
    assert checked == 0  # nothing changed: every paragraph from the memo

    # A date changed in one paragraph: that paragraph alone.
    where = next(i for i, p in enumerate(paragraphs) if "2021" in p or "2022" in p)
    paragraphs[where] = paragraphs[where].replace("202", "199", 1)
    _, checked = both(matter, paragraphs)
    assert checked == 1

    # The full citation an Id. and a supra refer to: the three paragraphs.
    full = len(paragraphs) - len(CROSS)
    paragraphs[full] = paragraphs[full].replace("2022-NCSC-1, ¶ 29", "2022-NCSC-1, ¶ 98")
    findings, checked = both(matter, paragraphs)
    assert checked == 3
    pins = [f for f in findings if f.kind == "case_citation" and f.text.endswith("¶ 98")]
    assert pins and all(f.blocking for f in pins), [(f.text, f.message) for f in pins]

    # A record cite an Id. refers to, changed to a page that does not exist: both paragraphs.
    paragraphs[full + 3] = paragraphs[full + 3].replace("at 1.", "at 40.")
    _, checked = both(matter, paragraphs)
    assert checked == 2

    # The citation sentence standing alone: the paragraph it supports is checked with it.
    paragraphs[-1] = paragraphs[-1].replace("at 7.", "at 8.")
    _, checked = both(matter, paragraphs)
    assert checked == 2

    # A citation paragraph that is an Id.: what it refers to, two paragraphs up, decides the support of the
    # paragraph above it, which is checked again when that changes.
    paragraphs += [f"The opinion was filed. Ex. {claims_matter['G']} at 1.",
                   "Judge Bryant reasoned that “the games at issue do not amount to games whose outcomes are "
                   "determined by skill and dexterity, but rather, chance.”",
                   "Id. at 7–8."]
    findings, _ = both(matter, paragraphs)
    paragraphs[-3] = paragraphs[-3].replace(f"Ex. {claims_matter['G']}", f"Ex. {claims_matter['C']}")
    changed, checked = both(matter, paragraphs)
    assert checked == 3
    quoted = [f for f in changed if f.kind == "quotation" and f.text.startswith("“the games")][-1]
    assert quoted.blocking  # now cited to Ex. C, which does not hold it

    # A paragraph inserted, one deleted, two swapped: only what is new.
    paragraphs.insert(3, "The tenant paid $1,250.00 on March 3, 2021.")
    _, checked = both(matter, paragraphs)
    assert checked == 1
    del paragraphs[5]
    _, checked = both(matter, paragraphs)
    assert checked <= 1  # at most the paragraph after it, which may read a date, rule set or statute it named
    paragraphs[1], paragraphs[2] = paragraphs[2], paragraphs[1]
    both(matter, paragraphs)

    # A numeric date in the other order changes what every numeric date's finding says: all of them.
    paragraphs.append("The notice was dated 13/04/2021.")
    paragraphs.append("The reply was dated 04/14/2021.")
    _, checked = both(matter, paragraphs)
    assert checked == count(paragraphs)

    # Evidence added: nothing kept is served for it, and the claim it grounds now passes.
    claim = "The tenant paid $1,250.00 on March 3, 2021."
    before = [f for f in both(matter, paragraphs)[0] if f.text == "$1,250.00"]
    assert before and before[0].status == "ungrounded"
    from tests.support.record import pdf_pages
    ingest(matter, pdf_pages(["Ledger. Rent of $1,250.00 paid on March 3, 2021."], tmp_path / "ledger.pdf"),
           origin="client")
    findings, checked = both(matter, paragraphs)
    assert checked == count(paragraphs)
    [after] = [f for f in findings if f.text == "$1,250.00"]
    assert after.status == "needs_record_cite", claim


def test_a_case_quoted_from_the_record_is_not_what_a_later_id_refers_to(claims_matter, matter):
    """A citation inside a quotation is the quoted text's, not the brief's: an ``Id.`` after the quotation refers to
    the brief's own last citation (Tarrant, an authority of the matter), not to the case the quotation names."""
    matter.court = DISTRICT
    text = ("The Compact allocates water. Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013). The "
            "filing says “as held in Smith v. Jones, 100 F.3d 200 (9th Cir. 1999), the rule applies to every "
            "state.” The Compact leaves each state its share. Id. at 620.")
    findings = verify_text(matter=matter, text=text, incremental=False)
    [short] = [f for f in findings if f.text == "Id. at 620"]
    # Tarrant's exhibit is its slip opinion: the Id. refers to it, and its pin cannot be checked there.
    assert short.status == "pin_unchecked" and "Tarrant" in short.message, short.message
    assert not any(f.kind == "case_citation" and "Smith" in f.text for f in findings)


def test_what_a_paragraph_reads_from_the_paragraphs_before_it(claims_matter, matter):
    """A bare rule or section, an ``Id. §`` and a date without a year read what the paragraphs before named; a
    straight-quoted passage over a blank line is one quotation; a heading that is a citation supports nothing."""
    matter.court = "Circuit Court of Cook County"
    text = ("Summary judgment is sought. Fed. R. Civ. P. 56(a).\n\nRule 56(a) governs the motion.\n\n"
            "Removal was timely. 28 U.S.C. § 1446(b).\n\nId. § 1441(b) bars removal by a forum defendant.\n\n"
            "On March 1, 2020, the lease began.\n\nOn March 3, the tenant paid.")
    findings = verify_text(matter=matter, text=text, incremental=False)
    assert not [f for f in findings if f.status == "unreadable"], [(f.text, f.message) for f in findings]
    [rule] = [f for f in findings if f.text == "Rule 56(a)"]
    assert "Fed. R. Civ. P." in rule.message
    assert not [f for f in findings if f.kind == "case_citation"]  # the Id. is the statute's short form
    [day] = [f for f in findings if f.text == "March 3"]
    assert day.detail.get("readings") == ["2020-03-03"] or "2020" in day.message, (day.message, day.detail)

    matter.court = DISTRICT
    quoted = ('He wrote: "We will pay the full amount for every game at issue.\n\nPayment follows the ruling." '
              f"Ex. {claims_matter['G']} at 2.")
    findings = verify_text(matter=matter, text=quoted, incremental=False)
    assert [f for f in findings if f.kind == "quotation" and f.text.startswith('"We will pay')], findings

    heading = "The amount in controversy is $80,000.\n\nA. 28 U.S.C. § 1332\n\nDiversity exists."
    [amount] = [f for f in verify_text(matter=matter, text=heading, incremental=False) if f.text == "$80,000"]
    assert "1332" not in amount.message, amount.message
