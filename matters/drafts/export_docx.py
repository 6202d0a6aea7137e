"""A draft version as a Word document (python-docx): headings, paragraphs, lists, quotations and real footnotes.

python-docx has no footnote API. Word keeps footnotes in their own part, ``/word/footnotes.xml``, related to the
document with the ``footnotes`` relationship: two separator notes (ids -1 and 0, the line above the notes), then
one ``<w:footnote w:id="n">`` per note, whose first run holds ``<w:footnoteRef/>`` (the number printed at the
foot). In the text, ``<w:footnoteReference w:id="n"/>`` in a superscript run is the mark. This module builds that
part with python-docx's own XML classes and relates it to the document part; the package writer then lists it
in ``[Content_Types].xml`` from the part's content type. Word and LibreOffice both show the notes at the foot of
the page.

The document holds no character that shows nothing yet changes what a reader sees: zero-width and bidirectional
controls, the soft hyphen, the byte-order mark, other format characters (Unicode category Cf, tag characters
included) and control characters are removed from the text, the title and the footer
(:func:`matters.invisible.without_invisible`).
The review page shows each of them as a ``U+XXXX`` mark (:mod:`matters.invisible`), so what the attorney approved
is what the exported words say; a Persian zero-width non-joiner or an emoji's joiner goes too.
"""

import io

from docx import Document
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import XmlPart
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from docx.oxml.parser import OxmlElement
from docx.shared import Pt
from docx.text.paragraph import Paragraph

from matters.drafts.markdown import Block, Run, blocks
from matters.invisible import without_invisible

FOOTNOTES_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"
_SEPARATORS = (
    f'<w:footnotes {nsdecls("w", "r")}>'
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/>'
    '</w:pPr><w:r><w:separator/></w:r></w:p></w:footnote>'
    '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:pPr><w:spacing w:after="0" w:line="240" '
    'w:lineRule="auto"/></w:pPr><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>'
    '</w:footnotes>'
)
_LIST_STYLES = {"bullet": ["List Bullet", "List Bullet 2", "List Bullet 3"],
                "number": ["List Number", "List Number 2", "List Number 3"]}
_NOTE_SIZE = Pt(10)


def _superscript_run(paragraph_element, child_tag: str, note_id: int | None = None):
    """Append a superscript run holding ``child_tag`` (a footnote reference or the note's own number)."""
    run = OxmlElement("w:r")
    properties = OxmlElement("w:rPr")
    align = OxmlElement("w:vertAlign")
    align.set(qn("w:val"), "superscript")
    properties.append(align)
    run.append(properties)
    child = OxmlElement(child_tag)
    if note_id is not None:
        child.set(qn("w:id"), str(note_id))
    run.append(child)
    paragraph_element.append(run)


def _add_runs(paragraph: Paragraph, runs: list[Run], *, size=None) -> None:
    for piece in runs:
        if piece.footnote:
            _superscript_run(paragraph._p, "w:footnoteReference", piece.footnote)
            continue
        run = paragraph.add_run(piece.text)
        run.bold = piece.bold or None
        run.italic = piece.italic or None
        if piece.code:
            run.font.name = "Courier New"
        if size is not None:
            run.font.size = size


def _add_footnotes(document, notes: list[list[Run]]) -> None:
    """Create the footnotes part with one note per item of ``notes`` (note n is item n-1)."""
    element = parse_xml(_SEPARATORS)
    for number, runs in enumerate(notes, start=1):
        note = OxmlElement("w:footnote")
        note.set(qn("w:id"), str(number))
        p = OxmlElement("w:p")
        note.append(p)
        _superscript_run(p, "w:footnoteRef")
        paragraph = Paragraph(p, None)
        paragraph.add_run(" ").font.size = _NOTE_SIZE
        _add_runs(paragraph, runs, size=_NOTE_SIZE)
        element.append(note)
    part = XmlPart(PackURI("/word/footnotes.xml"), FOOTNOTES_CONTENT_TYPE, element, document.part.package)
    document.part.relate_to(part, RT.FOOTNOTES)


def _add_block(document, block: Block) -> None:
    if block.kind == "heading":
        paragraph = document.add_heading(level=min(block.level, 9))
    elif block.kind in _LIST_STYLES:
        styles = _LIST_STYLES[block.kind]
        paragraph = document.add_paragraph(style=styles[min(block.level, len(styles)) - 1])
    elif block.kind == "quote":
        paragraph = document.add_paragraph(style="Quote")
    elif block.kind == "rule":
        document.add_paragraph("*  *  *").alignment = 1  # centred
        return
    else:
        paragraph = document.add_paragraph()
    _add_runs(paragraph, block.runs)


def docx_bytes(*, text: str, title: str, footer: str) -> bytes:
    """Return a .docx of ``text`` (a draft, read as Markdown: headings, paragraphs, lists, block quotes, code,
    footnotes ``[^n]``). ``title`` goes into the document's properties, ``footer`` (the version's SHA-256 and the
    audit log's head hash) into every page's footer."""
    text, title, footer = without_invisible(text), without_invisible(title), without_invisible(footer)
    document = Document()
    document.core_properties.title = title[:255]
    document.core_properties.comments = footer
    body, notes = blocks(text)
    for block in body:
        _add_block(document, block)
    if notes:
        _add_footnotes(document, notes)
    footer_paragraph = document.sections[0].footer.paragraphs[0]
    footer_paragraph.text = footer
    for run in footer_paragraph.runs:
        run.font.size = Pt(7)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
