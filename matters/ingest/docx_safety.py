"""Strip what makes a Word file reach outside itself before LibreOffice opens it.

A DOCX can point at files and URLs: relationships with ``TargetMode="External"`` (linked images, linked OLE
objects, attached templates, hyperlinks) and field instructions (``INCLUDEPICTURE``, ``INCLUDETEXT``, ``LINK``,
``DDE``, ``DDEAUTO``). LibreOffice follows them while converting, so an uploaded file could pull another matter's
stored page into its own PDF. This module copies the package with every external relationship's target emptied
(hyperlinks excepted: nothing fetches them) and every such field instruction neutralised. ECMA-376 Part 2 (Open Packaging Conventions) section 9.3 defines
relationships; Part 1 section 17.16 the field instructions.
"""

import re
import zipfile
from pathlib import Path

from lxml import etree

_RELATIONSHIPS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_HYPERLINK_TYPE = "/hyperlink"  # a link a reader may click; converters never fetch it
_LINKING_FIELDS = re.compile(rb"\b(INCLUDEPICTURE|INCLUDETEXT|LINK|DDEAUTO|DDE|IMPORT)\b", re.IGNORECASE)
# Field instructions live in <w:instrText> runs and in the w:instr attribute of <w:fldSimple>.
_INSTRUCTIONS = re.compile(rb"(<w:instrText\b[^>]*>)(.*?)(</w:instrText>)|(\bw:instr=\")([^\"]*)(\")", re.DOTALL)


def _clean_relationships(data: bytes) -> tuple[bytes, int]:
    root = etree.fromstring(data)
    removed = 0
    for relationship in root.findall(f"{{{_RELATIONSHIPS_NS}}}Relationship"):
        external = relationship.get("TargetMode", "").lower() == "external"
        if external and not relationship.get("Type", "").endswith(_HYPERLINK_TYPE):
            relationship.set("Target", "about:blank")
            removed += 1
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True), removed


def _clean_fields(data: bytes) -> tuple[bytes, int]:
    count = 0

    def neutralise(match: re.Match) -> bytes:
        nonlocal count
        groups = match.groups()
        start, body, end = (groups[0], groups[1], groups[2]) if groups[0] is not None else groups[3:]
        body, replaced = _LINKING_FIELDS.subn(b"NOLINK", body)
        count += replaced
        return start + body + end

    return _INSTRUCTIONS.sub(neutralise, data), count


def sanitize_docx(source: Path, target: Path) -> int:
    """Write a copy of the DOCX at ``source`` to ``target`` with external links cut; return how many were cut.

    Raises zipfile.BadZipFile or lxml's XMLSyntaxError for a damaged package.
    """
    cut = 0
    with zipfile.ZipFile(source) as package, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as copy:
        for member in package.infolist():
            data = package.read(member)
            if member.filename.endswith(".rels"):
                data, removed = _clean_relationships(data)
                cut += removed
            elif member.filename.endswith(".xml"):
                data, replaced = _clean_fields(data)
                cut += replaced
            copy.writestr(member, data)
    return cut
