"""A stamped page's own content is a form XObject of its own, so nothing it leaves open reaches the stamp drawn
after it: the stamp renders dark whatever the content does. The check reads a page's structure instead of
rendering it only when that proves the stamp shows; annotations, optional content and a stamp outside the
visible area still send the page to the renderer, which fails a hidden stamp."""

import pymupdf
import pytest

from matters.productions.bates.check import MIN_DARK_SHARE, StampNotVisible, check_stamps, dark_share, unproven
from matters.productions.bates.stamp import StampSpec, stamp_pages

NAMES = ["SMITH000001"]


def page_with(content: bytes, doc: pymupdf.Document | None = None) -> pymupdf.Document:
    """A Letter page whose whole content is ``content`` (Helvetica as /F1)."""
    doc = doc or pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_font(fontname="F1", fontbuffer=pymupdf.Font("helv").buffer)
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, content)
    doc.xref_set_key(page.xref, "Contents", f"{xref} 0 R")
    return doc


def stamped(doc: pymupdf.Document, confidentiality: str = ""):
    return stamp_pages(doc, NAMES[: doc.page_count], StampSpec(), confidentiality)


@pytest.mark.parametrize("content", [
    # A white box the page draws over its bottom edge lies under the stamp, which is drawn last.
    b"q 1 g 300 0 312 100 re f Q BT /F1 11 Tf 72 700 Td (The lease.) Tj ET",
    b"Q q 0 0 1 1 re W n",  # the page's own q after its surplus Q holds the clip our Q then ends
    b"BT /F1 9 Tf 7 Tr (x) Tj",  # a text object left open, in clipping mode
    b"<< /A 1",  # a dictionary left open: MuPDF drops it at the next operator
])
def test_a_page_proven_by_its_structure_is_not_rendered_and_rendering_agrees(content):
    doc = page_with(content)
    stamping = stamped(doc)
    assert unproven(doc, 0, stamping.boxes[0]) == ""
    assert check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1", readable=stamping.own_content) == 0
    assert check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1") == 1  # rendered: the stamp shows


def produced(doc: pymupdf.Document) -> pymupdf.Document:
    """``doc`` as a production saves it, read back."""
    return pymupdf.open("pdf", doc.tobytes(garbage=4, deflate=True))


@pytest.mark.parametrize("content", [
    b"Q 0 0 1 1 re W n",  # a surplus Q, then a clip
    b"q 0 0 1 1 re W n",  # a surplus q keeping a clip open
    b"Q 3 Tr",  # text render mode 3 draws no ink
    b"Q 0 0 1 1 re W n q",  # a surplus Q, then q: balanced in count, but the clip is set outside any q ... Q
    b"Q 1 0 0 1 0 2000 cm",  # a transformation that would move the stamp off the page
    b"Q /GS1 gs 0 0 1 1 re W n",  # an unknown graphics state and a clip
    b"BT /F1 9 Tf (never closed",  # an open string would swallow the stamp as its text
    b"<0041",  # as would an open hex string
    b"[ 1 2",  # an open array would eat an operator of the stamp
    b"<< /A 1",  # a dictionary left open
    b"foo " * 150,  # MuPDF stops reading a content stream after 100 syntax errors
    b"BI /W 1 /H 1 /BPC 8 /CS /G ID x",  # an inline image without its end
])
def test_what_the_page_content_leaves_open_ends_with_its_form_and_the_stamp_shows(content):
    doc = page_with(content)
    stamping = stamped(doc)
    assert stamping.own_content == {0}
    assert unproven(doc, 0, stamping.boxes[0]) == ""
    page = produced(doc)[0]
    assert dark_share(page, stamping.boxes[0][0]) >= MIN_DARK_SHARE
    assert check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1") == 1  # rendered, and it agrees


def test_the_produced_page_keeps_its_text_and_drawing_under_the_stamp():
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 700), "The lease of the premises", fontname="helv", fontsize=11)
    page.draw_rect(pymupdf.Rect(72, 100, 172, 200), color=None, fill=(0, 0, 0))
    stamping = stamped(doc)
    page = produced(doc)[0]
    text = page.get_text()
    assert "The lease of the premises" in text and "SMITH000001" in text
    assert dark_share(page, pymupdf.Rect(72, 100, 172, 200)) > 0.9
    assert dark_share(page, stamping.boxes[0][0]) >= MIN_DARK_SHARE


def test_content_split_between_streams_reads_as_one_and_a_surplus_q_in_either_stays_inside():
    doc = page_with(b"")
    streams = []
    for data in (b"Q 0 g 72 600", b"100 100 re f 0 0 1 1 re W n"):  # split at a token boundary (7.8.2)
        xref = doc.get_new_xref()
        doc.update_object(xref, "<<>>")
        doc.update_stream(xref, data)
        streams.append(f"{xref} 0 R")
    doc.xref_set_key(doc[0].xref, "Contents", "[" + " ".join(streams) + "]")
    stamping = stamped(doc)
    page = produced(doc)[0]
    assert dark_share(page, pymupdf.Rect(72, 92, 172, 192)) > 0.9  # y down: 792 - 700 to 792 - 600
    assert dark_share(page, stamping.boxes[0][0]) >= MIN_DARK_SHARE


def form_of(doc: pymupdf.Document, number: int) -> int:
    """The xref of the form XObject holding page ``number``'s own content."""
    return int(doc.xref_get_key(doc[number].xref, "Resources/XObject/LDPage")[1].split()[0])


def test_a_content_stream_two_pages_share_becomes_two_forms_each_with_its_pages_resources():
    doc = pymupdf.open()
    for _ in range(2):
        doc.new_page(width=612, height=792).insert_text((72, 700), "Same words", fontname="helv")
    shared = doc[0].get_contents()[0]
    doc.xref_set_key(doc[1].xref, "Contents", f"{shared} 0 R")
    own_resources = []
    for page in doc:  # each page's resources an object of its own
        xref = doc.get_new_xref()
        doc.update_object(xref, doc.xref_object(int(doc.xref_get_key(page.xref, "Resources")[1].split()[0])))
        doc.xref_set_key(page.xref, "Resources", f"{xref} 0 R")
        own_resources.append(f"{xref} 0 R")
    stamping = stamp_pages(doc, ["SMITH000001", "SMITH000002"], StampSpec())
    assert stamping.own_content == {0, 1}
    assert form_of(doc, 0) != form_of(doc, 1)
    for number, resources in enumerate(own_resources):
        assert doc.xref_get_key(form_of(doc, number), "Resources")[1] == resources
    for number, page in enumerate(produced(doc)):
        assert "Same words" in page.get_text() and f"SMITH00000{number + 1}" in page.get_text()
        assert dark_share(page, stamping.boxes[number][0]) >= MIN_DARK_SHARE


def test_resources_inherited_from_the_page_tree_reach_the_page_content():
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 700), "Inherited font", fontname="helv")
    resources = doc.xref_get_key(page.xref, "Resources")[1]
    doc.xref_set_key(page.xref, "Resources", "null")
    pages = int(doc.xref_get_key(doc.pdf_catalog(), "Pages")[1].split()[0])
    doc.xref_set_key(pages, "Resources", resources)
    stamping = stamped(doc)
    text = produced(doc)[0].get_text()
    assert "Inherited font" in text and "SMITH000001" in text
    assert stamping.own_content == {0}


def test_hidden_optional_content_left_open_is_rendered_and_fails():
    doc = pymupdf.open()
    hidden = doc.add_ocg("Draft notes", on=False)
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 200), "notes", oc=hidden)
    tag = next(line for line in page.read_contents().decode("latin-1").splitlines() if line.endswith("BDC"))
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, f"{tag}\n".encode("latin-1"))
    doc.xref_set_key(page.xref, "Contents", "[" + " ".join(f"{x} 0 R" for x in page.get_contents() + [xref]) + "]")
    stamping = stamped(doc)
    assert "optional content" in unproven(doc, 0, stamping.boxes[0])
    with pytest.raises(StampNotVisible):
        check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1", readable=stamping.own_content)


def test_an_annotation_over_the_stamp_is_rendered_and_fails():
    doc = page_with(b"")
    stamping = stamped(doc)
    annot = doc[0].add_rect_annot(pymupdf.Rect(300, 700, 612, 792))  # drawn after all page content
    annot.set_colors(stroke=(1, 1, 1), fill=(1, 1, 1))
    annot.update()
    assert "annotations" in unproven(doc, 0, stamping.boxes[0])
    with pytest.raises(StampNotVisible):
        check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1", readable=stamping.own_content)


def test_a_stamp_box_outside_the_visible_area_is_rendered():
    doc = page_with(b"")
    stamping = stamped(doc)
    doc[0].set_cropbox(pymupdf.Rect(0, 0, 612, 700))  # the bottom of the page, with the stamp, is cut off
    assert "visible area" in unproven(doc, 0, stamping.boxes[0])
    with pytest.raises(StampNotVisible):
        check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1", readable=stamping.own_content)


def test_a_page_stamped_through_pymupdf_for_a_unicode_endorsement_is_rendered():
    doc = page_with(b"")
    stamping = stamped(doc, confidentiality="機密")
    assert stamping.own_content == set()
    assert check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1", readable=stamping.own_content) == 1


def link(doc: pymupdf.Document, appearance: bool) -> None:
    """A link over the stamp's corner; with ``appearance``, one that draws a white box there."""
    xref = doc.get_new_xref()
    source = "<</Type/Annot/Subtype/Link/Rect[300 0 612 100]/Border[0 0 0]/A<</S/URI/URI(https://example.com)>>"
    if appearance:
        form = doc.get_new_xref()
        doc.update_object(form, "<</Type/XObject/Subtype/Form/BBox[0 0 312 100]>>")
        doc.update_stream(form, b"1 g 0 0 312 100 re f")
        source += f"/AP<</N {form} 0 R>>"
    doc.update_object(xref, source + ">>")
    doc.xref_set_key(doc[0].xref, "Annots", f"[{xref} 0 R]")


def test_a_link_without_an_appearance_is_only_an_area_to_click():
    doc = page_with(b"")
    link(doc, appearance=False)
    stamping = stamped(doc)
    assert unproven(doc, 0, stamping.boxes[0]) == ""


def test_a_link_with_an_appearance_is_rendered():
    doc = page_with(b"")
    link(doc, appearance=True)
    stamping = stamped(doc)
    assert "annotations" in unproven(doc, 0, stamping.boxes[0])
    assert check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1", readable=stamping.own_content) == 1
