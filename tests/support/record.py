"""The standard small record the verifier, review, job and browser tests share: the texts of a two-page lease, an
invoice, an opinion and a statute, written into real PDFs, and the draft that cites them all correctly."""

import pymupdf

LEASE_P1 = ("RESIDENTIAL LEASE. This lease was signed on March 3, 2021 by Acme Holdings LLC and Jane Roe. "
            "The monthly rent is $1,250.00, due on the first day of each month.")
LEASE_P2 = ("On April 5, 2021 the tenant wrote to the landlord: We will not pay the rent for April, because the "
            "roof leaks and nobody has come to repair it. Balance then due: 4,800.00.")
INVOICE = "INVOICE 2021-117. Roof repair, invoice dated June 15, 2021. Amount due: USD 9,999.00."
OPINION = [
    "TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL. 569 U.S. 614 (2013). Decided June 13, 2013.",
    "A landlord who fails to repair the premises may not demand the full rent. The duty to repair is an "
    "implied covenant of every residential lease.",
]
STATUTE = ["TITLE 18 - CRIMES AND CRIMINAL PROCEDURE. § 1028A. Aggravated identity theft. (a) Offenses."]


def pdf_pages(texts: list[str], path):
    """Write one letter-size PDF page per text (Helvetica 10 pt, one-inch margins at ``path``); return ``path``."""
    with pymupdf.open() as doc:
        for text in texts:
            page = doc.new_page()
            page.insert_textbox(pymupdf.Rect(54, 54, 558, 738), text, fontname="helv", fontsize=10)
        doc.save(path)
    return path


def by_text(findings, text):
    """Return the first finding whose text is ``text``; fail the test, listing what was found, when none is."""
    matches = [f for f in findings if f.text == text]
    assert matches, f"no finding for {text!r}: {[f.text for f in findings]}"
    return matches[0]


CORRECT = (
    "The lease was signed on March 3, 2021. SMITH000001. The rent was $1,250.00 a month (Ex. 1 at 1). "
    "The tenant wrote that “[w]e will not pay the rent for April, because the roof leaks.” SMITH000002. "
    "A landlord “may not demand the full rent.” Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614, 620 (2013). "
    "Identity theft is a separate crime. 18 U.S.C. § 1028A. The repair invoice was for $9,999.00 "
    "(SMITH000003), dated June 15, 2021 (SMITH000003)."
)
