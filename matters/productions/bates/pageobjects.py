"""Read and write page objects through MuPDF's object API (``pymupdf.mupdf``), for work done on every page.

PyMuPDF's ``Page`` properties and ``xref_get_key``/``xref_set_key`` serialise and re-parse objects on each
call: tens of microseconds each, which on a 10,000-page production costs more than combining and saving the
pages. The functions here take the page object straight from the page tree and touch only the keys they need.
Geometry follows MuPDF's ``pdf_page_obj_transform``: the visible area is the CropBox (within the MediaBox)
turned by /Rotate, in points with the origin at its top left and y down, as PyMuPDF's ``page.rect``.
"""

import zlib

import pymupdf

mupdf = pymupdf.mupdf
ANNOTS = mupdf.PDF_ENUM_NAME_Annots
CONTENTS = mupdf.PDF_ENUM_NAME_Contents
FONT = mupdf.PDF_ENUM_NAME_Font
RESOURCES = mupdf.PDF_ENUM_NAME_Resources

Matrix = tuple[float, float, float, float, float, float]


def pdf_of(doc: pymupdf.Document):
    """The MuPDF ``PdfDocument`` under a PyMuPDF document."""
    return pymupdf._as_pdf_document(doc)


def page_object(pdf, number: int):
    """The page dictionary of page ``number`` (0-based)."""
    return mupdf.pdf_lookup_page_obj(pdf, number)


def transform(point: tuple[float, float], m: Matrix) -> tuple[float, float]:
    """``point`` mapped by the PDF matrix ``m`` (ISO 32000-1, 8.3.4: row vector times matrix)."""
    x, y = point
    return x * m[0] + y * m[2] + m[4], x * m[1] + y * m[3] + m[5]


def invert(m: Matrix) -> Matrix:
    """The inverse of ``m``. Raises ZeroDivisionError for a degenerate matrix (a page box of no area)."""
    a, b, c, d, e, f = m
    det = a * d - b * c
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    return ia, ib, ic, id_, -(e * ia + f * ic), -(e * ib + f * id_)


def geometry(page_obj) -> tuple[pymupdf.Rect, Matrix]:
    """The page's visible area (displayed-page points, as ``page.rect``) and the matrix from displayed-page
    points to PDF user space (``page.derotation_matrix * ~page.transformation_matrix``)."""
    box, ctm = mupdf.FzRect(), mupdf.FzMatrix()
    mupdf.pdf_page_obj_transform(page_obj, box, ctm)
    m = (ctm.a, ctm.b, ctm.c, ctm.d, ctm.e, ctm.f)
    corners = [transform(p, m) for p in ((box.x0, box.y0), (box.x1, box.y0), (box.x0, box.y1), (box.x1, box.y1))]
    xs, ys = [p[0] for p in corners], [p[1] for p in corners]
    return pymupdf.Rect(min(xs), min(ys), max(xs), max(ys)), invert(m)


def has_annots(page_obj) -> bool:
    """True when the page has an /Annots entry (links included)."""
    return bool(mupdf.pdf_dict_get(page_obj, ANNOTS).m_internal)


def draws_annots(page_obj) -> bool:
    """True when the page has an annotation a viewer may draw: anything but a link without an appearance
    stream (ISO 32000-1, 12.5.6.5: such a link is an area to click, at most outlined by its border)."""
    annots = mupdf.pdf_dict_get(page_obj, ANNOTS)
    if not annots.m_internal:
        return False
    if not mupdf.pdf_is_array(annots):
        return True
    for index in range(mupdf.pdf_array_len(annots)):
        annot = mupdf.pdf_array_get(annots, index)
        if not mupdf.pdf_name_eq(mupdf.pdf_dict_get(annot, mupdf.PDF_ENUM_NAME_Subtype), mupdf.PDF_ENUM_NAME_Link):
            return True
        if mupdf.pdf_dict_get(annot, mupdf.PDF_ENUM_NAME_AP).m_internal:
            return True
    return False


def add_stream(pdf, data: bytes):
    """A new stream object holding ``data`` (uncompressed; the production's save deflates it); its reference."""
    return mupdf.pdf_add_stream(pdf, mupdf.fz_new_buffer_from_copied_data(data), mupdf.PdfObj(), 0)


# zlib state for a stream of a few hundred bytes: a 512-byte window (wbits 9) and a small hash table (memLevel 2).
SMALL_WBITS = 9
SMALL_MEM_LEVEL = 2


def add_small_stream(pdf, data: bytes):
    """A new stream object holding ``data`` (a page's stamp: a few hundred bytes) deflated here; its reference.

    The production's save deflates every unfiltered stream with zlib's default state, about 256 KiB allocated
    and freed for each stream: for one small stream per page that cost as much as writing the rest of the file.
    Deflated here with a state sized to the data, the stream is copied as it is by the save."""
    packer = zlib.compressobj(6, zlib.DEFLATED, SMALL_WBITS, SMALL_MEM_LEVEL)
    packed = packer.compress(data) + packer.flush()
    dictionary = mupdf.pdf_new_dict(pdf, 1)
    mupdf.pdf_dict_put(dictionary, mupdf.PDF_ENUM_NAME_Filter, mupdf.PDF_ENUM_NAME_FlateDecode)
    return mupdf.pdf_add_stream(pdf, mupdf.fz_new_buffer_from_copied_data(packed), dictionary, 1)


PAGES_PER_NODE = 128
NODES_PER_NODE = 16


def appended_pages(doc: pymupdf.Document, count: int) -> list:
    """The page objects of the last ``count`` pages of a document that grows by appending (before
    :func:`nest_page_tree` runs again): the last kids of the root /Pages node, where an append puts them.

    Looking each up by number (``pdf_lookup_page_obj``) walks the root's kids from the start, a /Pages node of
    this module's at a time: at 10,000 pages that is most of what reading the page costs. Pages not all at the
    root's end (a tree made otherwise) are looked up by number."""
    pdf = pdf_of(doc)
    kids = mupdf.pdf_dict_getp(mupdf.pdf_trailer(pdf), "Root/Pages/Kids")
    length = mupdf.pdf_array_len(kids)
    pages = [mupdf.pdf_array_get(kids, index) for index in range(max(0, length - count), length)]
    if len(pages) == count and all(
            mupdf.pdf_name_eq(mupdf.pdf_dict_get(page, mupdf.PDF_ENUM_NAME_Type), mupdf.PDF_ENUM_NAME_Page)
            for page in pages):
        return pages
    first = doc.page_count - count
    return [page_object(pdf, number) for number in range(first, doc.page_count)]



def nest_page_tree(doc: pymupdf.Document) -> None:
    """Keep the page tree of a document that grows by appending (a production's combined PDF) shallow to search.

    MuPDF appends a page after the last one, finding it by walking the root's /Kids from the start, counting
    pages and skipping a /Pages node by its /Count (ISO 32000-1, 7.7.3.2): with every page a direct kid of the
    root, each append reads every page before it, and combining takes time in the square of the pages. Call
    after each append: once the root's trailing pages (after the /Pages nodes this made before) are
    twice PAGES_PER_NODE, the first PAGES_PER_NODE of them move under a new /Pages node in their place, and
    NODES_PER_NODE nodes of one size before them under one node. Page order, inherited attributes (the root's,
    still above them) and the root's /Count stay as they were."""
    pdf = pdf_of(doc)
    root = mupdf.pdf_dict_getp(mupdf.pdf_trailer(pdf), "Root/Pages")
    kids = mupdf.pdf_dict_get(root, mupdf.PDF_ENUM_NAME_Kids)
    count = mupdf.pdf_array_len(kids)
    if count < 2 * PAGES_PER_NODE:
        return
    first_page, end = 0, count  # the nodes made here come first, the appended pages after them
    while first_page < end:
        middle = (first_page + end) // 2
        kind = mupdf.pdf_dict_get(mupdf.pdf_array_get(kids, middle), mupdf.PDF_ENUM_NAME_Type)
        if mupdf.pdf_name_eq(kind, mupdf.PDF_ENUM_NAME_Pages):
            first_page = middle + 1
        else:
            end = middle
    if count - first_page < 2 * PAGES_PER_NODE:
        return
    _group(pdf, root, kids, first_page, PAGES_PER_NODE, PAGES_PER_NODE)
    # The nodes before the pages, merged NODES_PER_NODE of one size at a time into one node of them (as a binary
    # counter carries): the root keeps under NODES_PER_NODE nodes of each size, a few dozen at 100,000 pages,
    # where 780 nodes of 128 pages made every append skip 780 nodes to find the last page.
    first_page += 1
    while first_page >= NODES_PER_NODE:
        start = first_page - NODES_PER_NODE
        counts = {mupdf.pdf_dict_get_int(mupdf.pdf_array_get(kids, index), mupdf.PDF_ENUM_NAME_Count)
                  for index in range(start, first_page)}
        if len(counts) != 1:
            return
        _group(pdf, root, kids, start, NODES_PER_NODE, NODES_PER_NODE * counts.pop())
        first_page = start + 1


def _group(pdf, root, kids, start: int, count: int, pages: int) -> None:
    """Move ``count`` kids of the root from index ``start`` under a new /Pages node put in their place, which holds
    ``pages`` pages in all."""
    node = mupdf.pdf_add_object(pdf, mupdf.pdf_new_dict(pdf, 4))
    mupdf.pdf_dict_put(node, mupdf.PDF_ENUM_NAME_Type, mupdf.PDF_ENUM_NAME_Pages)
    mupdf.pdf_dict_put(node, mupdf.PDF_ENUM_NAME_Parent, root)
    moved = mupdf.pdf_dict_put_array(node, mupdf.PDF_ENUM_NAME_Kids, count)
    for _ in range(count):
        kid = mupdf.pdf_array_get(kids, start)
        mupdf.pdf_array_push(moved, kid)
        mupdf.pdf_dict_put(kid, mupdf.PDF_ENUM_NAME_Parent, node)
        mupdf.pdf_array_delete(kids, start)
    mupdf.pdf_dict_put_int(node, mupdf.PDF_ENUM_NAME_Count, pages)
    mupdf.pdf_array_insert(kids, node, start)
