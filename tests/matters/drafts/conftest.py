"""Fixtures of the draft and verifier tests."""

import pymupdf
import pytest

from tests.support.record import pdf_pages


def subset(source, pages: list[int], path):
    """Pages (1-based) of the PDF ``source`` as a new PDF at ``path``: part of a filing, as a record holds it."""
    with pymupdf.open(source) as whole, pymupdf.open() as part:
        for number in pages:
            part.insert_pdf(whole, from_page=number - 1, to_page=number - 1)
        part.save(path)
    return path


@pytest.fixture
def claims_matter(matter, ingest, corpus, tmp_path):
    """The matter's record: nc-gift-surplus pp. 1-9 as filed (Ex. G), the Google invoice of odd/invalid_pdf.pdf
    as its text layer reads (Ex. I), ca5 pp. 2-3 (Ex. C), the ca8 Rule 28(j) letter (Ex. X); authorities: the Gift
    Surplus opinion (2022-NCSC-1) to ¶ 33, the head of the Tarrant slip opinion, and Rules 28 and 56 of the
    federal rules; and three pages written for the claim set (Ex. D, Ex. Y, Ex. N: below)."""
    gift = corpus("court/nc-gift-surplus.pdf")
    with pymupdf.open(corpus("odd/invalid_pdf.pdf")) as damaged:
        invoice_text = damaged[0].get_text()
    labels = {
        "G": ingest(matter, subset(gift, list(range(1, 10)), tmp_path / "gift-record.pdf"), origin="court"),
        "I": ingest(matter, pdf_pages([invoice_text], tmp_path / "invoice.pdf"), origin="opposing_party"),
        "C": ingest(matter, subset(corpus("court/ca5_00516242060.pdf"), [2, 3], tmp_path / "ca5.pdf"),
                    origin="court"),
        "X": ingest(matter, subset(corpus("court/ca8_.pdf"), [1], tmp_path / "ca8.pdf"), origin="court"),
    }
    authorities = [
        ingest(matter, subset(gift, list(range(1, 21)), tmp_path / "gift.pdf"), origin="authority"),
        ingest(matter, subset(corpus("court/scotus-slip-2012.pdf"), list(range(1, 7)), tmp_path / "tarrant.pdf"),
               origin="authority"),
        ingest(matter, pdf_pages(["FEDERAL RULES OF CIVIL PROCEDURE\nRule 56. Summary Judgment\n(a) Motion for "
                                  "Summary Judgment or Partial Summary Judgment."], tmp_path / "frcp56.pdf"),
               origin="authority"),
        ingest(matter, pdf_pages(["FEDERAL RULES OF APPELLATE PROCEDURE\nRule 28. Briefs\n(j) Citation of "
                                  "Supplemental Authorities."], tmp_path / "frap28.pdf"), origin="authority"),
    ]
    # Two pages no corpus document has, written as the invoice's text layer reads with its statement period printed
    # day first (Ex. D), and as a hearing notice stating a period without a year (Ex. Y, the form "from May 1
    # through May 3" that a notice or a letter writes).
    day_first = invoice_text.replace("Aug 31, 2024", "31/08/2024", 1).replace(
        "Summary for Aug 1, 2024 - Aug 31, 2024", "Summary for 01/08/2024 - 31/08/2024\nPrior period 03/04/2024 to "
        "05/06/2024")
    labels["D"] = ingest(matter, pdf_pages([day_first], tmp_path / "invoice-day-first.pdf"), origin="opposing_party")
    labels["Y"] = ingest(matter, pdf_pages(["NOTICE OF HEARING\nDated: April 15, 2024\nThe arbitration hearing "
                                            "will be held from May 1 through May 3 at the offices of the American "
                                            "Arbitration Association.\nOn May 9 the panel will hear closing "
                                            "arguments."], tmp_path / "notice.pdf"), origin="opposing_party")
    # A note stating its rates as loan papers do, in words and in figures with a fraction (Ex. N).
    labels["N"] = ingest(matter, pdf_pages(["PROMISSORY NOTE\nDated: March 1, 2024\nInterest accrues on the unpaid "
                                            "principal at two and one-half percent (2 1/2%) per year. A late charge "
                                            "of one-half percent of the unpaid balance applies to any late "
                                            "installment."], tmp_path / "note.pdf"), origin="client")
    assert all(e.status == "ready" for e in [*labels.values(), *authorities])
    return {key: exhibit.label for key, exhibit in labels.items()}
