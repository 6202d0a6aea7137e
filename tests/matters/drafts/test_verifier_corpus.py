"""No false blocks on real court filings: a draft that quotes every produced page of ``corpus/court`` correctly,
cites each quotation and date by its Bates number, and cites the Supreme Court opinion the corpus holds."""

import re

import pytest

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.dates import find_dates
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

pytestmark = pytest.mark.django_db

FILINGS = ["ca10_010110462922.pdf", "ca1_00117684624.pdf", "ca2_1-1.pdf", "ca3_003112692106.pdf", "ca4_17.pdf",
           "ca5_00516242060.pdf", "ca6_1-3.pdf", "ca7_3.pdf", "ca8_.pdf", "ca9_19.pdf", "cafc_3.pdf",
           "mo-app-jagels.pdf", "nc-gift-surplus.pdf"]
_PLAIN_WORD = re.compile(r"^[A-Za-z][A-Za-z,;:\-]*$")


def passage(text: str, words: int = 10) -> str | None:
    """The first run of ``words`` plain words on a page, as the page's text layer has them (line breaks and
    hyphenation included), or None."""
    tokens = list(re.finditer(r"\S+", text))
    for i in range(len(tokens) - words):
        window = tokens[i:i + words]
        if all(_PLAIN_WORD.match(t.group(0)) for t in window) and window[-1].group(0)[-1].isalpha():
            return text[window[0].start():window[-1].end()]
    return None


@pytest.fixture
def court_matter(matter, attorney, ingest, corpus):
    filings = [ingest(matter, corpus(f"court/{name}"), origin="court") for name in FILINGS]
    tarrant = ingest(matter, corpus("court/scotus-slip-2012.pdf"), origin="authority")
    production = production_run(production_id=production_create(
        matter=matter, exhibits=filings, prefix="CT", created_by=attorney, enqueue=False).pk)
    assert production.status == "done"
    return production, tarrant


def test_a_correct_draft_quoting_every_filing_has_no_blocking_finding(matter, court_matter):
    production, tarrant = court_matter
    paragraphs, expected = [], {}
    for bates_page in production.bates_pages.select_related("page").exclude(page=None):
        text, bates = bates_page.page.text, bates_page.bates
        quoted = passage(text)
        if quoted:
            paragraphs.append(f"The filing states that “{quoted}.” {bates}.")
            expected[f"“{quoted}.”"] = bates
        dates = find_dates(text, matter.date_order)
        if dates:
            paragraphs.append(f"The record reflects the date {dates[0].text}. {bates}.")
    paragraphs.append(
        "The Compact's interpretive comment provides that “all states are free to use whatever amount of water "
        "they can put to beneficial use.” Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013).")
    draft = "\n\n".join(paragraphs)
    assert len(expected) >= 60

    findings = verify_text(matter=matter, text=draft)

    blocking = [(f.text, f.message) for f in findings if f.blocking]
    assert blocking == []
    quotes = {f.text: f for f in findings if f.kind == "quotation"}
    for quote, bates in expected.items():
        assert quotes[quote].status == "grounded", quotes[quote].message
        assert bates in [s["bates"] for s in quotes[quote].sources]
    case = next(f for f in findings if f.kind == "case_citation")
    assert case.status == "grounded" and case.sources[0]["exhibit"] == tarrant.pk
    assert sum(f.kind == "date" for f in findings) >= 20


def test_the_opinion_matched_by_caption_must_not_show_another_volume(matter, court_matter):
    text = "See Tarrant Regional Water Dist. v. Herrmann, 570 U.S. 614 (2013)."
    [case] = [f for f in verify_text(matter=matter, text=text) if f.kind == "case_citation"]
    assert case.status == "ungrounded" and "volume 569" in case.message
