"""What a produced copy must not carry, removed at the object level before stamping (PyMuPDF; nothing from Django).

:func:`remove_active_content` (every produced document): actions that run something when the file is opened or
used — JavaScript, Launch (opens a program or file), SubmitForm and ImportData (send or read data), Rendition,
Sound, Movie, RichMediaExecute and GoToE (embedded documents) wherever an action is (the open action, a link, a
field; every /Next chain is cut) — and every trigger dictionary /AA (page open and close, field keystrokes,
document close and print: ISO 32000-1, 12.6.3), the document-level JavaScript and embedded-file name trees,
embedded files (a file specification's /EF) and file-attachment annotations, XFA forms (which carry scripts), and
page thumbnails (a picture of the page as it once was, perhaps before a redaction). A link to another file (GoToR)
is handled by :mod:`.links`. Returns what was removed, for the production's index.

:func:`scrub_carriers` (a document with redactions): text a viewer does not draw on the page, which could still
hold a redacted word: the outline (bookmarks), named destinations (links to them are first turned into links to
their pages, :func:`.links.resolve_named_links`), every name tree, page labels, the structure tree (with its
/Alt, /ActualText and /E), optional-content group names, annotation titles, subjects and comments, form-field
names and tooltips, and link URIs holding a word that was under a box. The information dictionary, XMP and
thumbnails go with :func:`.redact.scrub_document`.
"""

import re

import pymupdf

from .leaks import words
from .links import resolve_named_links

ACTIVE_ACTIONS = {"JavaScript", "Launch", "SubmitForm", "ImportData", "Rendition", "Sound", "Movie",
                  "RichMediaExecute", "GoToE"}
_ACTION_KEYS = ("A", "OpenAction", "Next", "PA")
_ACTION_TYPE = re.compile(r"/S\s*/(\w+)")
_ANNOTATION_TEXT_KEYS = ("T", "Subj", "RC", "TU", "TM")
_PAGES = re.compile(r"/Type\s*/Pages\b")
# An annotation dictionary (ISO 32000-1, 12.5.6.1, Table 169): a /Rect and one of these subtypes.
_ANNOTATION = re.compile(r"/Subtype\s*/(Link|Text|FreeText|Line|Square|Circle|Polygon|PolyLine|Highlight|Underline|"
                         r"Squiggly|StrikeOut|Stamp|Caret|Ink|Popup|FileAttachment|Sound|Movie|Widget|Screen|"
                         r"PrinterMark|TrapNet|Watermark|3D|Redact|RichMedia|Projection)\b")


def _action_type(doc: pymupdf.Document, xref: int, key: str) -> str:
    kind, value = doc.xref_get_key(xref, key)
    if kind == "xref":
        value = doc.xref_object(int(value.split()[0]), compressed=True)
    elif kind != "dict":
        return ""
    found = _ACTION_TYPE.search(value)
    return found.group(1) if found else ""


def remove_active_content(doc: pymupdf.Document) -> list[str]:
    """Remove active content from ``doc`` in place (see the module docstring); return what was removed, one
    phrase per kind with its count (``["2 JavaScript actions", "1 embedded file"]``), empty when nothing was."""
    removed: dict[str, int] = {}

    def note(what: str) -> None:
        removed[what] = removed.get(what, 0) + 1

    catalog = doc.pdf_catalog()
    for path, what in (("Names/JavaScript", "document JavaScript"), ("Names/EmbeddedFiles", "list of embedded files"),
                       ("AcroForm/XFA", "XFA form (scripts)")):
        if doc.xref_get_key(catalog, path)[0] != "null":
            doc.xref_set_key(catalog, path, "null")
            note(what)
    for xref in range(1, doc.xref_length()):
        try:
            source = doc.xref_object(xref, compressed=True)
        except Exception:  # a free or damaged object has nothing to remove
            continue
        if "/AA" in source and doc.xref_get_key(xref, "AA")[0] != "null":
            doc.xref_set_key(xref, "AA", "null")
            note("trigger actions (/AA)")
        for key in _ACTION_KEYS:
            if f"/{key}" in source and _action_type(doc, xref, key) in ACTIVE_ACTIONS:
                note(f"{_action_type(doc, xref, key)} action")
                doc.xref_set_key(xref, key, "null")
        if "/Next" in source:
            _drop_chains(doc, xref, source, note)
        if "/EF" in source and doc.xref_get_key(xref, "EF")[0] != "null":
            doc.xref_set_key(xref, "EF", "null")
            note("embedded file")
    for page in doc:
        _drop_dead_links(doc, page.xref)
        for annot in list(page.annots() or []):
            if annot.type[0] == pymupdf.PDF_ANNOT_FILE_ATTACHMENT:
                page.delete_annot(annot)
                note("file attachment")
        # A thumbnail is a picture of the page as it once was (before a redaction, or of another version).
        if doc.xref_get_key(page.xref, "Thumb")[0] != "null":
            doc.xref_set_key(page.xref, "Thumb", "null")
            note("page thumbnail")
    return [f"{count} {what}" for what, count in removed.items()]


def _drop_chains(doc: pymupdf.Document, xref: int, source: str, note) -> None:
    """Cut every action's /Next (ISO 32000-1, 12.6.2: an action or an array of actions run after it), inline or
    not, however deep: a benign head (a URI, a GoTo) can chain JavaScript or Launch, and a production needs no
    chains. An outline item's /Next (its next sibling) is no action and stays."""
    for key in ("A", "OpenAction", "PA"):
        if doc.xref_get_key(xref, f"{key}/Next")[0] != "null":
            doc.xref_set_key(xref, f"{key}/Next", "null")
            note("chained actions (/Next)")
    if _ACTION_TYPE.search(source) and "/Title" not in source and doc.xref_get_key(xref, "Next")[0] != "null":
        doc.xref_set_key(xref, "Next", "null")
        note("chained actions (/Next)")


def _drop_dead_links(doc: pymupdf.Document, page_xref: int) -> None:
    """Take off the page the links whose action was removed (neither /A nor /Dest left): MuPDF skips such a link
    when it lists a page's links, and PyMuPDF then pairs the links after it with the wrong annotations."""
    kind, value = doc.xref_get_key(page_xref, "Annots")
    if kind == "xref":
        value = doc.xref_object(int(value.split()[0]), compressed=True)
    elif kind != "array":
        return
    refs = [int(x) for x in re.findall(r"(\d+)\s+0\s+R", value)]
    kept = [x for x in refs if not (doc.xref_get_key(x, "Subtype")[1] == "/Link"
                                    and doc.xref_get_key(x, "A")[0] == "null"
                                    and doc.xref_get_key(x, "Dest")[0] == "null")]
    if len(kept) != len(refs):
        doc.xref_set_key(page_xref, "Annots", "[" + " ".join(f"{x} 0 R" for x in kept) + "]")


def scrub_carriers(doc: pymupdf.Document, redacted_words: set[str]) -> None:
    """Remove from ``doc``, a document with redactions, the text its pages do not draw (see the module docstring).
    ``redacted_words``: the words that were under its boxes (as :func:`.leaks.words` gives them), for its links."""
    resolve_named_links(doc)
    doc.set_toc([])
    catalog = doc.pdf_catalog()
    for key in ("Names", "Dests", "PageLabels", "StructTreeRoot", "MarkInfo", "Outlines"):
        if doc.xref_get_key(catalog, key)[0] != "null":
            doc.xref_set_key(catalog, key, "null")
    fields = 0
    for xref in range(1, doc.xref_length()):
        try:
            source = doc.xref_object(xref, compressed=True)
        except Exception:  # a free or damaged object has nothing to remove
            continue
        if re.search(r"/Type\s*/OCG\b", source):
            doc.xref_set_key(xref, "Name", f"(Layer {xref})")
        if "/StructParent" in source:
            doc.xref_set_key(xref, "StructParent", "null")
            doc.xref_set_key(xref, "StructParents", "null")
        is_field = "/FT" in source or ("/Kids" in source and not _PAGES.search(source))
        if (_ANNOTATION.search(source) and "/Rect" in source) or is_field:
            for key in _ANNOTATION_TEXT_KEYS:
                if key == "T" and is_field and doc.xref_get_key(xref, "T")[0] != "null":
                    fields += 1
                    doc.xref_set_key(xref, "T", f"(field{fields})")
                elif doc.xref_get_key(xref, key)[0] != "null":
                    doc.xref_set_key(xref, key, "null")
            if "/FreeText" not in source and doc.xref_get_key(xref, "Contents")[0] != "null":
                doc.xref_set_key(xref, "Contents", "null")
    for page in doc:
        for link in page.get_links():
            if link.get("kind") == pymupdf.LINK_URI and redacted_words & set(words(link.get("uri") or "")):
                page.delete_link(link)
