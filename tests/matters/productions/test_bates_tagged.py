"""A tagged PDF stamped for production: its structure still names its content, now in each page's form.

Isolation (matters/productions/bates/isolate.py) moves a page's content, and with it every marked-content
identifier (MCID) that its structure tree names, into a form XObject. The tree's references must then say which
stream (ISO 32000-1, 14.7.4.2: /Stm), and the form takes the page's /StructParents (14.7.4.4); otherwise every
tag of the produced copy names content that is no longer in the page's own stream.
"""

import io
import re
import zipfile

import pymupdf
import pytest

from matters.models import Production
from matters.productions.bates.stamp import StampSpec, stamp_pages
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

MCR = re.compile(r"<</Type/MCR[^>]*>>")
TAGGED = ["court/scotus-slip-2012.pdf", "court/nc-gift-surplus.pdf", "court/ca2_1-1.pdf"]


def _mcids(content: bytes) -> set[int]:
    return {int(found) for found in re.findall(rb"/MCID\s+(\d+)", content)}


def _structure(doc) -> list[int]:
    """The structure elements reachable from the catalog's structure tree (a file may keep an older tree of an
    earlier revision, which no reader uses), following each element's /K only."""
    root = int(doc.xref_get_key(doc.pdf_catalog(), "StructTreeRoot")[1].split()[0])
    found, waiting = [], [root]
    while waiting:
        xref = waiting.pop()
        if xref in found:
            continue
        found.append(xref)
        kids = doc.xref_get_key(xref, "K")[1]
        # an element's kids: elements by reference; MCR and OBJR dictionaries name pages and objects, not kids
        waiting += [int(n) for n in re.findall(r"(\d+) 0 R", MCR.sub("", re.sub(r"<</Type/OBJR[^>]*>>", "", kids)))]
    return found[1:]


def _named(doc) -> set[tuple[int, int]]:
    """(page number, MCID) of the page content the structure names: bare MCIDs of an element's /Pg and MCRs
    without /Stm (these documents give every element its /Pg)."""
    number_of = {page.xref: page.number for page in doc}
    named = set()
    for xref in _structure(doc):
        text = doc.xref_object(xref, compressed=True)
        page = re.search(r"/Pg (\d+) 0 R", MCR.sub("", text))
        kids = doc.xref_get_key(xref, "K")[1]
        bare = MCR.sub("", re.sub(r"<</Type/OBJR[^>]*>>", "", re.sub(r"\d+ 0 R", "", kids)))
        if page:
            named |= {(number_of[int(page.group(1))], int(n)) for n in re.findall(r"\d+", bare)}
        for reference in MCR.findall(kids):
            if "/Stm" not in reference:
                pg = int(re.search(r"/Pg (\d+) 0 R", reference).group(1))
                named.add((number_of[pg], int(re.search(r"/MCID (\d+)", reference).group(1))))
    return named


@pytest.mark.parametrize("name", TAGGED)
def test_every_tag_names_content_that_is_in_the_stream_it_names(corpus, name):
    doc = pymupdf.open(corpus(name))
    tagged_before = _named(doc)
    # By page number: the volume's save renumbers objects.
    keys = {page.number: doc.xref_get_key(page.xref, "StructParents")[1] for page in doc
            if doc.xref_get_key(page.xref, "StructParents")[0] == "int"}
    before = {number: _mcids(doc[number].read_contents()) for number in keys}
    assert keys and any(before.values())
    stamp_pages(doc, [f"DEF{n:06d}" for n in range(1, doc.page_count + 1)], StampSpec())
    produced = pymupdf.open("pdf", doc.tobytes(garbage=2, deflate=True))  # as a native goes into the volume
    forms, mcids_of = {}, {}
    for number in keys:
        page = produced[number]
        form = int(produced.xref_get_key(page.xref, "Resources/XObject/LDPage")[1].split()[0])
        forms[page.xref] = form
        mcids_of[page.xref] = before[number]
        assert produced.xref_get_key(page.xref, "StructParents")[0] == "null"
        assert produced.xref_get_key(form, "StructParents")[1] == keys[number]
        assert _mcids(produced.xref_stream(form)) == before[number]
        assert not _mcids(page.read_contents())  # the page's own stream: the form and the stamp only
    named = set()
    for xref in _structure(produced):
        text = produced.xref_object(xref, compressed=True)
        # No element names a bare MCID of a page whose content moved into its form.
        page = re.search(r"/Pg (\d+) 0 R", text)
        if page and int(page.group(1)) in forms:
            bare = MCR.sub("", re.sub(r"\d+ 0 R", "", text))  # references and MCRs out: what is left is MCIDs
            assert not re.search(r"/K ?\d|/K\[[^\]]*\d", bare), text
        for reference in MCR.findall(text):
            pg = int(re.search(r"/Pg (\d+) 0 R", reference).group(1))
            stm = int(re.search(r"/Stm (\d+) 0 R", reference).group(1))
            mcid = int(re.search(r"/MCID (\d+)", reference).group(1))
            if pg in forms:
                assert stm == forms[pg]
                assert mcid in _mcids(produced.xref_stream(stm))
                named.add((pg, mcid))
    number_of = {page.xref: page.number for page in produced}
    assert {(number_of[page], mcid) for page, mcid in named} == tagged_before and tagged_before


def test_an_untagged_document_gets_no_structure(corpus):
    doc = pymupdf.open(corpus("court/ca1_00117684624.pdf"))
    stamp_pages(doc, [f"DEF{n:06d}" for n in range(1, doc.page_count + 1)], StampSpec())
    assert doc.xref_get_key(doc.pdf_catalog(), "StructTreeRoot")[0] == "null"
    assert all(doc.xref_get_key(page.xref, "StructParents")[0] == "null" for page in doc)


@pytest.mark.django_db
@pytest.mark.parametrize("cover_sheets", [Production.CoverSheets.NONE, Production.CoverSheets.NUMBERED])
def test_the_native_of_a_tagged_exhibit_in_the_volume_keeps_tags_that_name_its_text(
        corpus, matter, attorney, ingest, cover_sheets):
    path = corpus("court/nc-gift-surplus.pdf")
    tagged_before = _named(pymupdf.open(path))
    exhibit = ingest(matter, path)
    production = production_create(matter=matter, exhibits=[exhibit], prefix="SMITH", created_by=attorney,
                                   enqueue=False, with_index=False, cover_sheets=cover_sheets)
    production = production_run(production_id=production.pk)
    assert production.status == Production.Status.DONE, production.reason
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        native = pymupdf.open("pdf", io.BytesIO(volume.read(f"{production.volume}/NATIVES/SMITH000001.pdf")))
    shift = 1 if cover_sheets == Production.CoverSheets.NUMBERED else 0  # a numbered slip sheet comes first
    number_of = {page.xref: page.number - shift for page in native}
    named = set()
    for xref in _structure(native):
        for reference in MCR.findall(native.xref_get_key(xref, "K")[1]):
            pg = int(re.search(r"/Pg (\d+) 0 R", reference).group(1))
            stm = int(re.search(r"/Stm (\d+) 0 R", reference).group(1))
            mcid = int(re.search(r"/MCID (\d+)", reference).group(1))
            assert native.xref_get_key(native[number_of[pg] + shift].xref, "Resources/XObject/LDPage")[1] == (
                f"{stm} 0 R")
            assert mcid in _mcids(native.xref_stream(stm))
            named.add((number_of[pg], mcid))
    assert named == tagged_before and tagged_before
