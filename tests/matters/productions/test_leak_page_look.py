"""The leak scan's look at a page's strings through its fonts (matters.productions.bates.fonttext): a name is
found in every font a production's pages are written in, however its words are spaced, and a page holding
nothing looked for has its text read without MuPDF's extraction."""

import pymupdf
import pytest

from matters.productions.bates.leaks import Scanner, Secrets

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _secrets() -> Secrets:
    secrets = Secrets()
    secrets.add("Margaret Holloway", "redacted on A-1, page 1")
    return secrets


def _pdf(draw) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    draw(doc, page)
    return doc.tobytes()


def _scan(data: bytes) -> Scanner:
    scanner = Scanner(_secrets())
    scanner.scan_pdf(data, "NATIVES/SMITH000001.pdf")
    return scanner


@pytest.mark.parametrize("font", ["helv", "tiro", "cour", "embedded"])
def test_a_name_in_any_font_fails_and_a_clean_page_is_not_extracted(font):
    def draw(text):
        def on(doc, page):
            if font == "embedded":  # a composite font, Identity-H with a /ToUnicode map
                page.insert_font(fontname="DejaVu", fontfile=DEJAVU)
                page.insert_text((72, 72), text, fontname="DejaVu", fontsize=11)
            else:
                page.insert_text((72, 72), text, fontname=font, fontsize=11)
        return on

    leaking = _scan(_pdf(draw("Paid to Margaret Holloway on May 2")))
    assert any("margaret holloway" in f.text for f in leaking.findings)
    assert leaking.pages_extracted == 1
    clean = _scan(_pdf(draw("Paid to the trustee on May 2")))
    assert clean.findings == []
    assert (clean.pages_read_from_strings, clean.pages_extracted) == (1, 0)


def test_words_kerned_apart_or_split_across_strings_are_still_found():
    def draw(doc, page):
        xref = page.get_contents()[0]
        # One word split between two strings of a TJ array, the next word kerned away with no space character.
        doc.update_stream(xref, doc.xref_stream(xref) + b"\nBT /helv 11 Tf 72 300 Td [(Marg) 20 (aret) -600 "
                                                        b"(Holloway)] TJ ET\n")
    def base(doc, page):
        page.insert_text((72, 72), "Statement", fontname="helv", fontsize=11)
        draw(doc, page)

    scanner = _scan(_pdf(base))
    assert scanner.pages_extracted == 1
    assert any("margaret holloway" in f.text for f in scanner.findings)


def test_a_font_whose_codes_cannot_be_read_has_its_page_extracted():
    def draw(doc, page):
        page.insert_text((72, 72), "Paid to the trustee", fontname="helv", fontsize=11)
        xref = page.get_contents()[0]
        # A resource name no font answers to: the strings cannot be read, MuPDF's text is.
        doc.update_stream(xref, doc.xref_stream(xref) + b"\nBT /Nowhere 11 Tf 72 300 Td (x) Tj ET\n")

    scanner = _scan(_pdf(draw))
    assert scanner.pages_extracted == 1 and scanner.undecided
