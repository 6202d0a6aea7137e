"""Keep only what lies inside a Word (OOXML) package before LibreOffice opens it: an allowlist, not a blocklist.

A DOCX can point outside itself in many ways: relationships with ``TargetMode="External"`` of any type (linked
pictures through ``a:blip r:link``, hyperlinks, OLE links, ``subDocument``, ``attachedTemplate``, frames, font-table
links), relationships whose "internal" target is an absolute URL or climbs out of the package, field instructions
(``INCLUDEPICTURE``, ``INCLUDETEXT``, ``LINK``, ``DDE`` ...), ``altChunk`` parts (imported HTML or RTF with links of
their own) and VML ``src``/``href`` attributes. This module copies the package keeping

- a relationship only if its mode, after normalising case and whitespace, is internal and its target, with any
  URL fragment dropped and percent-escapes decoded, is a part of this very package (ECMA-376 Part 2, Open
  Packaging Conventions, section 9.3: internal targets are relative references resolved against the source part);
- a field only if its instruction's name is on a list of fields that compute from the document itself (ECMA-376
  Part 1 section 17.16.5 lists them all); the others lose their instruction and show their stored result;
- no ``altChunk`` at all, and no VML attribute that names a URL.

The sandbox in :mod:`matters.exhibits.ingest.sandbox` is the second wall: a link this module misses still cannot
reach the data directory or the network. XML is parsed without DTDs, entities or network access.
"""

import posixpath
import re
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lxml import etree

from .docx_fields import VOLATILE_FIELDS, freeze_fields
from .docx_revisions import WordChanges, accept_package, hidden_styles, is_story_part

_RELATIONSHIPS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_AFCHUNK_TYPE = "/afchunk"
# Fields whose result comes from the document and its properties only (ECMA-376 Part 1, 17.16.5).
_SAFE_FIELDS = frozenset(
    "ADVANCE ASK AUTHOR AUTONUM AUTONUMLGL AUTONUMOUT BARCODE BIDIOUTLINE COMMENTS COMPARE CREATEDATE DATE DOCPROPERTY "
    "DOCVARIABLE EDITTIME EQ FILESIZE FILLIN FORMCHECKBOX FORMDROPDOWN FORMTEXT GOTOBUTTON GREETINGLINE IF INDEX "
    "INFO KEYWORDS LASTSAVEDBY LISTNUM MACROBUTTON MERGEFIELD MERGEREC MERGESEQ NEXT NEXTIF NOTEREF NUMCHARS "
    "NUMPAGES NUMWORDS PAGE PAGEREF PRINTDATE QUOTE RD REF REVNUM SAVEDATE SECTION SECTIONPAGES SEQ SET SKIPIF "
    "STYLEREF SUBJECT SYMBOL TA TC TEMPLATE TIME TITLE TOA TOC USERADDRESS USERINITIALS USERNAME XE".split()
)
# Fields replaced by their stored result before the allowlist is applied: the safe ones and those whose value
# depends on when or where the file is opened (FILENAME reads the host's path for the file, and is not safe to
# compute, but its stored result is only text).
_FROZEN_FIELDS = _SAFE_FIELDS | VOLATILE_FIELDS
_URLISH = re.compile(r"^\s*(?:[a-z][a-z0-9+.\-]*:|[/\\]{2})", re.IGNORECASE)
_VML_LINK_ATTRIBUTES = ("src", "href", "althref")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def _normalised(value: str | None) -> str:
    return "".join((value or "").split()).lower()


def _inside(source_part: str, target: str, members: set[str]) -> bool:
    """Whether ``target`` of a relationship in ``source_part`` (a .rels path) names a part of this package."""
    if _URLISH.match(target) or "\\" in target:
        return False
    parts = urlsplit(target.strip())
    if parts.scheme or parts.netloc:
        return False
    path = unquote(parts.path)  # the fragment is dropped: it never changes which part is meant
    if not path:
        return False
    # "word/_rels/document.xml.rels" describes "word/document.xml": targets resolve against "word/".
    base = posixpath.dirname(posixpath.dirname(source_part))
    resolved = posixpath.normpath(path.lstrip("/") if path.startswith("/") else posixpath.join(base, path))
    if resolved.startswith("../") or resolved == "..":
        return False
    return resolved in members


def _clean_relationships(name: str, data: bytes, members: set[str]) -> tuple[bytes, int]:
    root = etree.fromstring(data, _PARSER)
    removed = 0
    for relationship in root.findall(f"{{{_RELATIONSHIPS_NS}}}Relationship"):
        mode = _normalised(relationship.get("TargetMode"))
        kind = _normalised(relationship.get("Type")).split("#")[0]
        keep = (mode in ("", "internal") and not kind.endswith(_AFCHUNK_TYPE)
                and _inside(name, relationship.get("Target", ""), members))
        if not keep:
            root.remove(relationship)
            removed += 1
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True), removed


def _field_name(instruction: str) -> str:
    words = instruction.replace("\\", " \\").split()
    return words[0].upper().lstrip("=") if words else ""


def _own(element: etree._Element, name: str) -> str:
    """The attribute ``name`` in the element's own namespace: ``w:instr`` in the transitional namespace or in
    ISO/IEC 29500 Strict's (``http://purl.oclc.org/ooxml/wordprocessingml/main``), which Word opens alike."""
    return f"{{{etree.QName(element).namespace}}}{name}"


def _clean_fields(root: etree._Element) -> int:
    """Blank every field instruction not on the safe list; return how many fields were cut. A complex field's
    instruction may be split over several ``w:instrText`` runs, so runs are joined before the name is read.
    Elements are matched by local name, in either WordprocessingML namespace (transitional or Strict)."""
    cut = 0
    stack: list[list[etree._Element]] = []
    for element in root.iter("{*}fldChar", "{*}instrText", "{*}fldSimple"):
        local = etree.QName(element).localname
        if local == "fldSimple":
            if _field_name(element.get(_own(element, "instr"), "")) not in _SAFE_FIELDS:
                element.set(_own(element, "instr"), "")
                cut += 1
        elif local == "instrText":
            if stack:
                stack[-1].append(element)
            else:  # an instruction outside any field is still read by some converters
                element.text = ""
        else:
            kind = element.get(_own(element, "fldCharType"))
            if kind == "begin":
                stack.append([])
            elif kind == "end" and stack:
                runs = stack.pop()
                if _field_name("".join(run.text or "" for run in runs)) not in _SAFE_FIELDS and runs:
                    for run in runs:
                        run.text = ""
                    cut += 1
    for runs in stack:  # fields never ended: cut whatever they asked for
        for run in runs:
            run.text = ""
        cut += bool(runs)
    return cut


def _is_xml_type(content_type: str | None) -> bool:
    return _normalised(content_type).endswith("xml")  # application/xml, text/xml, ...+xml


def _xml_parts(package: zipfile.ZipFile, members: set[str]) -> set[str]:
    """The parts that are XML: named ``.xml`` or declared with an XML content type in ``[Content_Types].xml``
    (ECMA-376 Part 2, section 10.1.2). Pictures, fonts and orphan HTML chunks are not; LibreOffice reads no links
    from them once their relationships are gone."""
    xml = {name for name in members if name.lower().endswith(".xml")}
    try:
        types = etree.fromstring(package.read("[Content_Types].xml"), _PARSER)
    except KeyError:
        return xml
    extensions = {_normalised(d.get("Extension")) for d in types.iterfind("{*}Default")
                  if _is_xml_type(d.get("ContentType"))}
    overrides = {(o.get("PartName") or "").lstrip("/") for o in types.iterfind("{*}Override")
                 if _is_xml_type(o.get("ContentType"))}
    return xml | overrides | {name for name in members if name.rpartition(".")[2].lower() in extensions}


def _clean_part(data: bytes) -> tuple[bytes, int]:
    # An XML part that does not parse here is not passed on: LibreOffice's own parser might still read it.
    root = etree.fromstring(data, _PARSER)
    cut = _clean_fields(root)
    for chunk in list(root.iter("{*}altChunk")):
        chunk.getparent().remove(chunk)
        cut += 1
    for element in root.iter():
        if not isinstance(element.tag, str) or "vml" not in element.tag and "office:office" not in element.tag:
            continue
        for attribute, value in element.attrib.items():
            local = etree.QName(attribute).localname.lower()
            # Anything but a reference inside the document (#name) points out of it: a URL, a UNC path, or an
            # absolute or relative file path LibreOffice would resolve against the file system.
            if local in _VML_LINK_ATTRIBUTES and value.strip() and not value.strip().startswith("#"):
                element.set(attribute, "")
                cut += 1
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True), cut


def sanitize_docx(source: Path, target: Path, changes: WordChanges | None = None) -> int:
    """Write a copy of the OOXML package at ``source`` to ``target`` keeping only what lies inside it; return
    how many links, fields and imported chunks were cut. Fields with a stored result show that result, as Word
    last displayed it (:mod:`matters.exhibits.ingest.docx_fields`). With ``changes``, the copy also has its
    tracked changes accepted and its comments and hidden text taken out, each recorded in ``changes`` with the
    fields replaced (:mod:`matters.exhibits.ingest.docx_revisions`).

    Raises zipfile.BadZipFile, or lxml's XMLSyntaxError for any XML part (by name or declared type) that does not
    parse.
    """
    cut = 0
    fields: list[dict] = changes.fields if changes is not None else []
    with zipfile.ZipFile(source) as package, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as copy:
        members = {info.filename for info in package.infolist() if not info.is_dir()}
        xml_parts = _xml_parts(package, members)
        # Styles can hide text as a run's own property does; they are read before the story parts that use them.
        hidden = hidden_styles(package.read("word/styles.xml")) \
            if changes is not None and "word/styles.xml" in members else frozenset()
        for member in package.infolist():
            data = package.read(member)
            if member.filename.lower().endswith(".rels"):
                data, removed = _clean_relationships(member.filename, data, members)
            elif member.filename in xml_parts:
                if is_story_part(member.filename):
                    data = freeze_fields(data, fields, _FROZEN_FIELDS)  # the allowlist below cuts the rest
                data, removed = _clean_part(data)
                if changes is not None:
                    data = accept_package(member, data, changes, hidden)
            else:
                removed = 0
            cut += removed
            copy.writestr(member, data)
    return cut
