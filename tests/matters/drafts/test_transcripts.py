"""Transcripts: line numbers never break a quotation; page:line cites are checked against those lines."""

import pymupdf
import pytest
from django.urls import reverse

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.transcripts import find_transcript_cites, suggest_transcript_cite
from matters.models import AuditEntry

CAPTION = ("UNITED STATES DISTRICT COURT\nDISTRICT OF MASSACHUSETTS\nSMITH v. JONES, No. 1:24-cv-01234\n\n"
           "VIDEOTAPED DEPOSITION OF JANE ROE\nTaken on May 2, 2024")
PAGE_45 = {
    3: "Q. Did you inspect the roof in March?",
    4: "A. Yes. I saw that the flashing had come loose",
    5: "along the north wall and water was coming in",
    6: "through the ceiling of the bedroom.",
    7: "Q. On what day? A. On March 3, 2021.",
    12: "Q. Did you tell the landlord? A. I wrote to him",
    13: "the same week and he never answered.",
}
PAGE_46 = {1: "Q. What did the repair cost?", 2: "A. The roofer quoted $4,800.00 for the work."}


def deposition(path):
    """A deposition as a court reporter's PDF: a caption page, then pages 45 and 46, lines numbered 1-25."""
    with pymupdf.open() as doc:
        doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 540, 720), CAPTION, fontsize=12)
        for number, lines in ((45, PAGE_45), (46, PAGE_46)):
            page = doc.new_page()
            page.insert_text((500, 60), str(number), fontsize=11)
            for line in range(1, 26):
                page.insert_text((60, 90 + line * 24), f"{line:>2}   {lines.get(line, '')}".rstrip(), fontsize=11,
                                 fontname="cour")
        doc.save(path)
    return path


@pytest.fixture
def transcript(matter, ingest, tmp_path):
    exhibit = ingest(matter, deposition(tmp_path / "roe-deposition.pdf"), origin="third_party")
    assert exhibit.status == "ready"
    return exhibit


def test_transcript_cites_are_read_in_their_forms():
    cites = find_transcript_cites("See Roe Dep. 45:3–12; Tr. 112:4-9; Hr’g Tr. 7:1; Roe Dep. 45:20-46:4.")
    assert [(c.name, c.where) for c in cites] == [("Roe Dep.", "45:3–12"), ("Tr.", "112:4–9"), ("Hr’g Tr.", "7:1"),
                                                  ("Roe Dep.", "45:20–46:4")]
    assert suggest_transcript_cite(CAPTION) == "Roe Dep."
    assert suggest_transcript_cite("TRANSCRIPT OF MOTION HEARING BEFORE THE HONORABLE A. JUDGE") == "Hr'g Tr."


@pytest.mark.django_db
def test_a_deposition_is_named_from_its_caption(transcript):
    assert transcript.transcript_cite == "Roe Dep."


@pytest.mark.django_db
def test_page_line_cites_are_checked_against_those_lines(matter, transcript):
    draft = ("Roe saw that “the flashing had come loose along the north wall and water was coming in through the "
             "ceiling.” Roe Dep. 45:4-6. "
             "She inspected it on March 3, 2021. Roe Dep. 45:7. "
             "The roofer quoted $4,800.00. Roe Dep. 45:13-46:2. "
             "She said “the flashing had come loose along the north wall.” Roe Dep. 45:12-13. "
             "She never wrote to the landlord. Roe Dep. 47:1. "
             "Nobody came. Roe Dep. 45:30. "
             "The landlord denied it. Smith Dep. 12:1.")
    findings = verify_text(matter=matter, text=draft)
    quotes = [f for f in findings if f.kind == "quotation"]
    assert quotes[0].status == "grounded", quotes[0].message
    assert quotes[0].sources[0]["exhibit"] == transcript.pk and quotes[0].sources[0]["page"] == 2
    assert next(f for f in findings if f.text == "March 3, 2021").status == "grounded"
    assert next(f for f in findings if f.text == "$4,800.00").status == "grounded"  # a range over two pages
    assert quotes[1].status == "ungrounded" and "not at lines 45:12–13 of Roe Dep." in quotes[1].message
    cites = {f.text: f for f in findings if f.kind == "exhibit_cite"}
    assert cites["Roe Dep. 47:1"].status == "ungrounded" and "has no page 47" in cites["Roe Dep. 47:1"].message
    assert cites["Roe Dep. 45:30"].status == "ungrounded" and "lines 1–25" in cites["Roe Dep. 45:30"].message
    assert cites["Smith Dep. 12:1"].status == "ungrounded"
    assert "No exhibit of this matter is the transcript “Smith Dep.”" in cites["Smith Dep. 12:1"].message
    assert cites["Roe Dep. 45:4-6"].status == "grounded"


@pytest.mark.django_db
def test_the_transcript_name_is_set_on_the_exhibit_and_audited(client, attorney, matter, transcript):
    client.force_login(attorney)
    client.post(reverse("matters:exhibit_edit", args=[matter.pk, transcript.pk]),
                {"label": transcript.label, "title": transcript.title, "transcript_cite": "J. Roe Dep."})
    transcript.refresh_from_db()
    assert transcript.transcript_cite == "J. Roe Dep."
    entry = AuditEntry.objects.filter(action="exhibit.edit").latest("seq")
    assert entry.detail["before"]["transcript_cite"] == "Roe Dep."
    assert entry.detail["after"]["transcript_cite"] == "J. Roe Dep."
    finding = next(f for f in verify_text(matter=matter, text="She saw it. J. Roe Dep. 45:4.")
                   if f.kind == "exhibit_cite")
    assert finding.status == "grounded"
