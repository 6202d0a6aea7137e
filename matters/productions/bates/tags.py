"""Keep a tagged PDF's structure pointing at its content once each page's content is a form of its own.

ISO 32000-1, 14.7.4: a structure element names its content by marked-content identifiers (MCIDs) of a content
stream. An integer in an element's /K is an MCID in the content stream of the page /Pg (its own or inherited
from its parent); a marked-content reference (/Type /MCR) names another stream, a form XObject, by /Stm
(14.7.4.2). A page's /StructParents is the key of its entry in the parent tree, the parents of its MCIDs in order
(14.7.4.4); a form XObject whose content has MCIDs has a /StructParents of its own.

:mod:`.isolate` moves a page's content into a form XObject, its MCIDs with it. :func:`retarget_structure` then
makes every reference to that page's content a marked-content reference to the form (/Stm), and the form takes
the page's /StructParents, so a screen reader or an accessibility check still finds each element's content in
the produced copy. The Bates stamp itself is not in the structure.
"""

from . import pageobjects

mupdf = pageobjects.mupdf
PG = mupdf.pdf_new_name("Pg")  # names MuPDF has no constant for
K = mupdf.PDF_ENUM_NAME_K
STM = mupdf.pdf_new_name("Stm")
MCID = mupdf.PDF_ENUM_NAME_MCID
TYPE = mupdf.PDF_ENUM_NAME_Type
STRUCT_PARENTS = mupdf.PDF_ENUM_NAME_StructParents


def move_struct_parents(page_obj, form) -> bool:
    """Give ``form`` (the page's content, now a form XObject) the page's /StructParents; return whether the page
    had one (its content is tagged)."""
    key = mupdf.pdf_dict_get(page_obj, STRUCT_PARENTS)
    if not mupdf.pdf_is_int(key):
        return False
    mupdf.pdf_dict_put(form, STRUCT_PARENTS, mupdf.pdf_new_int(mupdf.pdf_to_int(key)))
    mupdf.pdf_dict_del(page_obj, STRUCT_PARENTS)
    return True


def retarget_structure(pdf, forms: dict[int, object]) -> int:
    """Point the structure tree of ``pdf`` at the forms that now hold pages' content: ``forms`` maps a page's
    object number to its form (a reference). Return how many content references were changed. A document without
    a structure tree is left as it is."""
    root = mupdf.pdf_dict_getp(mupdf.pdf_trailer(pdf), "Root/StructTreeRoot")
    if not forms or not mupdf.pdf_is_dict(root):
        return 0
    changed = 0
    seen: set[int] = set()
    stack = [(root, None)]
    while stack:
        element, page = stack.pop()
        if mupdf.pdf_is_indirect(element):
            if mupdf.pdf_to_num(element) in seen:
                continue
            seen.add(mupdf.pdf_to_num(element))
        own_page = mupdf.pdf_dict_get(element, PG)
        if mupdf.pdf_is_indirect(own_page):
            page = own_page
        kids = mupdf.pdf_dict_get(element, K)
        if mupdf.pdf_is_array(kids):
            for index in range(mupdf.pdf_array_len(kids)):
                kid = mupdf.pdf_array_get(kids, index)
                if mupdf.pdf_is_int(kid):
                    reference = _reference(pdf, kid, page, forms)
                    if reference is not None:
                        mupdf.pdf_array_put(kids, index, reference)
                        changed += 1
                else:
                    changed += _visit(pdf, kid, page, forms, stack)
        elif mupdf.pdf_is_int(kids):
            reference = _reference(pdf, kids, page, forms)
            if reference is not None:
                mupdf.pdf_dict_put(element, K, reference)
                changed += 1
        elif mupdf.pdf_is_dict(kids):
            changed += _visit(pdf, kids, page, forms, stack)
    return changed


def _visit(pdf, kid, page, forms: dict[int, object], stack: list) -> int:
    """A dictionary kid: a marked-content reference is pointed at its page's form (1 returned when changed), an
    object reference left alone, a structure element put on ``stack`` to be read."""
    if not mupdf.pdf_is_dict(kid):
        return 0
    kind = mupdf.pdf_dict_get(kid, TYPE)
    if mupdf.pdf_name_eq(kind, mupdf.PDF_ENUM_NAME_OBJR):
        return 0
    if mupdf.pdf_name_eq(kind, mupdf.PDF_ENUM_NAME_MCR):
        if mupdf.pdf_dict_get(kid, STM).m_internal:
            return 0  # already names its stream (a form of the page's own)
        own_page = mupdf.pdf_dict_get(kid, PG)
        target = own_page if mupdf.pdf_is_indirect(own_page) else page
        form = _form_of(target, forms)
        if form is None:
            return 0
        mupdf.pdf_dict_put(kid, PG, target)
        mupdf.pdf_dict_put(kid, STM, form)
        return 1
    stack.append((kid, page))
    return 0


def _reference(pdf, mcid, page, forms: dict[int, object]):
    """A marked-content reference to MCID ``mcid`` of ``page``'s form, or None when the page was not isolated."""
    form = _form_of(page, forms)
    if form is None:
        return None
    reference = mupdf.pdf_new_dict(pdf, 4)
    mupdf.pdf_dict_put(reference, TYPE, mupdf.PDF_ENUM_NAME_MCR)
    mupdf.pdf_dict_put(reference, PG, page)
    mupdf.pdf_dict_put(reference, STM, form)
    mupdf.pdf_dict_put(reference, MCID, mupdf.pdf_new_int(mupdf.pdf_to_int(mcid)))
    return reference


def _form_of(page, forms: dict[int, object]):
    """The form now holding the content of ``page`` (a page reference, or None); None when it was not isolated."""
    return forms.get(mupdf.pdf_to_num(page)) if page is not None else None
