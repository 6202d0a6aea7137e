"""Bates stamps land upright at the requested visual position on real-world pages: rotated, cropped, with a
scaling matrix left active, under a full-page scan, and on pages made from images."""

import pymupdf
import pytest

from matters.productions.bates.stamp import MARGIN_PT, StampSpec, stamp_page
from tests.support.stamps import visual_hit

BOTTOM_RIGHT = StampSpec.from_position("bottom-right")


def assert_bottom_right_and_upright(page: pymupdf.Page, text: str) -> None:
    rect, direction = visual_hit(page, text)
    visible = page.rect
    assert visible.contains(rect), (rect, visible)
    assert visible.x1 - MARGIN_PT - 2 <= rect.x1 <= visible.x1 - MARGIN_PT + 2, (rect, visible)
    assert visible.y1 - MARGIN_PT - 6 <= rect.y1 <= visible.y1, (rect, visible)
    assert direction.x == pytest.approx(1, abs=1e-3) and direction.y == pytest.approx(0, abs=1e-3)
    # The stamp is ink: render the page as shown and look at the pixels under the number.
    pixmap = page.get_pixmap(dpi=144, colorspace=pymupdf.csGRAY)
    zoom = 2
    clip = pymupdf.IRect(rect.x0 * zoom, rect.y0 * zoom, rect.x1 * zoom, rect.y1 * zoom) & pixmap.irect
    darkest = min(pixmap.pixel(x, y)[0] for x in range(clip.x0, clip.x1) for y in range(clip.y0, clip.y1))
    assert darkest < 80


def stamped(doc: pymupdf.Document, tmp_path) -> pymupdf.Document:
    for number, page in enumerate(doc, start=1):
        stamp_page(page, f"SMITH{number:06d}", BOTTOM_RIGHT, "CONFIDENTIAL")
    path = tmp_path / "stamped.pdf"
    doc.save(path)
    return pymupdf.open(path)


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_rotated_pages(tmp_path, rotation):
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 72), "Body text of the page.")
    page.set_rotation(rotation)
    out = stamped(doc, tmp_path)
    assert_bottom_right_and_upright(out[0], "SMITH000001")
    conf_rect, _ = visual_hit(out[0], "CONFIDENTIAL")
    assert conf_rect.x0 == pytest.approx(out[0].rect.x0 + MARGIN_PT, abs=2)  # the opposite corner


def test_corpus_page_with_rotate_90(tmp_path, corpus):
    doc = pymupdf.open(corpus("odd/rotated_skew.pdf"))
    assert doc[0].rotation == 90
    assert_bottom_right_and_upright(stamped(doc, tmp_path)[0], "SMITH000001")


def test_cropbox_inset_from_mediabox(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.set_cropbox(pymupdf.Rect(30, 30, 582, 762))
    out = stamped(doc, tmp_path)
    assert out[0].rect == pymupdf.Rect(0, 0, 552, 732)
    assert_bottom_right_and_upright(out[0], "SMITH000001")


def test_scaling_matrix_left_active_by_the_content(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    xref = page.get_contents()[0] if page.get_contents() else None
    stream = b"0.2 0 0 0.2 0 0 cm BT /F1 12 Tf 100 100 Td (tiny) Tj ET"  # no q/Q: the scale stays active
    if xref is None:
        page.insert_text((0, 0), " ")
        xref = page.get_contents()[0]
    doc.update_stream(xref, stream)
    out = stamped(doc, tmp_path)
    assert_bottom_right_and_upright(out[0], "SMITH000001")


def test_scanned_page_under_a_full_page_opaque_image(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    grey = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 612, 792), False)
    grey.set_rect(grey.irect, (230,))
    page.insert_image(page.rect, pixmap=grey)
    out = stamped(doc, tmp_path)
    assert_bottom_right_and_upright(out[0], "SMITH000001")


@pytest.mark.parametrize("name", ["odd/simple.jpg", "odd/typewriter.png", "odd/multipage.tiff"])
def test_pages_made_from_images(tmp_path, corpus, name):
    with pymupdf.open(corpus(name)) as image:
        doc = pymupdf.open("pdf", image.convert_to_pdf())
    out = stamped(doc, tmp_path)
    for number, page in enumerate(out, start=1):
        assert_bottom_right_and_upright(page, f"SMITH{number:06d}")


@pytest.mark.parametrize("position", ["top-left", "top-center", "bottom-center"])
def test_other_positions(tmp_path, position):
    doc = pymupdf.open()
    doc.new_page(width=612, height=792).set_rotation(90)
    stamp_page(doc[0], "DEF000001", StampSpec.from_position(position))
    rect, direction = visual_hit(doc[0], "DEF000001")
    visible = doc[0].rect
    vertical, horizontal = position.split("-")
    assert (rect.y0 < visible.height / 2) == (vertical == "top")
    center = (rect.x0 + rect.x1) / 2
    expected = {"left": visible.x0 + MARGIN_PT + rect.width / 2, "center": visible.width / 2,
                "right": visible.x1 - MARGIN_PT - rect.width / 2}[horizontal]
    assert center == pytest.approx(expected, abs=2)
    assert direction.x == pytest.approx(1, abs=1e-3)


def test_resources_inherited_from_the_page_tree_keep_working(tmp_path):
    doc = pymupdf.open()
    doc.new_page(width=612, height=792).insert_text((72, 72), "Inherited font text")
    page_xref = doc[0].xref
    kind, resources = doc.xref_get_key(page_xref, "Resources")
    pages_xref = int(doc.xref_get_key(doc.pdf_catalog(), "Pages")[1].split()[0])
    doc.xref_set_key(pages_xref, "Resources", resources)  # fonts now come from the /Pages node (ISO 32000 7.7.3.4)
    doc.xref_set_key(page_xref, "Resources", "null")
    assert doc.xref_get_key(page_xref, "Resources")[0] == "null"
    out = stamped(doc, tmp_path)
    assert "Inherited font text" in out[0].get_text()
    assert_bottom_right_and_upright(out[0], "SMITH000001")


def test_text_outside_ascii_and_pdf_delimiters_survive(tmp_path):
    doc = pymupdf.open()
    doc.new_page()
    stamp_page(doc[0], "DEF(1)\\000001", BOTTOM_RIGHT, "CONFIDENTIEL – SOCIÉTÉ")
    assert doc[0].search_for("DEF(1)\\000001") and doc[0].search_for("CONFIDENTIEL – SOCIÉTÉ")
