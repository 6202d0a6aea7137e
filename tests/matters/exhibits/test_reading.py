"""Text as the page shows it: one normalisation read by search, the quotation matcher and the review panel."""

import io

import pytest

from matters.drafts.review_sources import marked_text
from matters.drafts.verifier.check import verify_text
from matters.exhibits.reading import is_transcript, reading_form, reading_form_with_offsets, transcript_lines
from matters.exhibits.search import matter_search
from matters.exhibits.services import exhibit_create
from matters.models import Page

# A page as PDF text extraction gives it: ligature characters, a decomposed accent, curly quotes, an em dash, a word
# hyphenated at a line end and a compound broken at its own hyphen.
PAGE = ("The tenant’s ﬁnal notice—served on the landlord—said the roof needed water-\n"
        "proofing before winter. The parties signed a non-\ncompete agreement and the cafe\u0301 closed.\n"
        "The ofﬁce lease is “effective immediately.”")


def transcript(lines: dict[int, str]) -> str:
    """A deposition page as extracted: a running head, then lines numbered 1-25 in the margin."""
    rows = ["                                                        45"]
    rows += [f"{n:>2}   {lines.get(n, '')}".rstrip() for n in range(1, 26)]
    return "\n".join(rows)


DEPOSITION = transcript({
    3: "Q. Did you inspect the roof in March?",
    4: "A. Yes. I saw that the flashing had come loose",
    5: "along the north wall and water was coming in",
    6: "through the ceiling of the bedroom.",
    12: "Q. Did you tell the landlord?",
})


@pytest.fixture
def exhibit_with(matter, attorney):
    """Return a function making a ready exhibit whose pages hold ``texts`` (the database's own FTS/GIN index)."""

    def make(*texts: str, label_name: str = "notice.pdf"):
        exhibit = exhibit_create(matter=matter, stream=io.BytesIO(b"%PDF-1.4 stub " + label_name.encode()),
                                 original_name=label_name, origin="client", uploaded_by=attorney, enqueue=False)
        exhibit.status = "ready"
        exhibit.save()
        for number, text in enumerate(texts, 1):
            Page.objects.create(exhibit=exhibit, number=number, text=text, source="pdf", width_pt=612, height_pt=792)
        return exhibit

    return make


def test_reading_form_reads_ligatures_accents_marks_and_hyphenation():
    form = reading_form(PAGE)
    assert "final notice-served" in form and "office lease" in form
    assert "waterproofing before" in form and "noncompete agreement" in form
    assert "café" in form and "tenant's" in form and '"effective immediately."' in form
    assert "\ufb01" not in form and "—" not in form
    # Offsets lead back to the stored text, which is never changed.
    form, offsets = reading_form_with_offsets(PAGE)
    start = form.index("waterproofing")
    assert PAGE[offsets[start]:offsets[start + len("waterproofing") - 1] + 1] == "water-\nproofing"


def test_a_line_numbered_page_is_a_transcript_and_its_numbers_never_break_a_quotation():
    assert is_transcript(DEPOSITION)
    assert not is_transcript("1. The parties.\n2. The lease.\n3. The rent.\n")
    assert "the flashing had come loose along the north wall and water was coming in through" in \
        " ".join(reading_form(DEPOSITION).split())
    assert transcript_lines(DEPOSITION)[5] == "along the north wall and water was coming in"


@pytest.mark.django_db
def test_search_finds_the_reading_form_and_both_forms_of_a_compound(matter, exhibit_with):
    exhibit = exhibit_with(PAGE)
    page = exhibit.pages.get()
    assert page.text == PAGE  # stored as extracted
    for query in ("final notice", "waterproofing", "non-compete", "noncompete", '"office lease"', "café",
                  "tenant’s"):
        hits = matter_search(matter=matter, query=query)
        assert [(h.exhibit_id, h.page_number) for h in hits] == [(exhibit.pk, 1)], query


@pytest.mark.django_db
def test_search_reads_across_transcript_line_numbers(matter, exhibit_with):
    exhibit_with(DEPOSITION)
    assert matter_search(matter=matter, query='"coming in through the ceiling"')
    assert matter_search(matter=matter, query='"loose along the north wall"')


@pytest.mark.django_db
def test_quotations_match_the_page_as_it_reads(matter, exhibit_with):
    exhibit = exhibit_with(PAGE, DEPOSITION)
    draft = (f"The notice said the roof needed “waterproofing before winter.” (Ex. {exhibit.label} at 1.) "
             f"The parties signed a “non-compete agreement and the café closed.” (Ex. {exhibit.label} at 1.) "
             f"The lease of the office was “effective immediately.” (Ex. {exhibit.label} at 1.) "
             f"The witness saw that “the flashing had come loose along the north wall and water was coming in "
             f"through the ceiling of the bedroom.” (Ex. {exhibit.label} at 2.)")
    quotes = [f for f in verify_text(matter=matter, text=draft) if f.kind == "quotation"]
    assert len(quotes) == 4
    assert [f.status for f in quotes] == ["grounded"] * 4, [f.message for f in quotes]


@pytest.mark.django_db
def test_a_compound_quoted_without_its_hyphen_matches_too(matter, exhibit_with):
    exhibit = exhibit_with("The parties signed a non-compete agreement in May and the\nemployee left.")
    draft = f"They signed a “noncompete agreement in May.” (Ex. {exhibit.label} at 1.)"
    quote = next(f for f in verify_text(matter=matter, text=draft) if f.kind == "quotation")
    assert quote.status == "ungrounded"  # mid-line "non-compete" is two words; only a line-end break joins
    draft = f"They signed a “non-compete agreement in May.” (Ex. {exhibit.label} at 1.)"
    quote = next(f for f in verify_text(matter=matter, text=draft) if f.kind == "quotation")
    assert quote.status == "grounded"


def test_the_review_panel_marks_what_the_verifier_matched_on_the_stored_text():
    html, count = marked_text(PAGE, ["waterproofing before winter", "final notice", "non-compete agreement",
                                     '"effective immediately."'])
    assert count == 4
    assert '<mark class="source-match">water-\nproofing before winter</mark>' in html
    assert '<mark class="source-match">\ufb01nal notice</mark>' in html
    assert '<mark class="source-match">non-\ncompete agreement</mark>' in html
    assert '<mark class="source-match">“effective immediately.”</mark>' in html
    html, count = marked_text(DEPOSITION, ["come loose along the north wall"])
    assert count == 1 and "loose\n 5   along the north wall</mark>" in html
