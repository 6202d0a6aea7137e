"""A draft version as a Word document (python-docx): headings, paragraphs, lists, quotations and real footnotes.

python-docx has no footnote API. Word keeps footnotes in their own part, ``/word/footnotes.xml``, related to the
document with the ``footnotes`` relationship: two separator notes (ids -1 and 0, the line above the notes), then
one ``<w:footnote w:id="n">`` per note, whose first run holds ``<w:footnoteRef/>`` (the number printed at the
foot). In the text, ``<w:footnoteReference w:id="n"/>`` in a superscript run is the mark. This module builds that
part with python-docx's own XML classes and relates it to the document part; the package writer then lists it
in ``[Content_Types].xml`` from the part's content type. Word and LibreOffice both show the notes at the foot of
the page.

A draft that cites authorities opens with its table of authorities (:mod:`matters.drafts.toa`) in a section of
its own, numbered i, ii, ...; the brief follows in a second section starting on a new page and numbered from 1,
so the table's length never moves the brief's pages. Every page's footer prints its number (a ``PAGE`` field,
which LibreOffice and Word compute as they lay the page out). Each citation's start is a bookmark
(``LawDeskCite<n>``, and ``LawDeskBody`` where the brief begins): a PDF made with LibreOffice's "bookmarks as named
destinations" option says on which page each one landed (:mod:`matters.drafts.toa_pages`), and Word shows them
only in its list of bookmarks.

The document holds no character that shows nothing yet changes what a reader sees: zero-width and bidirectional
controls, the soft hyphen, the byte-order mark, other format characters (Unicode category Cf, tag characters
included) and control characters are removed from the text, the title and the footer
(:func:`matters.invisible.without_invisible`).
The review page shows each of them as a ``U+XXXX`` mark (:mod:`matters.invisible`), so what the attorney approved
is what the exported words say; a Persian zero-width non-joiner or an emoji's joiner goes too.
"""

import io

from docx import Document
from docx.enum.section import WD_SECTION
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_TAB_ALIGNMENT, WD_TAB_LEADER
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import XmlPart
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from docx.oxml.parser import OxmlElement
from docx.shared import Pt
from docx.text.paragraph import Paragraph

from matters.drafts.markdown import Block, Run, blocks, mark_places
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
CITE_BOOKMARK = "LawDeskCite"  # + the mark's number; letters and digits only, which PDF names keep as they are
BODY_BOOKMARK = "LawDeskBody"


class _Bookmarks:
    """Bookmark ids, unique in the document as ECMA-376 Part 1 §17.13.6.2 requires."""

    def __init__(self):
        self.next_id = 0

    def add(self, paragraph_element, name: str) -> None:
        start, end = OxmlElement("w:bookmarkStart"), OxmlElement("w:bookmarkEnd")
        start.set(qn("w:id"), str(self.next_id))
        start.set(qn("w:name"), name)
        end.set(qn("w:id"), str(self.next_id))
        self.next_id += 1
        paragraph_element.append(start)
        paragraph_element.append(end)


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


def _add_runs(paragraph: Paragraph, runs: list[Run], *, size=None, bookmarks: _Bookmarks | None = None) -> None:
    for piece in runs:
        if piece.mark is not None:
            if bookmarks is not None:
                bookmarks.add(paragraph._p, f"{CITE_BOOKMARK}{piece.mark}")
            continue
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


def _add_footnotes(document, notes: list[list[Run]], bookmarks: _Bookmarks) -> None:
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
        _add_runs(paragraph, runs, size=_NOTE_SIZE, bookmarks=bookmarks)
        element.append(note)
    part = XmlPart(PackURI("/word/footnotes.xml"), FOOTNOTES_CONTENT_TYPE, element, document.part.package)
    document.part.relate_to(part, RT.FOOTNOTES)


def _add_block(document, block: Block, bookmarks: _Bookmarks) -> Paragraph:
    if block.kind == "heading":
        paragraph = document.add_heading(level=min(block.level, 9))
    elif block.kind in _LIST_STYLES:
        styles = _LIST_STYLES[block.kind]
        paragraph = document.add_paragraph(style=styles[min(block.level, len(styles)) - 1])
    elif block.kind == "quote":
        paragraph = document.add_paragraph(style="Quote")
    elif block.kind == "rule":
        paragraph = document.add_paragraph("*  *  *")
        paragraph.alignment = 1  # centred
        return paragraph
    else:
        paragraph = document.add_paragraph()
    _add_runs(paragraph, block.runs, bookmarks=bookmarks)
    return paragraph


def _page_numbers(section, fmt: str) -> None:
    """Number ``section``'s pages from 1 in ``fmt`` (``decimal``, ``lowerRoman``): ``w:pgNumType``, in its place
    in ``w:sectPr`` (ECMA-376 Part 1 §17.6.12)."""
    numbering = OxmlElement("w:pgNumType")
    numbering.set(qn("w:fmt"), fmt)
    numbering.set(qn("w:start"), "1")
    section._sectPr.insert_element_before(numbering, "w:cols", "w:formProt", "w:vAlign", "w:noEndnote", "w:titlePg",
                                          "w:textDirection", "w:bidi", "w:rtlGutter", "w:docGrid",
                                          "w:printerSettings", "w:sectPrChange")


def _page_field(paragraph: Paragraph) -> None:
    """A ``PAGE`` field (ECMA-376 Part 1 §17.16.5.41) printing the page's number in its section's format."""
    field_element = OxmlElement("w:fldSimple")
    field_element.set(qn("w:instr"), "PAGE")
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "1"
    run.append(text)
    field_element.append(run)
    paragraph._p.append(field_element)


TOA_TITLE = "TABLE OF AUTHORITIES"


def _add_table_of_authorities(document, sections: list[tuple[str, list[tuple[list[Run], str]]]]) -> None:
    """The table: its title, then each heading with its entries, the name on the left and the pages after a dot
    leader at the right margin."""
    section = document.sections[0]
    width = section.page_width - section.left_margin - section.right_margin
    title = document.add_paragraph()
    title.alignment = WD_ALIGN_PARAGRAPH.CENTER
    title.add_run(TOA_TITLE).bold = True
    label = document.add_paragraph()
    label.alignment = WD_ALIGN_PARAGRAPH.RIGHT
    label.add_run("Page(s)").bold = True
    for heading, entries in sections:
        paragraph = document.add_paragraph()
        paragraph.paragraph_format.keep_with_next = True
        paragraph.add_run(heading).bold = True
        for runs, pages in entries:
            paragraph = document.add_paragraph()
            layout = paragraph.paragraph_format
            layout.left_indent, layout.first_line_indent = Pt(18), Pt(-18)
            layout.tab_stops.add_tab_stop(width, WD_TAB_ALIGNMENT.RIGHT, WD_TAB_LEADER.DOTS)
            _add_runs(paragraph, runs)
            paragraph.add_run("\t" + pages)


def docx_bytes(*, text: str, title: str, footer: str, marks: list[tuple[int, int]] = (),
               authorities: list[tuple[str, list[tuple[list[Run], str]]]] | None = None) -> bytes:
    """Return a .docx of ``text`` (a draft, read as Markdown: headings, paragraphs, lists, block quotes, code,
    footnotes ``[^n]``). ``title`` goes into the document's properties, ``footer`` (the version's SHA-256 and the
    audit log's head hash) into every page's footer, above the page number.

    ``marks``: ``(offset into text, number)`` pairs, each a bookmark ``LawDeskCite<number>`` where that character
    of ``text`` is printed. ``authorities``: the table of authorities as ``(heading, [(name as runs, pages)])``;
    when given, it fills a first section numbered in lower-case Roman numerals and the brief starts a new section,
    on a new page, numbered from 1."""
    text = mark_places(text, list(marks)) if marks else text
    text, title, footer = without_invisible(text), without_invisible(title), without_invisible(footer)
    document = Document()
    document.core_properties.title = title[:255]
    document.core_properties.comments = footer
    bookmarks = _Bookmarks()
    if authorities is not None:
        _add_table_of_authorities(document, authorities)
        document.add_section(WD_SECTION.NEW_PAGE)
        _page_numbers(document.sections[0], "lowerRoman")
    _page_numbers(document.sections[-1], "decimal")
    body, notes = blocks(text)
    for index, block in enumerate(body):
        paragraph = _add_block(document, block, bookmarks)
        if index == 0:
            bookmarks.add(paragraph._p, BODY_BOOKMARK)
    if not body:
        bookmarks.add(document.add_paragraph()._p, BODY_BOOKMARK)
    if notes:
        _add_footnotes(document, notes, bookmarks)
    footer_part = document.sections[0].footer
    footer_paragraph = footer_part.paragraphs[0]
    footer_paragraph.text = footer
    for run in footer_paragraph.runs:
        run.font.size = Pt(7)
    number = footer_part.add_paragraph()
    number.alignment = WD_ALIGN_PARAGRAPH.CENTER
    _page_field(number)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
