"""The improper-redaction check reads a page's drawings only where the page's one text reading shows a dark fill:
it must give the text ``get_text`` gives, and find every box the full check finds, however the box is drawn."""

import pymupdf
import pytest

from matters.exhibits.ingest import redaction_check
from matters.exhibits.ingest.redaction_check import find_hidden_text, read_text

SECRET = "BT /F1 12 Tf 80 700 Td (Secret settlement figure 1,250,000 owed) Tj ET\n"

# Dark boxes over the secret line, drawn the ways a PDF can draw them (content stream operators, PDF user space).
BOXES = {
    "grey rectangle": "0 g 75 690 300 20 re f",
    "dark RGB": "0 0 0.3 rg 75 690 300 20 re f",
    "CMYK black": "0 0 0 1 k 75 690 300 20 re f",
    "CMYK four-colour black": "0.6 0.5 0.4 0.9 k 75 690 300 20 re f",
    "CMYK cyan and magenta": "1 1 0 0 k 75 690 300 20 re f",
    "polygon": "0 g 75 690 m 375 690 l 380 700 l 375 710 l 75 710 l h f",
    "curved edge": "0 g 75 690 m 375 690 l 375 710 l 75 710 c h f",
    "filled and stroked": "0 g 0 G 75 690 300 20 re B",
    "even-odd fill": "0 g 75 690 300 20 re f*",
    "turned by cm": "q 0.7071 0.7071 -0.7071 0.7071 200 600 cm 0 g 0 0 200 200 re f Q",
    "one path of thin strips": "0 g " + " ".join(f"75 {690 + i} 300 0.9 re" for i in range(20)) + " f",
    "one path of tiny squares": "0 g " + " ".join(f"{75 + 2 * i} {690 + 2 * j} 1.5 1.5 re"
                                                  for i in range(150) for j in range(10)) + " f",
    "partly clipped": "q 75 695 300 20 re W n 0 g 75 690 300 20 re f Q",
    "nearly opaque": "/GS1 gs 0 g 75 690 300 20 re f",
    "after a white page fill": "1 g 0 0 612 792 re f 0 g 75 690 300 20 re f",
    "in a form XObject": "/Box Do",
}


def page_drawing(content: str, *, rotation: int = 0) -> pymupdf.Page:
    """An A4 page whose whole content stream is ``content``, with Helvetica as /F1, a 95% opaque graphics state
    as /GS1 and a form XObject /Box holding a black box over the secret line."""
    doc = pymupdf.open()
    page = doc.new_page()
    font, state, form, stream = (doc.get_new_xref() for _ in range(4))
    doc.update_object(font, "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
    doc.update_object(state, "<</Type/ExtGState/ca 0.95/CA 0.95>>")
    doc.update_object(form, "<</Type/XObject/Subtype/Form/BBox[0 0 612 792]>>")
    doc.update_stream(form, b"0 g 75 690 300 20 re f")
    doc.xref_set_key(page.xref, "Resources",
                     f"<</Font<</F1 {font} 0 R>>/ExtGState<</GS1 {state} 0 R>>/XObject<</Box {form} 0 R>>>>")
    doc.update_object(stream, "<<>>")
    doc.update_stream(stream, content.encode("latin-1"))
    doc.xref_set_key(page.xref, "Contents", f"{stream} 0 R")
    page.set_rotation(rotation)
    return doc[0]


@pytest.mark.parametrize("box", BOXES, ids=list(BOXES))
@pytest.mark.parametrize("order", ["text first", "box first"])
@pytest.mark.parametrize("rotation", [0, 90])
def test_a_box_the_full_check_finds_is_found_after_the_pretest(box, order, rotation):
    content = SECRET + BOXES[box] if order == "text first" else BOXES[box] + "\n" + SECRET
    page = page_drawing(content, rotation=rotation)
    text, dark_fills = read_text(page)
    full = find_hidden_text(page)
    assert full and "settlement" in full[0].text
    assert dark_fills
    assert find_hidden_text(page, drawings=dark_fills) == full
    assert text == page.get_text("text")


@pytest.mark.parametrize("content", [
    "1 g 0 0 612 792 re f",  # a white page background
    "0 g 80 697 200 0.8 re f",  # an underline drawn as a thin filled rectangle
    "0.8 g 75 690 300 20 re f",  # a light grey band under the line: the text on it is readable
    "0 G 2 w 75 690 300 20 re S",  # a black frame around the line, not filled
    "0 g " + " ".join(f"{75 + 3 * i} {690 + 3 * j} 3 3 re f" for i in range(100) for j in range(7)),  # 3-pt dots
], ids=["white background", "underline", "light band", "frame", "separate small dots"])
def test_a_page_without_a_dark_box_is_not_read_a_second_time(content):
    # A light band is shading, drawn before the text as writers draw it: drawn opaque over the text it hides the
    # text (white-out, found: test_redaction_kinds.py).
    page = page_drawing(content + "\n0 g\n" + SECRET if content.startswith("0.8 g") else SECRET + content)
    text, dark_fills = read_text(page)
    assert not dark_fills
    assert find_hidden_text(page) == []
    assert text == page.get_text("text")


def test_one_reading_gives_the_text_get_text_gives_on_court_filings(corpus_dir):
    pages = cleared = 0
    for path in sorted((corpus_dir / "court").glob("*.pdf")):
        with pymupdf.open(path) as doc:
            for page in doc:
                text, dark_fills = read_text(page)
                assert text == page.get_text("text"), (path.name, page.number)
                assert find_hidden_text(page, drawings=dark_fills) == find_hidden_text(page)
                pages += 1
                cleared += not dark_fills
    assert cleared > pages * 0.9  # underlined headings and white fills do not send a page to the drawings


def test_a_filled_annotation_is_found_without_reading_the_drawings():
    page = page_drawing(SECRET)
    line = pymupdf.Rect()
    for word in page.get_text("words"):
        line |= pymupdf.Rect(word[:4])
    annot = page.add_rect_annot(line + (-2, -2, 2, 2))
    annot.set_colors(stroke=(0, 0, 0), fill=(0, 0, 0))
    annot.update()
    found = find_hidden_text(page, drawings=False)
    assert len(found) == 1 and "settlement" in found[0].text


def test_the_block_list_read_directly_agrees_with_the_bindings(corpus_dir):
    # The pre-test reads MuPDF's block list as a C list; a MuPDF whose layout differs falls back to the bindings'
    # slower iteration, which this test would show by the layout check failing here.
    pages = [page_drawing(SECRET + content) for content in BOXES.values()]
    for path in sorted((corpus_dir / "court").glob("*.pdf")):
        pages += list(pymupdf.open(path))
    for page in pages:
        textpage = page.get_textpage(flags=redaction_check.TEXT_AND_VECTORS)
        assert redaction_check.may_hide_text(textpage) == redaction_check._may_hide_text_by_bindings(textpage)
    assert redaction_check._layout_checked == [True]
