"""A Word file as it really reads: tracked changes accepted, comments and hidden text taken out, and each of them
kept aside so the exhibit page can show them and the verifier can say when a claim is found only there.

LibreOffice prints a document's tracked changes as they are shown on screen, deleted and inserted text run
together (``$250,000$175,000``), and that text layer was read as evidence. The package copied for conversion is
rewritten first (ECMA-376 Part 1 section 17.13, "Annotations"):

- ``w:ins`` / ``w:moveTo`` (inserted or moved-in runs) keep their content: the change is accepted;
- ``w:del`` / ``w:moveFrom`` (deleted or moved-out runs, their text in ``w:delText``) are removed; a paragraph
  or table row whose mark is deleted is removed when nothing else is left in it;
- property changes (``w:rPrChange``, ``w:pPrChange`` ...) are dropped: the current formatting stays;
- comment anchors and references (``w:commentRangeStart``/``End``, ``w:commentReference``) are removed from the
  text, and the comments' own text (``word/comments.xml``) is read aside;
- runs marked hidden (``w:vanish`` in their run properties, section 17.3.2.41, unless ``w:val`` turns it off) are
  removed, and so are runs hidden through a style: a character style (``w:rStyle``) or the paragraph's style
  (``w:pStyle``) whose run properties, or those of a style it is based on (``w:basedOn``), hide text.

Django-free: runs in the ingest child.
"""

import zipfile
from dataclasses import asdict, dataclass, field

from lxml import etree

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_W = f"{{{W}}}"
# The parts whose text LibreOffice prints: the body, headers, footers, footnotes and endnotes.
STORY_PARTS = ("word/document.xml", "word/footnotes.xml", "word/endnotes.xml")
_STORY_PREFIXES = ("word/header", "word/footer")
_PROPERTY_CHANGES = ("rPrChange", "pPrChange", "sectPrChange", "tblPrChange", "tblGridChange", "tcPrChange",
                     "trPrChange", "tblPrExChange", "numberingChange")
_COMMENT_MARKS = ("commentRangeStart", "commentRangeEnd", "commentReference")
_MOVE_RANGES = ("moveFromRangeStart", "moveFromRangeEnd", "moveToRangeStart", "moveToRangeEnd")
# At most this many characters of each kind are kept aside; past it the counts still count.
MAX_KEPT_CHARS = 200_000


@dataclass
class WordChanges:
    """What a Word file carries besides its accepted text. Counts are of revision marks as Word stores them (one
    ``w:ins`` or ``w:del`` element each, one comment each, one hidden run each); the lists hold the text of each
    (deleted, inserted, comment, hidden), in document order, for the exhibit page and the verifier."""

    insertions: int = 0
    deletions: int = 0
    comments: int = 0
    hidden: int = 0
    inserted_text: list[str] = field(default_factory=list)
    deleted_text: list[str] = field(default_factory=list)
    comment_text: list[dict] = field(default_factory=list)  # {"author": str, "text": str}
    hidden_text: list[str] = field(default_factory=list)
    # Fields shown as their stored result or removed (matters.exhibits.ingest.docx_fields.freeze_fields):
    # {"name", "instruction", "result", "shown"}.
    fields: list[dict] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.insertions or self.deletions or self.comments or self.hidden or self.fields)

    def as_json(self) -> dict:
        return asdict(self)


def is_story_part(name: str) -> bool:
    return name in STORY_PARTS or (name.startswith(_STORY_PREFIXES) and name.endswith(".xml"))


def _text(element, tags=("t", "delText", "instrText")) -> str:
    parts = []
    for node in element.iter():
        if node.tag in {_W + t for t in tags} and node.text:
            parts.append(node.text)
        elif node.tag in (_W + "tab",):
            parts.append("\t")
        elif node.tag in (_W + "p",) and parts:
            parts.append("\n")
    return "".join(parts).strip()


def _remove(element) -> None:
    """Remove ``element``, with the whitespace lxml keeps as its tail (text lives only in ``w:t``)."""
    parent = element.getparent()
    if parent is not None:
        parent.remove(element)


def _unwrap(element) -> None:
    """Replace ``element`` by its children."""
    parent = element.getparent()
    if parent is None:
        return
    index = parent.index(element)
    for offset, child in enumerate(list(element)):
        parent.insert(index + offset, child)
    parent.remove(element)


def _kept(items: list, text) -> None:
    if sum(len(i if isinstance(i, str) else i.get("text", "")) for i in items) < MAX_KEPT_CHARS:
        items.append(text)


def _turned_on(toggle) -> bool:
    """Whether an on/off property element (``<w:vanish/>``, ``<w:vanish w:val="false"/>``) is on (17.17.4)."""
    return toggle.get(_W + "val", "true").lower() not in ("0", "false", "off")


def hidden_styles(data: bytes) -> frozenset[str]:
    """The ids of the styles in ``word/styles.xml`` (``data``) that hide their text: ``w:vanish`` in the style's
    run properties, or inherited through ``w:basedOn`` unless the style turns it off. Raises lxml's
    XMLSyntaxError for a damaged part."""
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    own: dict[str, bool | None] = {}
    parent: dict[str, str] = {}
    for style in root.iter(_W + "style"):
        style_id = style.get(_W + "styleId")
        if not style_id:
            continue
        vanish = style.find(f"{_W}rPr/{_W}vanish")
        own[style_id] = None if vanish is None else _turned_on(vanish)
        if (based := style.find(_W + "basedOn")) is not None and based.get(_W + "val"):
            parent[style_id] = based.get(_W + "val")

    def hides(style_id: str) -> bool:
        seen = set()
        while style_id and style_id not in seen:  # a basedOn loop ends the walk
            seen.add(style_id)
            if own.get(style_id) is not None:
                return bool(own[style_id])
            style_id = parent.get(style_id, "")
        return False

    return frozenset(style_id for style_id in own if hides(style_id))


def _run_hidden(run, hidden: frozenset[str]) -> bool:
    """Whether run ``run`` is hidden: by its own ``w:vanish``, else by its character style, else by its
    paragraph's style (the order in which Word applies them, 17.7.2)."""
    properties = run.find(_W + "rPr")
    if properties is not None:
        vanish = properties.find(_W + "vanish")
        if vanish is not None:
            return _turned_on(vanish)
        style = properties.find(_W + "rStyle")
        if style is not None and style.get(_W + "val") in hidden:
            return True
    paragraph = next((a for a in run.iterancestors(_W + "p")), None)
    style = paragraph.find(f"{_W}pPr/{_W}pStyle") if paragraph is not None else None
    return style is not None and style.get(_W + "val") in hidden


def accept_story(data: bytes, changes: WordChanges, hidden: frozenset[str] = frozenset()) -> bytes:
    """One story part (``word/document.xml``, a header ...) with changes accepted and comment marks and hidden
    runs removed; what was taken out is added to ``changes``. ``hidden``: the ids of styles that hide their text
    (:func:`hidden_styles`). Raises lxml's XMLSyntaxError for a damaged part."""
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    for element in list(root.iter(_W + "del", _W + "moveFrom")):
        parent = element.getparent()
        if parent is not None and parent.tag == _W + "rPr":  # a deleted paragraph mark, not text
            continue
        if parent is not None and parent.tag == _W + "trPr":  # a deleted table row: the row goes
            element = parent.getparent()
        changes.deletions += 1
        text = _text(element)
        if text:
            _kept(changes.deleted_text, text)
        _remove(element)
    for element in list(root.iter(_W + "ins", _W + "moveTo")):
        parent = element.getparent()
        if parent is not None and parent.tag in (_W + "rPr", _W + "trPr"):
            _remove(element)  # an inserted paragraph mark or row: accepting it keeps the paragraph or row
            continue
        changes.insertions += 1
        text = _text(element)
        if text:
            _kept(changes.inserted_text, text)
        _unwrap(element)
    for name in _PROPERTY_CHANGES + _COMMENT_MARKS + _MOVE_RANGES:
        for element in list(root.iter(_W + name)):
            _remove(element)
    for run in list(root.iter(_W + "r")):
        if not _run_hidden(run, hidden):
            continue
        changes.hidden += 1
        text = _text(run)
        if text:
            _kept(changes.hidden_text, text)
        _remove(run)
    # A paragraph whose mark was deleted and which has no text left is gone once the deletion is accepted.
    for mark in list(root.iter(_W + "del")):
        paragraph = mark.getparent().getparent().getparent() if mark.getparent() is not None else None
        _remove(mark)
        if paragraph is not None and paragraph.tag == _W + "p" and not _text(paragraph) and \
                paragraph.getparent() is not None and paragraph.getparent().tag != _W + "tc":
            _remove(paragraph)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def read_comments(data: bytes, changes: WordChanges) -> bytes:
    """Read ``word/comments.xml`` into ``changes`` and return the part with every comment's text emptied, so no
    converter can print it."""
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    for comment in root.iter(_W + "comment"):
        changes.comments += 1
        text = _text(comment)
        if text:
            _kept(changes.comment_text, {"author": comment.get(_W + "author", ""), "text": text})
        for child in list(comment):
            comment.remove(child)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def comments_by_id(data: bytes) -> dict[str, dict]:
    """The comments of ``word/comments.xml`` (``data``) by their ``w:id``: ``{"author", "initials", "date",
    "text"}`` each (17.13.4.2; ``date`` as Word wrote it, ISO 8601 or ''), their text read as
    :func:`read_comments` reads it. Raises lxml's XMLSyntaxError for a damaged part."""
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    return {comment.get(_W + "id", ""): {"author": comment.get(_W + "author", ""),
                                         "initials": comment.get(_W + "initials", ""),
                                         "date": comment.get(_W + "date", ""), "text": _text(comment)}
            for comment in root.iter(_W + "comment")}


def accept_package(member: zipfile.ZipInfo, data: bytes, changes: WordChanges,
                   hidden: frozenset[str] = frozenset()) -> bytes:
    """``data`` of package part ``member`` as it goes to the converter: story parts accepted (``hidden``: the
    ids of styles that hide text, :func:`hidden_styles`), comments read aside and emptied, every other part
    unchanged."""
    name = member.filename
    if is_story_part(name):
        return accept_story(data, changes, hidden)
    if name == "word/comments.xml":
        return read_comments(data, changes)
    return data
