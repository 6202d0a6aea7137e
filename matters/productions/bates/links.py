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
