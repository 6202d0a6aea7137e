"""Keys that tell a produced page is an exhibit page unchanged (PyMuPDF only; nothing from Django, so ingest's
child computes them too).

A page's key (:func:`ingested_key`, 20 bytes of SHA-1) digests what a viewer reads its text from: its content
decoded (several streams joined by a newline, as :mod:`.isolate` joins them into one form), its resources by
content (:class:`Digests`: every object they refer to, fonts, ToUnicode maps, images and forms, by its bytes and
those of what it refers to) and its MediaBox. Ingest works out the key of each page whose text it read from the
text layer, from the very document it read (:func:`page_keys`), and stores it with the text
(``Page.text_key``); the leak scan works out the key of each stamped page's own content (:func:`produced_key`),
and a page whose key is one ingest stored holds the text stored with it (:class:`.leaks.IngestedPages`).
"""

import hashlib
import re

import pymupdf


class _Unprovable(Exception):
    """An object graph that cannot be digested (a cycle, too deep, an object MuPDF cannot read)."""


_M = pymupdf.mupdf
_REF = re.compile(r"\b(\d+) 0 R\b")
_MAX_DEPTH = 64
# What the stamp's page content starts with (bates/isolate.py): the page's own content drawn as one form.
_FORM_LEAD = b"q /LDPage Do Q\n"


def _tight(obj) -> str:
    """A direct object's syntax as :meth:`pymupdf.Document.xref_object` prints it (``compressed=True``)."""
    return pymupdf.JM_EscapeStrFromBuffer(pymupdf.JM_object_to_buffer(_M.pdf_resolve_indirect(obj), 1, 0))


def decoded(stream) -> bytes:
    """A stream object's bytes, its filters undone."""
    return bytes(_M.pdf_load_stream(stream).fz_buffer_extract())


def raw(stream) -> bytes:
    """A stream object's bytes as the file holds them."""
    return bytes(_M.pdf_load_raw_stream(stream).fz_buffer_extract())


class Digests:
    """Digests of one document's objects by content: an object's tight syntax with each reference marked and the
    digests of what the references point to, in order, and a stream's raw bytes; so one font copied into another
    file (renumbered, merged with its duplicates) digests the same, and a font that differs in any byte of it or
    of anything it refers to does not. The syntax each digest read is kept for the scan (:meth:`text`)."""

    def __init__(self, doc: pymupdf.Document):
        self.doc = doc
        self.pdf = pymupdf._as_pdf_document(doc)
        self._done: dict[int, bytes] = {}
        self._open: set[int] = set()
        self._texts: dict[int, str] = {}  # objects' syntax read for a digest, for the scan to read once
        self._resources: dict[str, bytes] = {}

    def text(self, xref: int) -> str:
        """Object ``xref``'s tight syntax (kept from its digest, or read now)."""
        text = self._texts.pop(xref, None)
        return self.doc.xref_object(xref, compressed=True) if text is None else text

    def of_xref(self, xref: int) -> bytes:
        done = self._done.get(xref)
        if done is not None:
            return done
        if xref in self._open or len(self._open) > _MAX_DEPTH:
            raise _Unprovable(xref)
        self._open.add(xref)
        try:
            self._texts[xref] = text = self.doc.xref_object(xref, compressed=True)
            digest = hashlib.sha1(self.of_text(text))
            if _M.pdf_obj_num_is_stream(self.pdf, xref):
                digest.update(hashlib.sha1(bytes(_M.pdf_load_raw_stream_number(self.pdf, xref)
                                                 .fz_buffer_extract())).digest())
        except _Unprovable:
            raise
        except Exception as exc:  # a damaged object cannot be shown identical to anything
            raise _Unprovable(xref) from exc
        finally:
            self._open.discard(xref)
        self._done[xref] = done = digest.digest()
        return done

    def of_text(self, text: str) -> bytes:
        """``text`` with each reference replaced by a mark (NUL and ``R``; a NUL of the text itself doubled, so
        no mark can be mistaken for text), then the digests of what the references point to, in their order."""
        refs = _REF.findall(text)
        marked = text.replace("\x00", "\x00\x00")
        if not refs:
            return marked.encode()
        return _REF.sub("\x00R", marked).encode() + b"\x00|" + b"".join(self.of_xref(int(n)) for n in refs)

    def of_resources(self, obj) -> bytes:
        """A resource dictionary's digest, the same whether it is an object of its own or written inline."""
        if not _M.pdf_is_dict(obj):
            return b""
        text = _tight(obj)
        if text not in self._resources:  # the pages of a document often share one
            self._resources[text] = hashlib.sha1(self.of_text(text)).digest()
        return self._resources[text]


def streams(page) -> list:
    """The content streams of page object ``page``, in order."""
    contents = _M.pdf_dict_get(page, _M.PDF_ENUM_NAME_Contents)
    if _M.pdf_is_array(contents):
        return [item for item in (_M.pdf_array_get(contents, i) for i in range(_M.pdf_array_len(contents)))
                if _M.pdf_is_stream(item)]
    return [contents] if _M.pdf_is_stream(contents) else []


def page_box(rect_obj) -> tuple[float, ...]:
    rect = _M.pdf_to_rect(rect_obj)
    return tuple(round(v, 2) for v in (rect.x0, rect.y0, rect.x1, rect.y1))


def annotations_other_than_links(page) -> bool:
    annots = _M.pdf_dict_get(page, _M.PDF_ENUM_NAME_Annots)
    if _M.pdf_is_null(annots):
        return False
    if not _M.pdf_is_array(annots):
        return True
    return any(not _M.pdf_name_eq(_M.pdf_dict_get(_M.pdf_array_get(annots, i), _M.PDF_ENUM_NAME_Subtype),
                                  _M.PDF_ENUM_NAME_Link) for i in range(_M.pdf_array_len(annots)))


def _page_key(content: bytes, resources: bytes, box: tuple[float, ...]) -> bytes:
    return hashlib.sha1(hashlib.sha1(content).digest() + f"|{resources.hex()}|{box}".encode()).digest()


def ingested_key(digests: Digests, index: int) -> bytes | None:
    """The key of page ``index`` (from 0) of an exhibit's PDF as ingest read it: its content decoded (several
    streams joined by a newline, as :mod:`.isolate` joins them into one form), its effective resources by content
    (:class:`Digests`) and its MediaBox; None when it cannot be worked out, or the page has annotations other
    than links (ingest's text may hold theirs)."""
    try:
        page = _M.pdf_lookup_page_obj(digests.pdf, index)
        page_streams = streams(page)
        if not page_streams or annotations_other_than_links(page):
            return None
        content = b"\n".join(map(decoded, page_streams))
        resources = digests.of_resources(_M.pdf_dict_get_inheritable(page, _M.PDF_ENUM_NAME_Resources))
        return _page_key(content, resources, page_box(_M.pdf_dict_get_inheritable(page, _M.PDF_ENUM_NAME_MediaBox)))
    except Exception:  # a page that cannot be digested is not shown identical: it is read
        return None


def seen_key(digests: Digests, index: int) -> bytes | None:
    """The key under which page ``index`` (from 0) extracts to the same text as another page of the same key: its
    content streams (each by its dictionary and encoded bytes, so the same bytes under another filter differ), its
    effective resources by content (:class:`Digests`), MediaBox, CropBox and rotation. None when the page has
    annotations other than links (whose appearances extraction reads too) or cannot be digested."""
    try:
        page = _M.pdf_lookup_page_obj(digests.pdf, index)
        if annotations_other_than_links(page):
            return None
        key = hashlib.sha1(b"".join(digests.of_xref(_M.pdf_to_num(stream)) for stream in streams(page)))
        key.update(b"|" + digests.of_resources(_M.pdf_dict_get_inheritable(page, _M.PDF_ENUM_NAME_Resources)))
        boxes = (_M.PDF_ENUM_NAME_MediaBox, _M.PDF_ENUM_NAME_CropBox)
        key.update(repr([page_box(_M.pdf_dict_get_inheritable(page, box)) for box in boxes]).encode())
        key.update(b"|%d" % _M.pdf_to_int(_M.pdf_dict_get_inheritable(page, _M.PDF_ENUM_NAME_Rotate)))
        return key.digest()
    except Exception:  # a page whose content or resources cannot be digested is read
        return None


def page_keys(doc: pymupdf.Document) -> list[bytes | None]:
    """The :func:`ingested_key` of every page of ``doc``, in page order (None where there is none)."""
    digests = Digests(doc)
    return [ingested_key(digests, index) for index in range(doc.page_count)]


def produced_key(digests: Digests, index: int) -> tuple[bytes, int, bytes] | None:
    """The key (as :func:`ingested_key`) of the own content of stamped page ``index``, the form XObject holding
    it and that content; None unless the page draws exactly ``q /LDPage Do Q`` and a stamp drawing no other
    XObject, the form has no matrix, its box is the page's MediaBox, and the page has no annotation but links."""
    try:
        page = _M.pdf_lookup_page_obj(digests.pdf, index)
        page_streams = streams(page)
        if len(page_streams) != 1 or annotations_other_than_links(page):
            return None
        wrapper = decoded(page_streams[0])
        if not wrapper.startswith(_FORM_LEAD) or wrapper.count(b"Do") != 1:
            return None
        resources = _M.pdf_dict_get(page, _M.PDF_ENUM_NAME_Resources)
        form = _M.pdf_dict_gets(_M.pdf_dict_get(resources, _M.PDF_ENUM_NAME_XObject), "LDPage")
        if not (_M.pdf_is_indirect(form) and _M.pdf_is_stream(form)):
            return None
        box = page_box(_M.pdf_dict_get(form, _M.PDF_ENUM_NAME_BBox))
        if (not _M.pdf_is_null(_M.pdf_dict_get(form, _M.PDF_ENUM_NAME_Matrix))
                or box != page_box(_M.pdf_dict_get_inheritable(page, _M.PDF_ENUM_NAME_MediaBox))):
            return None
        content = decoded(form)
        key = _page_key(content, digests.of_resources(_M.pdf_dict_get(form, _M.PDF_ENUM_NAME_Resources)), box)
        return key, _M.pdf_to_num(form), content
    except Exception:  # read the page
        return None
