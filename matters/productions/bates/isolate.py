"""Put a page's own content in a Form XObject, so that nothing it leaves open can reach what is drawn after it.

ISO 32000-1, 8.10.1: painting a form XObject (``Do``) saves the graphics state before and restores it after, and
the form's content is a content stream of its own, parsed on its own (7.8.2). A surplus ``q`` or ``Q``, a clip,
transformation, text render mode, soft mask or alpha, a string, array, dictionary or inline image left open in
the form ends with it. A stamp drawn after ``q /LDPage Do Q`` in the page's /Contents therefore starts from the
page's initial graphics state, whatever the page's content does.

The form is the page's content as it was: BBox the page's MediaBox (nothing outside it is ever shown), Matrix
identity (form space is the page's user space), Resources the page's effective resources (inherited ones
resolved, 7.7.3.4). The page is given new resources holding only the form and whatever is drawn after it.
"""

from . import pageobjects
from .tags import move_struct_parents

mupdf = pageobjects.mupdf
FORM_RESOURCE = "LDPage"
# The keys a plain content stream's dictionary has (7.3.8.2). A stream with any other key is something else as
# well (a form or image of some page, a font file): it is copied, not changed.
PLAIN_STREAM_KEYS = {"Length", "Filter", "DecodeParms", "DL"}


def _is_plain(stream) -> bool:
    return all(mupdf.pdf_to_name(mupdf.pdf_dict_get_key(stream, index)) in PLAIN_STREAM_KEYS
               for index in range(mupdf.pdf_dict_len(stream)))


def _copy_raw(pdf, stream):
    """A new stream object with ``stream``'s encoded bytes and filters (nothing decoded)."""
    data = mupdf.pdf_load_raw_stream(stream)
    dictionary = mupdf.pdf_new_dict(pdf, 4)
    for key in (mupdf.PDF_ENUM_NAME_Filter, mupdf.PDF_ENUM_NAME_DecodeParms):
        value = mupdf.pdf_dict_get(stream, key)
        if value.m_internal:
            mupdf.pdf_dict_put(dictionary, key, mupdf.pdf_deep_copy_obj(value))
    return mupdf.pdf_add_stream(pdf, data, dictionary, 1)


class PageIsolator:
    """Turns pages of one document into ``form + what follows`` (see the module docstring). One per document:
    it remembers the content streams it has made forms of, so a stream that two pages share is copied for the
    second rather than given the first page's resources twice."""

    def __init__(self, pdf) -> None:
        self.pdf = pdf
        self.converted: set[int] = set()
        # Tagged pages made forms: page object number -> its form, for the structure tree (.tags).
        self.tagged: dict[int, object] = {}

    def form_of(self, page_obj):
        """The page's content as a form XObject (a reference), or None when the page has no content."""
        contents = mupdf.pdf_dict_get(page_obj, pageobjects.CONTENTS)
        if mupdf.pdf_is_array(contents):
            streams = [mupdf.pdf_array_get(contents, index) for index in range(mupdf.pdf_array_len(contents))]
            streams = [stream for stream in streams if mupdf.pdf_is_stream(stream)]
        else:
            streams = [contents] if mupdf.pdf_is_stream(contents) else []
        if not streams:
            return None
        if len(streams) == 1:
            form = streams[0]
            number = mupdf.pdf_to_num(form)
            if number in self.converted or not _is_plain(form):
                form = _copy_raw(self.pdf, form)
            self.converted.add(mupdf.pdf_to_num(form))
        else:
            # Content may be split between streams only at token boundaries (7.8.2): joined with a newline,
            # the streams read as they did one after the other.
            joined = b"\n".join(bytes(mupdf.pdf_load_stream(stream).fz_buffer_extract()) for stream in streams)
            form = pageobjects.add_stream(self.pdf, joined)
        mupdf.pdf_dict_put(form, mupdf.PDF_ENUM_NAME_Type, mupdf.PDF_ENUM_NAME_XObject)
        mupdf.pdf_dict_put(form, mupdf.PDF_ENUM_NAME_Subtype, mupdf.PDF_ENUM_NAME_Form)
        media_box = mupdf.pdf_dict_get_inheritable(page_obj, mupdf.PDF_ENUM_NAME_MediaBox)
        mupdf.pdf_dict_put_rect(form, mupdf.PDF_ENUM_NAME_BBox, mupdf.pdf_to_rect(media_box))
        resources = mupdf.pdf_dict_get_inheritable(page_obj, pageobjects.RESOURCES)
        if resources.m_internal and mupdf.pdf_is_dict(resources):
            if not mupdf.pdf_is_indirect(resources):
                # A copy (an inherited one belongs to a /Pages node), kept inside the form: as an object of its
                # own it was one more object per page for the save's merging of duplicates to compare, and one
                # more link in the chain of objects it merges a pass at a time.
                resources = mupdf.pdf_deep_copy_obj(resources)
            mupdf.pdf_dict_put(form, pageobjects.RESOURCES, resources)
        return form

    def isolate(self, page_obj, after: bytes, fonts: dict[str, object]) -> None:
        """Make the page's /Contents ``q /LDPage Do Q`` then ``after`` (content bytes), its resources the form
        and ``fonts`` (resource name to font reference), which ``after`` may use."""
        form = self.form_of(page_obj)
        resources = mupdf.pdf_new_dict(self.pdf, 2)
        font_dict = mupdf.pdf_dict_put_dict(resources, pageobjects.FONT, len(fonts))
        for name, font in fonts.items():
            mupdf.pdf_dict_put(font_dict, mupdf.pdf_new_name(name), font)
        lead = b""
        if form is not None:
            if move_struct_parents(page_obj, form):
                self.tagged[mupdf.pdf_to_num(page_obj)] = form
            xobjects = mupdf.pdf_dict_put_dict(resources, mupdf.PDF_ENUM_NAME_XObject, 1)
            mupdf.pdf_dict_put(xobjects, mupdf.pdf_new_name(FORM_RESOURCE), form)
            lead = f"q /{FORM_RESOURCE} Do Q\n".encode("latin-1")
        mupdf.pdf_dict_put(page_obj, pageobjects.RESOURCES, resources)
        mupdf.pdf_dict_put(page_obj, pageobjects.CONTENTS, pageobjects.add_small_stream(self.pdf, lead + after))
