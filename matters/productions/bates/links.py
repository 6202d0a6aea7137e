"""Keep a document's links working in the combined PDF of a production.

PyMuPDF's ``insert_pdf`` copies links to explicit pages but drops links to named destinations (ISO 32000-1,
12.3.2.3: a name looked up in the catalog's /Dests or /Names tree, which the combined PDF does not have), and
copies a link to another file (/GoToR, 12.6.4.3) with its file name encoded twice, so it opens nothing.
Before combining, :func:`resolve_named_links` turns each named link into a link to its page, and
:func:`take_file_links` lifts the links to other files; after combining, :func:`link_files` points those that
name another document of the production at that document's stamped page. A link to a file outside the
production is not put back (in the combined PDF or the native): it would open a file on the reader's machine, which
a production does not do (active content, :mod:`.active`); :func:`outside_links` says which were left out.
"""

from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote

import pymupdf

from . import pageobjects


@dataclass(frozen=True)
class FileLink:
    """A link on page ``page`` (0-based) of a document, over ``rect`` (PyMuPDF page coordinates), to page
    ``target_page`` (0-based) of the file ``file`` as the link names it."""

    page: int
    rect: pymupdf.Rect
    file: str
    target_page: int


def file_key(name: str) -> str:
    """How a link's file and a document's name are compared: the last path part, without URL escapes, case or
    extension (a link to ``Lease.docx`` finds the Word document produced as a PDF)."""
    name = unquote(unquote(name)).replace("\\", "/")
    return PurePosixPath(name).stem.lower()


def _linked_pages(doc: pymupdf.Document, pages: list[int] | None = None):
    """The pages that have annotations at all (reading the page object only: most pages have none), among
    ``pages`` (0-based numbers) when the caller knows which may have them."""
    pdf = pageobjects.pdf_of(doc)
    for number in range(doc.page_count) if pages is None else pages:
        if pageobjects.has_annots(pageobjects.page_object(pdf, number)):
            yield doc[number]


def resolve_named_links(doc: pymupdf.Document, pages: list[int] | None = None) -> list[str]:
    """Replace every link to a named destination in ``doc`` by a link to the page it names; return the names
    that name no page (those links are left as they are and will not survive combining). ``pages``: the only
    pages (0-based) that may have links, when the caller knows (every page otherwise)."""
    names = None
    unresolved = []
    for page in _linked_pages(doc, pages):
        for link in page.get_links():
            if link["kind"] != pymupdf.LINK_NAMED:
                continue
            if names is None:
                try:
                    names = doc.resolve_names()
                except Exception:  # MuPDF's errors vary; a broken name tree names no page, as below
                    names = {}
            name = link.get("nameddest") or link.get("name") or ""
            target = names.get(name, {})
            number = target.get("page", -1)
            if not 0 <= number < doc.page_count:
                unresolved.append(name)
                continue
            to = pymupdf.Point(target.get("to") or (0, 0)) * doc[number].transformation_matrix
            page.delete_link(link)
            page.insert_link({"kind": pymupdf.LINK_GOTO, "from": link["from"], "page": number, "to": to,
                              "zoom": target.get("zoom") or 0})
    return unresolved


def take_file_links(doc: pymupdf.Document, pages: list[int] | None = None) -> list[FileLink]:
    """Remove the links to other files from ``doc`` and return them. ``pages``: as :func:`resolve_named_links`."""
    taken = []
    for page in _linked_pages(doc, pages):
        for link in page.get_links():
            if link["kind"] != pymupdf.LINK_GOTOR or not link.get("file"):
                continue
            taken.append(FileLink(page.number, pymupdf.Rect(link["from"]), unquote(link["file"]),
                                  max(int(link.get("page") or 0), 0)))
            page.delete_link(link)
    return taken


def link_files(combined: pymupdf.Document, start: int, links: list[FileLink], starts: dict[str, tuple[int, int]],
               ) -> None:
    """Put back ``links`` of the document whose first page is ``combined`` page ``start``: a link whose file is
    a document of the production (``starts`` maps :func:`file_key` to that document's first page in
    ``combined`` and its page count) goes to that page; any other is left out."""
    for link in links:
        found = starts.get(file_key(link.file))
        if found is not None:
            first, count = found
            combined[start + link.page].insert_link({"kind": pymupdf.LINK_GOTO, "from": link.rect,
                                                     "page": first + min(link.target_page, count - 1),
                                                     "to": pymupdf.Point(0, 0)})


def outside_links(links: list[FileLink], natives: dict[str, tuple[str, int]]) -> list[str]:
    """The files ``links`` name that are not documents of the production (``natives`` as :func:`link_natives`
    takes it): those links are left out of the production."""
    return sorted({link.file for link in links if file_key(link.file) not in natives})


def link_natives(doc: pymupdf.Document, links: list[FileLink], natives: dict[str, tuple[str, int]]) -> None:
    """Put ``links`` back into ``doc``, a document as it goes into the volume: a link to another document of the
    production goes to that document's native (``natives`` maps :func:`file_key` to its file name in the same
    folder and how many pages were put before its own, a numbered slip sheet); any other is left out."""
    for link in links:
        found = natives.get(file_key(link.file))
        if found is None:
            continue
        name, shift = found
        doc[link.page].insert_link({"kind": pymupdf.LINK_GOTOR, "from": link.rect, "file": name,
                                    "page": link.target_page + shift, "to": pymupdf.Point(0, 0)})


def append_links(combined: pymupdf.Document, source: pymupdf.Document, pages: list[int], targets: list) -> int:
    """Copy the links on ``pages`` (0-based) of ``source`` to its copies just appended to ``combined``, whose page
    objects ``targets`` holds in order (:func:`.pageobjects.appended_pages`); return how many were copied.

    The links PyMuPDF's ``insert_pdf(links=True)`` would write, written the same way (its annotation skeletons,
    the rectangle taken back through the source page's transform), without its cost: it looks up every appended
    page of the combined PDF by number and loads it, which walks the page tree from the start, so that at
    30,000 pages it cost more than stamping. A link to a page of ``source`` points at that page's copy; a link of
    a kind it does not copy (a named destination left unresolved) is left out, as it leaves it out."""
    mupdf = pageobjects.mupdf
    pdf = pageobjects.pdf_of(combined)
    numbers = [mupdf.pdf_to_num(target) for target in targets]
    copied = 0
    for number in pages:
        page = source[number]
        links = page.get_links()
        if not links:
            continue
        ctm = mupdf.FzMatrix()
        mupdf.pdf_page_transform(pymupdf._as_pdf_page(page), mupdf.FzRect(0), ctm)
        inverse = pymupdf.Matrix(mupdf.fz_invert_matrix(ctm))
        texts = [text for link in links if (text := _link_annotation(link, numbers, inverse))]
        if not texts:
            continue
        target = targets[number]
        if not mupdf.pdf_dict_get(target, pageobjects.ANNOTS).m_internal:
            mupdf.pdf_dict_put_array(target, pageobjects.ANNOTS, len(texts))
        annots = mupdf.pdf_dict_get(target, pageobjects.ANNOTS)
        for text in texts:
            try:
                parsed = pymupdf.JM_pdf_obj_from_str(pdf, text)
            except mupdf.FzErrorBase:  # a file name PyMuPDF's skeleton does not escape: left out, as it does
                continue
            annot = mupdf.pdf_add_object(pdf, parsed)
            mupdf.pdf_array_push(annots, mupdf.pdf_new_indirect(pdf, mupdf.pdf_to_num(annot), 0))
            copied += 1
    return copied


def _link_annotation(link: dict, numbers: list[int], inverse: pymupdf.Matrix) -> str:
    """The annotation PyMuPDF's ``insert_pdf`` writes for ``link`` (one of ``get_links()``), as PDF source; ''
    for a link it does not copy. ``numbers``: the object numbers of the source's pages' copies, by page."""
    skeleton = pymupdf.annot_skel
    rect = pymupdf._format_g(tuple(link["from"] * inverse))
    kind = link["kind"]
    if kind == pymupdf.LINK_GOTO:
        if not 0 <= link["page"] < len(numbers):
            return ""
        point = link["to"] * inverse
        return skeleton["goto1"](numbers[link["page"]], point.x, point.y, link["zoom"], rect)
    if kind == pymupdf.LINK_GOTOR:
        if link["page"] >= 0:
            point = link.get("to", pymupdf.Point(0, 0))
            point = point if isinstance(point, pymupdf.Point) else pymupdf.Point(0, 0)
            return skeleton["gotor1"](link["page"], point.x, point.y, link["zoom"], link["file"], link["file"], rect)
        return skeleton["gotor2"](pymupdf.get_pdf_str(link["to"])[1:-1], link["file"], rect)
    if kind == pymupdf.LINK_LAUNCH:
        return skeleton["launch"](link["file"], link["file"], rect)
    if kind == pymupdf.LINK_URI:
        # Written as a PDF string, escaped: PyMuPDF's skeleton puts the address between parentheses as it is, so
        # an address with a parenthesis in it did not parse and its link was dropped.
        return f"<</A<</S/URI/URI{pymupdf.get_pdf_str(link['uri'])}>>/Rect[{rect}]/BS<</W 0>>/Subtype/Link>>"
    return ""
