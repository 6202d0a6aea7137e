"""Make a produced page an image of the document as served: annotations and form fields become page content.

A stamp is page content; a widget or annotation is drawn above all page content, so a white read-only text
field or a white-filled square over the stamp's corner hides the Bates number in every viewer and in the TIFF
images (ISO 32000-1, 12.5.5: appearance streams are drawn after the page's content). Baking them into the
content first (MuPDF's ``pdf_bake_document``, PyMuPDF's ``Document.bake``) puts the stamp on top and keeps what
the recipient sees: a field's value and an annotation's drawing. Links are not annotations with an appearance
and stay links.
"""

import pymupdf

from . import pageobjects


def has_annotations(doc: pymupdf.Document) -> bool:
    """True when any page has an annotation other than a link without an appearance (such a link has nothing
    to bake and stays a link). Reads only the page objects and their annotation dictionaries."""
    pdf = pageobjects.pdf_of(doc)
    return any(pageobjects.draws_annots(pageobjects.page_object(pdf, number)) for number in range(doc.page_count))


def flatten(doc: pymupdf.Document, widgets: bool = True) -> bool:
    """Bake every annotation, and every form field unless ``widgets`` is False, of ``doc`` into its pages'
    content, in place; return whether there was anything to bake. With widgets baked the document has no form
    left (no fields to rename or merge when documents are combined)."""
    if not has_annotations(doc) and not doc.is_form_pdf:
        return False
    doc.bake(annots=True, widgets=widgets)
    return True
