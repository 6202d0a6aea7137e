"""Keep one copy of each font, image and form that several documents of a production embed, as they are combined.

A production's combined PDF receives its documents one by one (:func:`.stamp.stamp_and_append`). Documents
from one office share fonts, logos, ICC profiles and letterhead forms, and a document produced twice shares all of
them. MuPDF's save can merge duplicate objects (``garbage=4``), but its pass compares each object without a twin
with every object numbered before it (``removeduplicateobjs`` in MuPDF 1.28's ``pdf-write.c``): its time grows with
the square of the objects, minutes at 50,000 pages. Saved without it (``garbage=2``) the file is written in linear
time but holds every shared resource once per document (42 MB instead of 3.1 at 2,022 pages of bench/bates.py).

:class:`ResourceMerger` merges as each document arrives instead. It walks the objects the document's new pages
reach (their resources and what those refer to: fonts, their descriptors and font files, images, ICC profiles,
form XObjects and their resource dictionaries), keys each by a hash of its dictionary, with every reference in it
written as the kept object it points at, and of its stream bytes; an object whose key an earlier document's
object has is a duplicate: its referrers are pointed at the earlier object and it is deleted. References are
resolved before their referrer is keyed (a Merkle tree over the object graph), so a font file merged makes its
descriptor, its font, the resource dictionary and the form holding them equal in turn. The cost is per object a
document adds to the resources, and per page its content form, never per object of the combined PDF.

Not merged: pages, the page's own content streams (each holds the page's stamp, distinct), and annotations and
what is reached only through them (an annotation belongs to one page, ISO 32000-1 12.5.2; a form field is one
field). Streams are compared by their bytes as stored with their filters as part of the key: copies of one file
store the same bytes, and decoding an image to compare it would cost more than writing it.
"""

import hashlib
import re

from . import pageobjects

mupdf = pageobjects.mupdf

# A reference (``12 0 R``) in MuPDF's tight printing of an object, or a string, skipped so that text inside it is
# never read as a reference. MuPDF escapes every parenthesis and backslash inside a printed literal string.
_TOKEN = re.compile(rb"\((?:\\.|[^\\)])*\)|(?<![\d.+-])(\d+) (\d+) R")
_PAGE_TYPES = {"Page", "Pages"}
SHORT_ARRAY = 8  # items: an array this short is read item by item, a longer one printed first (one call)
_TYPE = mupdf.PDF_ENUM_NAME_Type.m_internal
_CONTENTS = pageobjects.CONTENTS.m_internal
_ANNOTS = pageobjects.ANNOTS.m_internal


class ResourceMerger:
    """Merges the resources of the documents appended to one combined PDF (see the module docstring). Create one
    per combined PDF; call :meth:`merge` after each document is appended, before anything else changes it.

    ``kept`` maps each key (a SHA-256 digest) to the number of the object kept for it; ``merged`` counts the
    objects found to be duplicates (deleted unless ``delete=False``). The work goes through MuPDF's low-level
    calls (``mupdf.ll_*``, raw pointers): printing an object through the class wrappers, a new buffer and output
    each time, cost 15 us against 2.6."""

    def __init__(self, pdf) -> None:
        self.pdf = pdf.m_internal
        self.kept: dict[bytes, int] = {}
        self.merged = 0
        self._first_new = self._end = 0
        self._canonical: dict[int, int] = {}
        self._open: set[int] = set()
        self._duplicates: list[int] = []
        self._buffer = None
        self._out = None

    def merge(self, pages: list, first_new_object: int, delete: bool = True) -> int:
        """Merge the resources of ``pages`` (page objects: the document just appended), whose objects are
        numbered from ``first_new_object`` on (the combined PDF's ``xref_length()`` before the append). Return
        how many of its objects were duplicates.

        With ``delete`` the duplicates are deleted at once, so that a long production holds each shared resource
        once in memory too: every object that can refer to them was among those walked (the append copied only
        what the pages reach). ``delete=False`` leaves them to the save's garbage collection, for a combined PDF
        with objects outside its pages that may refer to them (kept form fields: the AcroForm's resources)."""
        self._first_new, self._canonical, self._open, self._duplicates = first_new_object, {}, set(), []
        self._end = mupdf.ll_pdf_xref_len(self.pdf)
        self._buffer = mupdf.ll_fz_new_buffer(4096)
        self._out = mupdf.ll_fz_new_output_with_buffer(self._buffer)
        try:
            for page in pages:
                self._walk_page(page.m_internal)
        finally:
            mupdf.ll_fz_close_output(self._out)
            mupdf.ll_fz_drop_output(self._out)
            mupdf.ll_fz_drop_buffer(self._buffer)
            self._out = self._buffer = None
        if delete:
            for duplicate in self._duplicates:
                mupdf.ll_pdf_delete_object(self.pdf, duplicate)
        self.merged += len(self._duplicates)
        return len(self._duplicates)

    def _print(self, obj) -> bytes:
        """``obj`` (a raw pointer) printed tight, non-ASCII bytes escaped (equal text, equal objects); a stream's
        dictionary only."""
        mupdf.ll_fz_clear_buffer(self._buffer)
        mupdf.ll_pdf_print_obj(self._out, mupdf.ll_pdf_resolve_indirect(obj), 1, 1)
        mupdf.ll_fz_flush_output(self._out)
        return mupdf.ll_fz_buffer_to_bytes_internal(self._buffer, 0)

    def _walk_page(self, page) -> None:
        # A page's content streams (each holds its stamp) and its annotations (an annotation belongs to one page)
        # are walked, their references pointed at kept objects, but never merged, nor is what only they reach.
        unkeyed = set()
        for key in (_CONTENTS, _ANNOTS):
            value = mupdf.ll_pdf_dict_get(page, key)
            if mupdf.ll_pdf_is_indirect(value):
                unkeyed.add(mupdf.ll_pdf_to_num(value))
            if mupdf.ll_pdf_is_array(value):
                unkeyed.update(mupdf.ll_pdf_to_num(mupdf.ll_pdf_array_get(value, index))
                               for index in range(mupdf.ll_pdf_array_len(value)))
        moved: dict[int, int] = {}
        references = [int(match[1]) for match in _TOKEN.finditer(self._print(page)) if match[1]]
        for number in references:
            kept = self._canonical_of(number, keyed=number not in unkeyed)
            if kept != number:
                moved[number] = kept
        if moved:
            self._repoint(page, moved, sum(number in moved for number in references))

    def _canonical_of(self, number: int, keyed: bool = True) -> int:
        """The number of the object kept for object ``number`` (itself when it has no earlier twin)."""
        if number < self._first_new or number >= self._end or number in self._open:
            # An earlier document's object, a number the file has no object for, or a reference back to an
            # object being walked (a cycle).
            return number
        if number in self._canonical:
            return self._canonical[number]
        obj = mupdf.ll_pdf_load_object(self.pdf, number)
        try:
            return self._canonical_of_loaded(number, obj, keyed)
        finally:
            mupdf.ll_pdf_drop_obj(obj)

    def _canonical_of_loaded(self, number: int, obj, keyed: bool) -> int:
        if mupdf.ll_pdf_is_dict(obj) and mupdf.ll_pdf_to_name(mupdf.ll_pdf_dict_get(obj, _TYPE)) in _PAGE_TYPES:
            self._canonical[number] = number  # a page or page-tree node (a link's target, a /Parent)
            return number
        self._open.add(number)
        moved: dict[int, int] = {}
        references: list[int] = []

        def resolve(match: re.Match) -> bytes:
            if not match[1]:
                return match[0]
            reference = int(match[1])
            references.append(reference)
            kept = self._canonical_of(reference, keyed)
            if kept != reference:
                moved[reference] = kept
            return b"%d 0 R" % kept

        # The object as it reads once its references point at kept objects: its key, whether or not it is
        # rewritten (a duplicate is deleted, not rewritten).
        text = self._print(obj)
        if b" R" in text:  # most font files, images and widths arrays refer to nothing
            text = _TOKEN.sub(resolve, text)
        self._open.discard(number)
        kept = number
        if keyed:
            digest = hashlib.sha256(text)
            if mupdf.ll_pdf_obj_num_is_stream(self.pdf, number):
                digest.update(b"\0stream\0")
                stream = mupdf.ll_pdf_load_raw_stream_number(self.pdf, number)
                digest.update(mupdf.ll_fz_buffer_to_bytes_internal(stream, 0))
                mupdf.ll_fz_drop_buffer(stream)
            kept = self.kept.setdefault(digest.digest(), number)
        if kept != number:
            self._duplicates.append(number)
        elif moved:
            self._repoint(obj, moved, sum(reference in moved for reference in references))
        self._canonical[number] = kept
        return kept

    def _repoint(self, container, moved: dict[int, int], remaining: int) -> int:
        """Point the references inside ``container`` (a raw dictionary or array, and those inside it) to objects
        numbered in ``moved`` at the objects that replace them; ``remaining`` is how many such references it
        holds (counted in its printed form), and the walk stops once none is left: a page's /Resources come
        before its boxes and /Parent. Return how many are left (0 unless the count was wrong).

        An array longer than SHORT_ARRAY is entered only when its printed form holds one of those references: a
        font's /Widths of hundreds of numbers costs one print instead of three calls per number."""
        is_dict = mupdf.ll_pdf_is_dict(container)
        length = mupdf.ll_pdf_dict_len(container) if is_dict else mupdf.ll_pdf_array_len(container)
        for index in range(length):
            if remaining <= 0:
                break
            value = (mupdf.ll_pdf_dict_get_val(container, index) if is_dict
                     else mupdf.ll_pdf_array_get(container, index))
            if mupdf.ll_pdf_is_indirect(value):
                target = moved.get(mupdf.ll_pdf_to_num(value))
                if target is None:
                    continue
                reference = mupdf.ll_pdf_new_indirect(self.pdf, target, 0)
                if is_dict:
                    mupdf.ll_pdf_dict_put_drop(container, mupdf.ll_pdf_dict_get_key(container, index), reference)
                else:
                    mupdf.ll_pdf_array_put_drop(container, index, reference)
                remaining -= 1
            elif mupdf.ll_pdf_is_dict(value) or (
                    mupdf.ll_pdf_is_array(value) and mupdf.ll_pdf_array_len(value) <= SHORT_ARRAY):
                remaining = self._repoint(value, moved, remaining)
            elif mupdf.ll_pdf_is_array(value):
                inside = sum(1 for match in _TOKEN.finditer(self._print(value))
                             if match[1] and int(match[1]) in moved)
                if inside:
                    remaining -= inside - self._repoint(value, moved, inside)
        return remaining
