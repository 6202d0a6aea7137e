"""Resources several documents of a production share are kept once as the documents are combined
(matters.productions.bates.dedup), so the combined PDF needs no duplicate merge at save: what it shows is
unchanged, it is as small as MuPDF's garbage=4 makes it, and nothing that must stay one per page is shared."""

import pymupdf

from matters.productions.bates.dedup import ResourceMerger
from matters.productions.bates.pageobjects import appended_pages, pdf_of
from matters.productions.bates.stamp import StampSpec, stamp_and_append

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def letter(name: str, pages: int = 2, link: bool = False) -> pymupdf.Document:
    """A document of its own text in an embedded font (the same font file in every letter)."""
    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page(width=612, height=792)
        page.insert_font(fontname="DejaVu", fontfile=DEJAVU)
        page.insert_text((72, 100), f"Letter of {name}, page {number + 1}.", fontname="DejaVu", fontsize=11)
        if link:
            page.insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(72, 90, 300, 110),
                              "uri": "https://example.com/lease"})
    return pymupdf.open("pdf", doc.tobytes(garbage=2, deflate=True))


def combine(documents: list[pymupdf.Document], merge: bool) -> pymupdf.Document:
    combined, number = pymupdf.open(), 1
    merger = ResourceMerger(pdf_of(combined)) if merge else None
    for source in documents:
        bates = [f"SMITH{n:06d}" for n in range(number, number + source.page_count)]
        stamp_and_append(combined, source, bates, StampSpec(), merger=merger)
        number += source.page_count
    return combined


def font_files(doc: pymupdf.Document) -> int:
    return sum(1 for xref in range(1, doc.xref_length())
               if doc.xref_get_key(xref, "FontFile2")[0] == "xref")


def test_distinct_documents_sharing_a_font_keep_it_once_and_show_what_they_showed():
    names = ["Smith", "Jones", "Avery"]
    merged = pymupdf.open("pdf", combine([letter(name) for name in names], merge=True).tobytes(garbage=2,
                                                                                               deflate=True))
    full = combine([letter(name) for name in names], merge=False).tobytes(garbage=4, deflate=True)
    plain = combine([letter(name) for name in names], merge=False).tobytes(garbage=2, deflate=True)
    assert font_files(merged) == 1
    assert font_files(pymupdf.open("pdf", plain)) == 3
    assert len(merged.tobytes()) <= 1.05 * len(full)
    reference = pymupdf.open("pdf", full)
    assert merged.page_count == 6
    for page, expected in zip(merged, reference):
        assert page.get_text() == expected.get_text()
        assert page.get_pixmap(dpi=40).samples == expected.get_pixmap(dpi=40).samples


def test_a_document_produced_twice_shares_its_pages_content_but_not_its_stamps():
    merged = combine([letter("Smith"), letter("Smith")], merge=True)
    saved = pymupdf.open("pdf", merged.tobytes(garbage=2, deflate=True))
    forms = {saved.xref_get_key(page.xref, "Resources/XObject/LDPage")[1] for page in saved}
    assert len(forms) == 2  # each page's content once, for both copies
    assert [page.get_text().split()[-1] for page in saved] == [f"SMITH{n:06d}" for n in range(1, 5)]
    assert len({page.get_contents()[0] for page in saved}) == 4  # every stamp its own


def test_an_annotation_is_never_shared_between_pages():
    merged = combine([letter("Smith", link=True), letter("Smith", link=True)], merge=True)
    saved = pymupdf.open("pdf", merged.tobytes(garbage=2, deflate=True))
    annots = [xref for page in saved for xref in page.annot_xrefs()]
    assert len(annots) == 4 and len(set(annots)) == 4
    assert all(page.get_links()[0]["uri"] == "https://example.com/lease" for page in saved)


def test_a_reference_written_inside_a_string_is_read_as_text():
    combined = pymupdf.open()
    merger = ResourceMerger(pdf_of(combined))
    for _ in range(2):
        source = letter("Smith", pages=1)
        font = next(xref for xref in range(1, source.xref_length())
                    if source.xref_get_key(xref, "Type")[1] == "/Font")
        # Text that reads like a reference to an object the file does not have, in a string of the font's.
        source.xref_set_key(font, "LDNote", pymupdf.get_pdf_str("see 99999 0 R (page 2)"))
        first_new = combined.xref_length()
        combined.insert_pdf(source)
        merger.merge(appended_pages(combined, 1), first_new)
    saved = pymupdf.open("pdf", combined.tobytes(garbage=2))
    notes = [saved.xref_get_key(xref, "LDNote")[1] for xref in range(1, saved.xref_length())
             if saved.xref_get_key(xref, "LDNote")[0] == "string"]
    assert notes == ["see 99999 0 R (page 2)"]  # the two fonts were one, their string kept as it was
    assert font_files(saved) == 1
