"""OCR that may be wrong says so: low-confidence pages, pages whose marks read as nothing, and the start-up check."""

import io

import pymupdf
import pytest
from django.urls import reverse

from matters.drafts.verifier.check import verify_text
from matters.exhibits.ingest.ocr_check import ocr_problems
from matters.exhibits.services import exhibit_create
from matters.models import Page

NOTICE = "NOTICE OF DEFAULT. The tenant failed to pay rent due on March 3, 2021 in the amount of $1,250.00."


@pytest.fixture
def scanned(matter, attorney):
    """A ready exhibit of two OCR'd pages: page 1 read at ``confidence``, page 2 read well."""

    def make(confidence: float):
        exhibit = exhibit_create(matter=matter, stream=io.BytesIO(b"%PDF-1.4 scan"), original_name="scan.pdf",
                                 origin="opposing_party", uploaded_by=attorney, enqueue=False)
        exhibit.status = "ready"
        exhibit.save()
        Page.objects.create(exhibit=exhibit, number=1, text=NOTICE, source="ocr", ocr_confidence=confidence,
                            width_pt=612, height_pt=792)
        Page.objects.create(exhibit=exhibit, number=2, text="Signed by the landlord on April 9, 2021.",
                            source="ocr", ocr_confidence=91.0, width_pt=612, height_pt=792)
        return exhibit

    return make


@pytest.mark.django_db
def test_a_claim_grounded_only_on_a_low_confidence_page_says_so(matter, scanned):
    exhibit = scanned(42.0)
    findings = verify_text(matter=matter, text=(
        f"Rent was due on March 3, 2021. (Ex. {exhibit.label} at 1.) "
        f"The landlord signed on April 9, 2021. (Ex. {exhibit.label} at 2.)"))
    weak = next(f for f in findings if f.text == "March 3, 2021")
    assert weak.status == "grounded"  # it may still be grounded, but says how it was read
    assert "low confidence (42%, under 60%)" in weak.message and weak.detail["low_ocr_confidence"] == 42.0
    sound = next(f for f in findings if f.text == "April 9, 2021")
    assert sound.status == "grounded" and "confidence" not in sound.message


@pytest.mark.django_db
def test_the_threshold_is_a_setting(matter, scanned, settings):
    settings.LAWDESK_OCR_LOW_CONFIDENCE = 40
    exhibit = scanned(42.0)
    finding = next(f for f in verify_text(matter=matter, text=f"Due March 3, 2021. (Ex. {exhibit.label} at 1.)")
                   if f.kind == "date")
    assert "confidence" not in finding.message


@pytest.mark.django_db
def test_the_exhibit_and_its_page_show_a_low_confidence_page(client, attorney, matter, scanned):
    exhibit = scanned(42.0)
    client.force_login(attorney)
    page = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert 'id="reading-flags"' in page and "1 page whose text may not be what the page shows" in page
    assert "OCR confidence 42% is low" in page
    one = client.get(reverse("matters:page", args=[matter.pk, exhibit.pk, 1])).content.decode()
    assert 'id="reading-flag"' in one
    two = client.get(reverse("matters:page", args=[matter.pk, exhibit.pk, 2])).content.decode()
    assert 'id="reading-flag"' not in two


# A ToUnicode map sending every glyph into the Private Use Area: what a PDF whose fonts have no usable Unicode map
# extracts as (ISO 32000-1 section 9.10.3).
GARBLED_CMAP = b"""/CIDInit /ProcSet findresource begin 12 dict begin begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def /CMapName /Garbled def /CMapType 2 def
1 begincodespacerange <0000> <FFFF> endcodespacerange
1 beginbfrange <0000> <17FF> <E000> endbfrange
endcmap CMapName currentdict /CMap defineresource pop end end"""


@pytest.mark.django_db
def test_a_page_with_marks_that_read_as_nothing_is_flagged_not_left_blank(matter, ingest, tmp_path):
    path = tmp_path / "garbled.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(54, 54, 558, 300), "Page one of the letter. " * 20, fontsize=11)
        page = doc.new_page()
        page.insert_font(fontname="dv", fontbuffer=pymupdf.Font("cjk").buffer)  # embedded, with a ToUnicode map
        page.insert_text((72, 100), "The tenant owes the landlord four months of rent. " * 2, fontname="dv",
                         fontsize=11)
        doc.new_page()  # truly blank: nothing to flag
        doc.save(tmp_path / "plain.pdf")
    with pymupdf.open(tmp_path / "plain.pdf") as doc:
        for xref in range(1, doc.xref_length()):
            kind, value = doc.xref_get_key(xref, "ToUnicode")
            if kind == "xref":
                doc.update_stream(int(value.split()[0]), GARBLED_CMAP)
        doc.save(path)
    exhibit = ingest(matter, path)
    assert exhibit.status == "ready"
    pages = {p.number: p for p in exhibit.pages.all()}
    assert not pages[1].unread_ink and not pages[3].unread_ink
    assert pages[2].text == "" and pages[2].unread_ink and "read as no text" in pages[2].reading_flag


def test_the_start_up_check_says_what_to_install():
    assert ocr_problems("eng") == []
    [missing] = ocr_problems("eng+zzz")
    assert "zzz" in missing and "apt-get install tesseract-ocr-zzz" in missing
    [absent] = ocr_problems("eng", tesseract="no-such-tesseract")
    assert "Tesseract is not installed" in absent and "tesseract-ocr-osd" in absent


@pytest.mark.django_db
@pytest.mark.parametrize("size_pt", [12, 40])
def test_a_page_with_a_few_real_characters_keeps_them(matter, tmp_path, ingest, size_pt):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 120), "SSN 123-45-6789", fontsize=size_pt)
    with_drawing = doc.new_page()  # a rule on the page sends it to OCR first; the layer stays if OCR reads less
    with_drawing.insert_text((72, 120), "Ex. 4 p. 2", fontsize=size_pt)
    with_drawing.draw_line((72, 700), (300, 700))
    path = tmp_path / "short.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    first, second = exhibit.pages.order_by("number")
    assert "123-45-6789" in first.text and first.source == Page.Source.PDF and not first.unread_ink
    assert "Ex.4" in second.text.replace(" ", "") and not second.unread_ink
