"""Real redactions and withheld-document placeholders for produced pages (PyMuPDF; nothing from Django).

:func:`apply_boxes` turns each box into a redaction annotation and applies it (PyMuPDF ``Page.apply_redactions``,
which rewrites the page's content): text whose characters overlap a box is deleted from the content stream,
image pixels under it are blanked (``PDF_REDACT_IMAGE_PIXELS``), and vector paths touching it are removed
(``PDF_REDACT_LINE_ART_REMOVE_IF_TOUCHED``: a signature or drawing crossing a box goes entirely rather than
surviving under the paint). The box is then filled black with its reason code in white. The page is checked
afterwards: a box that still has text under it raises :class:`RedactionFailed`.

Boxes are in points on the page as displayed (top-left origin, y down), as the viewer draws them.
"""

import pymupdf

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


def apply_boxes(page: pymupdf.Page, boxes: list[tuple[tuple[float, float, float, float], str]]) -> None:
    """Redact ``boxes`` (each ((x0, y0, x1, y1) displayed, reason code)) on ``page`` for real; see the module
    docstring. Raises RedactionFailed if any text is left under a box."""
    if not boxes:
        return
    to_pdf = page.derotation_matrix
    rects = []
    for shown, reason in boxes:
        rect = (pymupdf.Rect(shown) * to_pdf).normalize() if page.rotation else pymupdf.Rect(shown)
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
    for rect in rects:
        left = [w[4] for w in words if pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2) in rect]
        if left:
            raise RedactionFailed(f"text is still under a redaction box on page {page.number + 1}: "
                                  f"{len(left)} word(s)")


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
