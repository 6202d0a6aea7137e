"""Real redactions and withheld-document placeholders for produced pages (PyMuPDF; nothing from Django).

:func:`apply_boxes` turns each box into a redaction annotation and applies it (PyMuPDF ``Page.apply_redactions``,
which rewrites the page's content): text whose characters overlap a box is deleted from the content stream,
image pixels under it are blanked (``PDF_REDACT_IMAGE_PIXELS``), and vector paths touching it are removed
(``PDF_REDACT_LINE_ART_REMOVE_IF_TOUCHED``: a signature or drawing crossing a box goes entirely rather than
surviving under the paint). The box is then filled black with its reason code in white. The page is checked
afterwards: a box that still has text under it raises :class:`RedactionFailed`.

MuPDF's content rewriting can move or cut text it should leave alone on some pages (glyph positions in ``TJ``
arrays after a removed glyph; glyphs of the next line whose boxes overlap: PyMuPDF issues #2210, #2957, #1809).
:func:`apply_boxes` therefore compares every word outside the boxes before and after and reports a page where
one moved or changed; :func:`redact_as_image` then makes that page again from the original as a page image with
the boxes painted black and the words outside them as invisible text (searchable, as after OCR), so a produced
page never shows text out of place.

Boxes are in points on the page as displayed (top-left origin, y down), as the viewer draws them.
"""

import pymupdf

SHIFT_TOLERANCE_PT = 0.5
# The invisible words of a page made as an image: MuPDF's built-in CID font reference with a Unicode CMap, so
# every character a word has (curly quotes, accents, CJK) is searchable; nothing is embedded.
INVISIBLE_FONT = "china-s"
RASTER_DPI = 300

FONT = "helv"
MAX_REASON_FONT_SIZE = 8.0
MIN_REASON_FONT_SIZE = 4.0
PLACEHOLDER_TITLE = "DOCUMENT WITHHELD ON THE BASIS OF PRIVILEGE"


class RedactionFailed(Exception):
    """A box still had text under it after redaction: the document must not be produced."""


def _reason_font_size(rect: pymupdf.Rect, reason: str) -> float | None:
    """The largest size up to MAX_REASON_FONT_SIZE at which ``reason`` fits in the box, or None (box too small)."""
    size = min(MAX_REASON_FONT_SIZE, rect.height * 0.7)
    width = pymupdf.get_text_length(reason, fontname=FONT, fontsize=size) if size > 0 else 0
    if width > rect.width - 2:
        size = size * (rect.width - 2) / width if width else 0
    return size if size >= MIN_REASON_FONT_SIZE else None


def _centre(word) -> pymupdf.Point:
    return pymupdf.Point((word[0] + word[2]) / 2, (word[1] + word[3]) / 2)


def _middle(word, page: pymupdf.Page) -> pymupdf.Rect:
    """The word's box on the displayed page, cut to the middle half of its line height."""
    rect = (pymupdf.Rect(word[:4]) * page.rotation_matrix).normalize()
    quarter = rect.height / 4
    return pymupdf.Rect(rect.x0, rect.y0 + quarter, rect.x1, rect.y1 - quarter)


def _unmoved(before: list, after: list) -> bool:
    """True when every word of ``before`` is in ``after`` with the same text within SHIFT_TOLERANCE_PT."""
    remaining: dict[str, list] = {}
    for word in after:
        remaining.setdefault(word[4], []).append(word)
    for word in before:
        candidates = remaining.get(word[4], [])
        match = next((c for c in candidates if abs(c[0] - word[0]) <= SHIFT_TOLERANCE_PT
                      and abs(c[1] - word[1]) <= SHIFT_TOLERANCE_PT), None)
        if match is None:
            return False
        candidates.remove(match)
    return True


def _drop_annotations_over(page: pymupdf.Page, rects: list[pymupdf.Rect]) -> None:
    """Delete every annotation and form field touching a box: ``apply_redactions`` leaves them, and a production
    bakes annotations into the page afterwards, which would draw a note's or a field's text over the box."""
    for widget in list(page.widgets() or []):
        if any(widget.rect.intersects(rect) for rect in rects):
            page.delete_widget(widget)
    for annot in list(page.annots() or []):
        if annot.type[0] != pymupdf.PDF_ANNOT_REDACT and any(annot.rect.intersects(rect) for rect in rects):
            page.delete_annot(annot)


def apply_boxes(page: pymupdf.Page, boxes: list[tuple[tuple[float, float, float, float], str]]) -> bool:
    """Redact ``boxes`` (each ((x0, y0, x1, y1) displayed, reason code)) on ``page`` for real; see the module
    docstring. Returns False when MuPDF moved or cut a word outside the boxes (the page must then be made with
    :func:`redact_as_image` from the original). Raises RedactionFailed if any text is left under a box."""
    if not boxes:
        return True
    to_pdf = page.derotation_matrix
    pdf_rects = [(pymupdf.Rect(shown) * to_pdf).normalize() if page.rotation else pymupdf.Rect(shown)
                 for shown, _ in boxes]
    # Words clear of every box (their middle half in height: line boxes of neighbouring lines overlap) must
    # come out of the redaction unchanged and in place.
    shown_rects = [pymupdf.Rect(shown) for shown, _ in boxes]
    outside = [w for w in page.get_text("words") if not any(_middle(w, page).intersects(r) for r in shown_rects)]
    _drop_annotations_over(page, pdf_rects + shown_rects)
    rects = []
    for (shown, reason), rect in zip(boxes, pdf_rects):
        rect = rect & page.mediabox if not rect.is_empty else rect
        rects.append(rect)
        size = _reason_font_size(pymupdf.Rect(shown), reason)
        page.add_redact_annot(
            rect, text=reason if size else None, fontname=FONT, fontsize=size or MAX_REASON_FONT_SIZE,
            align=pymupdf.TEXT_ALIGN_CENTER, fill=(0, 0, 0), text_color=(1, 1, 1), cross_out=False,
        )
    page.apply_redactions(images=pymupdf.PDF_REDACT_IMAGE_PIXELS,
                          graphics=pymupdf.PDF_REDACT_LINE_ART_REMOVE_IF_TOUCHED,
                          text=pymupdf.PDF_REDACT_TEXT_REMOVE)
    reasons = {reason for _, reason in boxes}
    words = [w for w in page.get_text("words") if w[4] not in reasons]
    if not _unmoved(outside, words):
        return False
    for rect in rects:
        left = [w[4] for w in words if pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2) in rect]
        if left:
            raise RedactionFailed(f"text is still under a redaction box on page {page.number + 1}: "
                                  f"{len(left)} word(s)")
    return True


def redact_as_image(page: pymupdf.Page, boxes: list[tuple[tuple[float, float, float, float], str]],
                    dpi: int = RASTER_DPI) -> pymupdf.Document:
    """A one-page PDF of ``page`` (from the original) as a ``dpi`` image, upright as displayed, with ``boxes``
    painted black and labelled, and every word clear of the boxes as invisible text at its place (render mode
    3, INVISIBLE_FONT). Nothing under a box survives:
    the box's pixels are black and no word touching it (in the middle half of its line height, since line boxes
    of neighbouring lines overlap) is written."""
    shown_rects = [pymupdf.Rect(shown) for shown, _ in boxes]
    pixmap = page.get_pixmap(dpi=dpi, alpha=False)
    scale = dpi / 72
    for rect in shown_rects:
        pixel_box = pymupdf.IRect(int(rect.x0 * scale), int(rect.y0 * scale), int(rect.x1 * scale) + 1,
                                  int(rect.y1 * scale) + 1) & pixmap.irect
        pixmap.set_rect(pixel_box, (0,) * pixmap.n)
    doc = pymupdf.open()
    made = doc.new_page(width=page.rect.width, height=page.rect.height)
    made.insert_image(made.rect, pixmap=pixmap)
    for word in page.get_text("words"):
        rect = (pymupdf.Rect(word[:4]) * page.rotation_matrix).normalize()
        # A word whose middle half touches a box is left out: part of it is under the box.
        if any(_middle(word, page).intersects(box) for box in shown_rects) or rect.height <= 0:
            continue
        # As large as the line allows, but no wider than the word: a search then finds it where it is shown.
        unit_width = pymupdf.get_text_length(word[4], fontname=INVISIBLE_FONT, fontsize=1)
        size = min(rect.height * 0.75, rect.width / unit_width if unit_width else rect.height)
        # MuPDF boxes this font's glyphs from 1.0 size above the baseline to 0.2 below: centre on the word.
        baseline = (rect.y0 + rect.y1) / 2 + 0.4 * size
        made.insert_text((rect.x0, baseline), word[4], fontname=INVISIBLE_FONT, fontsize=size, render_mode=3)
    for rect, (_, reason) in zip(shown_rects, boxes):
        size = _reason_font_size(rect, reason)
        if size:
            made.insert_textbox(rect, reason, fontname=FONT, fontsize=size, color=(1, 1, 1),
                                align=pymupdf.TEXT_ALIGN_CENTER)
    return doc


def scrub_document(doc: pymupdf.Document) -> None:
    """Remove what a redacted document could still carry outside its pages: document information and XMP
    metadata, embedded files, JavaScript, thumbnails and annotation replies. Page content is left alone."""
    doc.scrub(attached_files=True, clean_pages=False, embedded_files=True, hidden_text=False, javascript=True,
              metadata=True, redactions=False, remove_links=False, reset_fields=False, reset_responses=True,
              thumbnails=True, xml_metadata=True)


def placeholder_document(basis: str, width: float = 612, height: float = 792) -> pymupdf.Document:
    """A one-page PDF standing in for a withheld document: the title and the privilege ``basis``
    (text in Windows-1252; base-14 Helvetica shows nothing else)."""
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    box = pymupdf.Rect(72, height / 2 - 80, width - 72, height / 2 + 80)
    page.insert_textbox(box, f"{PLACEHOLDER_TITLE}\n\nPrivilege basis: {basis}", fontname=FONT, fontsize=16,
                        align=pymupdf.TEXT_ALIGN_CENTER)
    return doc
