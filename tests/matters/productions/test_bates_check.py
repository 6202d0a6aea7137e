"""The stamp check reads a page's structure instead of rendering it only when that structure proves the stamp is
drawn as written: every way page content can hide a stamp sends the page to the renderer, which fails it."""

import pymupdf
import pytest

from matters.productions.bates.check import StampNotVisible, check_stamps, unproven
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


@pytest.mark.parametrize("content", [
    b"Q 0 0 1 1 re W n",  # a surplus Q pops the q around the page's content: the clip after it reaches the stamp
    b"q 0 0 1 1 re W n",  # a surplus q keeps the clip past the Q meant to restore it
    b"Q 3 Tr",  # text render mode 3 draws no ink
    b"Q 0 0 1 1 re W n q",  # a surplus Q, then q: balanced in count, but the clip is set outside any q ... Q
    b"BT /F1 9 Tf (never closed",  # an open string swallows the stamp as its text
    b"<0041",  # as does an open hex string
    b"[ 1 2",  # an open array eats an operator of the stamp
    b"foo " * 150,  # MuPDF stops reading a page's content after 100 syntax errors
    b"BI /W 1 /H 1 /BPC 8 /CS /G ID x",  # an inline image without its end
])
def test_content_that_can_hide_the_stamp_is_rendered(content):
    doc = page_with(content)
    stamping = stamped(doc)
    assert "unbalanced" in unproven(doc, 0, stamping.boxes[0])


@pytest.mark.parametrize("content", [b"(never closed", b"<0041", b"[ 1 2", b"foo " * 150])
def test_a_stamp_the_content_swallows_fails_the_check(content):
    doc = page_with(content)
    stamping = stamped(doc)
    with pytest.raises(StampNotVisible, match="the stamp of SMITH000001 \\(page 1 of Exhibit 1\\)"):
        check_stamps(doc, stamping.boxes, NAMES, "Exhibit 1", readable=stamping.own_content)


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
