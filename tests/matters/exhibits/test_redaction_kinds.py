"""Redactions that only look real, of every kind the ingest check knows: marker and hatching strokes, Redact
annotations never applied, an OCR layer under a box (vector or painted into the scan) and an image pasted over
live text; and what looks alike but hides nothing (a strike-through, a background image, an OCR layer on a clean
scan) is not reported."""

import pymupdf
import pytest

from matters.exhibits.ingest.redaction_check import find_hidden_text, read_page
from matters.models import ImproperRedaction
from matters.privilege.services import production_blockers

SECRET = "Settlement figure 1,250,000 owed to Holloway"
LINE = pymupdf.Rect(70, 88, 330, 104)  # around the secret line written at (72, 100) in 11 pt


def page_with_secret(invisible: bool = False) -> tuple[pymupdf.Document, pymupdf.Page]:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Letter to the adjuster.", fontsize=11)
    page.insert_text((72, 100), SECRET, fontsize=11, render_mode=3 if invisible else 0)
    return doc, page


def found_text(page: pymupdf.Page) -> str:
    """What the check reports, through the one reading ingest makes first (as ingest runs it)."""
    raw, drawings = read_page(page)
    found = find_hidden_text(page, drawings=drawings)
    assert found == find_hidden_text(page), "the pre-test passed over what the full check finds"
    return " | ".join(item.text for item in found)


def scan_image(black: pymupdf.Rect | None = None) -> pymupdf.Pixmap:
    """A white page-sized scan at 72 dpi, with ``black`` painted into its pixels."""
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 595, 842), False)
    pixmap.set_rect(pixmap.irect, (255,))
    if black is not None:
        pixmap.set_rect(pymupdf.IRect(black), (0,))
    return pixmap


def test_a_felt_tip_marker_stroke_over_the_line_is_found():
    doc, page = page_with_secret()
    shape = page.new_shape()
    shape.draw_line((68, 96), (335, 96))
    shape.finish(color=(0, 0, 0), width=14)
    shape.commit()
    assert "Holloway" in found_text(page) and "Letter" not in found_text(page)


def test_a_cross_hatch_over_the_line_is_found():
    doc, page = page_with_secret()
    shape = page.new_shape()
    for x in range(40, 340, 4):
        shape.draw_line((x, 106), (x + 18, 86))
        shape.draw_line((x, 86), (x + 18, 106))
    shape.finish(color=(0.1, 0.1, 0.1), width=2.5)
    shape.commit()
    assert "1,250,000" in found_text(page)


@pytest.mark.parametrize("width", [0.5, 1.2])
def test_a_strike_through_or_an_underline_hides_nothing(width):
    doc, page = page_with_secret()
    shape = page.new_shape()
    shape.draw_line((70, 96), (330, 96))  # through the middle of the letters
    shape.draw_line((70, 102), (330, 102))  # under them
    shape.finish(color=(0, 0, 0), width=width)
    shape.commit()
    assert found_text(page) == ""


@pytest.mark.parametrize("fill", [None, (1, 1, 1)], ids=["outline only", "white overlay"])
def test_a_redact_annotation_marked_but_never_applied_is_found(fill):
    doc, page = page_with_secret()
    annot = page.add_redact_annot(LINE, fill=fill)
    annot.set_colors(stroke=(1, 0, 0))
    annot.update()
    assert "Holloway" in found_text(page)


def test_an_ocr_layer_under_a_vector_box_over_a_scan_is_found():
    doc, page = page_with_secret(invisible=True)
    page.insert_image(page.rect, pixmap=scan_image(), overlay=False)  # the scan under the OCR text
    page.draw_rect(LINE, color=None, fill=(0, 0, 0), overlay=True)
    assert "Holloway" in found_text(page)


def test_an_ocr_layer_under_a_box_painted_into_the_scan_is_found():
    doc, page = page_with_secret(invisible=True)
    page.insert_image(page.rect, pixmap=scan_image(black=LINE), overlay=False)
    text = found_text(page)
    assert "Holloway" in text and "1,250,000" in text


def test_an_ocr_layer_on_a_clean_scan_is_not_reported():
    doc, page = page_with_secret(invisible=True)
    page.insert_image(page.rect, pixmap=scan_image(), overlay=False)
    assert found_text(page) == ""


def test_an_image_pasted_over_live_text_is_found_and_a_background_image_is_not():
    doc, page = page_with_secret()
    patch = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 8), False)
    patch.set_rect(patch.irect, (250, 250, 250))  # near-white: a sticker pasted over the figure
    page.insert_image(LINE, pixmap=patch, overlay=True, keep_proportion=False)
    assert "Holloway" in found_text(page)
    doc, page = page_with_secret()
    page.insert_image(page.rect, pixmap=scan_image(), overlay=False)  # letterhead paper drawn first
    assert found_text(page) == ""


@pytest.mark.django_db
def test_a_marker_stroke_is_flagged_on_ingest_with_its_words_and_blocks_a_production(matter, ingest, tmp_path):
    doc, page = page_with_secret()
    shape = page.new_shape()
    shape.draw_line((68, 96), (335, 96))
    shape.finish(color=(0, 0, 0), width=14)
    shape.commit()
    path = tmp_path / "marked.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    box = ImproperRedaction.objects.get(page__exhibit=exhibit)
    assert "Holloway" in box.hidden_text and "1,250,000" in box.hidden_text
    assert matter.audit_entries.filter(action="page.improper_redaction").exists()
    blockers = production_blockers([exhibit], set())
    assert len(blockers) == 1 and "Holloway" in blockers[0]


def pasted_patch() -> bytes:
    patch = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 65, 4), False)
    patch.set_rect(patch.irect, (250, 250, 250))  # a near-white picture, as wide as the line
    return patch.tobytes("png")


def test_a_picture_pasted_as_a_stamp_annotation_over_live_text_is_found():
    doc, page = page_with_secret()
    page.add_stamp_annot(LINE, stamp=pasted_patch())
    text = found_text(page)
    assert "Holloway" in text and "1,250,000" in text and "Letter" not in text


@pytest.mark.parametrize("fill", [(1, 1, 1), (0.85, 0.85, 0.85)], ids=["white", "light grey"])
def test_a_free_text_box_over_live_text_is_found(fill):
    doc, page = page_with_secret()
    page.add_freetext_annot(LINE, "REDACTED", fontsize=6, fill_color=fill, text_color=(0, 0, 0))
    assert "Holloway" in found_text(page)


@pytest.mark.parametrize("fill", [(1, 1, 1), (0.98, 0.98, 0.85), (0.8, 0.8, 0.8)],
                         ids=["white", "correction-fluid cream", "light grey"])
def test_white_out_drawn_over_live_text_is_found(fill):
    doc, page = page_with_secret()
    page.draw_rect(LINE, color=None, fill=fill, overlay=True)
    text = found_text(page)
    assert "Holloway" in text and "Letter" not in text


def test_highlights_shading_rubber_stamps_and_form_fields_hide_nothing():
    doc, page = page_with_secret()
    page.add_highlight_annot(LINE)  # a highlight annotation: translucent, multiplied over the text
    assert found_text(page) == ""
    doc, page = page_with_secret()
    page.draw_rect(LINE, color=None, fill=(0.85, 0.85, 0.85), overlay=False)  # table shading under the text
    page.draw_rect(LINE, color=None, fill=(1, 1, 0), fill_opacity=0.4, overlay=True)  # a see-through marker
    assert found_text(page) == ""
    doc, page = page_with_secret()
    page.add_stamp_annot(LINE, stamp=0)  # a rubber stamp ("Approved") over the line: the text shows through
    page.add_freetext_annot(LINE + (0, 20, 0, 20), "note", fontsize=8)  # a note with no fill, below it
    widget = pymupdf.Widget()
    widget.field_type, widget.field_name, widget.rect = pymupdf.PDF_WIDGET_TYPE_TEXT, "amount", LINE
    widget.field_value = ""
    page.add_widget(widget)  # a form field over the line, without a background
    assert found_text(page) == ""


def _marked_but_not_applied(page: pymupdf.Page) -> None:
    annot = page.add_redact_annot(LINE)
    annot.set_colors(stroke=(1, 0, 0))
    annot.update()


def _ocr_layer_under_a_box(page: pymupdf.Page) -> None:
    page.insert_image(page.rect, pixmap=scan_image(), overlay=False)
    page.draw_rect(LINE, color=None, fill=(0, 0, 0), overlay=True)


def _image_over_text(page: pymupdf.Page) -> None:
    page.insert_image(LINE, stream=pasted_patch(), overlay=True, keep_proportion=False)


# Each kind built into a file the real ingest reads, as an attorney would upload it.
INGESTED_KINDS = {
    "a Redact annotation never applied": (_marked_but_not_applied, False),
    "an OCR layer under a box": (_ocr_layer_under_a_box, True),
    "an image pasted over text": (_image_over_text, False),
    "a picture pasted as a stamp annotation": (lambda page: page.add_stamp_annot(LINE, stamp=pasted_patch()), False),
    "a white FreeText box": (lambda page: page.add_freetext_annot(LINE, "", fill_color=(1, 1, 1)), False),
    "white-out": (lambda page: page.draw_rect(LINE, color=None, fill=(1, 1, 1), overlay=True), False),
}


@pytest.mark.django_db
@pytest.mark.parametrize("kind", list(INGESTED_KINDS))
def test_each_kind_is_flagged_on_ingest_with_its_words_and_blocks_a_production(matter, ingest, tmp_path, kind):
    build, invisible = INGESTED_KINDS[kind]
    doc, page = page_with_secret(invisible=invisible)
    build(page)
    path = tmp_path / "letter.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    box = ImproperRedaction.objects.get(page__exhibit=exhibit)
    assert "Holloway" in box.hidden_text and "1,250,000" in box.hidden_text, box.hidden_text
    assert "Letter" not in box.hidden_text
    assert matter.audit_entries.filter(action="page.improper_redaction").exists()
    blockers = production_blockers([exhibit], set())
    assert len(blockers) == 1 and "Holloway" in blockers[0]
