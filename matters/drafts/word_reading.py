"""A draft back from Word: the paragraphs of a DOCX an attorney edited, as Word shows its final text.

The tracked changes are read by the reader exhibits use (:func:`matters.exhibits.ingest.docx_revisions.accept_story`:
insertions in, deletions out, property changes dropped, hidden text out), after fields are shown as their stored
result (:func:`matters.exhibits.ingest.docx_fields.freeze_fields`), so a Word file reads the same whether it came
in as evidence or as a draft. Two things a draft needs besides: each comment stays beside the paragraph it is
anchored in (``w:commentRangeStart`` or, without a range, ``w:commentReference``; ECMA-376 Part 1, 17.13.4), and a
paragraph whose mark was deleted is joined to the paragraph after it, as Word joins them when the deletion is
accepted (17.13.5.15). Both are written on the paragraph as private attributes before the revisions are accepted,
since accepting them removes the marks.

The file is read in the web process, not in the ingest child: nothing is converted or laid out, only XML read
with the parser exhibits use (no DTD, entities or network), each part at most :data:`MAX_PART_BYTES` unpacked.

Django-free. Errors are :class:`WordUnreadable` with a message written for an attorney.
"""

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from matters.drafts.markdown import Run
from matters.exhibits.ingest.docx_fields import freeze_fields
from matters.exhibits.ingest.docx_revisions import WordChanges, accept_story, comments_by_id, hidden_styles
from matters.exhibits.ingest.office_crypto import encrypted
from matters.exhibits.sniff import ENCRYPTED_OFFICE_DESCRIPTION, sniff

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_W = f"{{{W}}}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
# Private attributes written on paragraphs before the revisions are accepted (not a namespace Word knows).
_L = "{urn:lawdesk:word-draft}"
# A draft's document part is a few megabytes; a part unpacking to more is refused rather than read into memory.
MAX_PART_BYTES = 64 * 1024 * 1024
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
# The version a LawDesk export was made from, as its footer and properties name it (matters.drafts.exports).
_VERSION_SHA = re.compile(r"SHA-256 ([0-9a-f]{64})")


class WordUnreadable(Exception):
    """The upload cannot be read as a Word document; the message says why, for an attorney."""


@dataclass
class WordParagraph:
    """One paragraph of the document's body: its style's name (``Heading 1``, ``List Bullet 2``, ``Quote``, ''
    for the default), its list level from Word's numbering (0: not numbered by Word), its runs (``footnote``: the
    note's number, 1-based in order of first reference) and the ids of the comments anchored in it."""

    style: str
    runs: list[Run]
    numbered_level: int = 0
    comments: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(r.text for r in self.runs if not r.footnote)


@dataclass
class WordDocument:
    """What a DOCX says: its body paragraphs in order, its footnotes' runs (note n is item n-1, numbered in order
    of first reference, as :func:`matters.drafts.markdown.blocks` numbers them), its comments by id
    (``{"author", "initials", "date", "text"}``), the tracked changes accepted (counts and texts), and the SHA-256
    of every draft version its footer or properties name (a LawDesk export names the one it was made from)."""

    paragraphs: list[WordParagraph]
    notes: list[list[Run]]
    comments: dict[str, dict]
    changes: WordChanges
    version_sha256s: list[str]


def _read(package: zipfile.ZipFile, name: str) -> bytes | None:
    try:
        info = package.getinfo(name)
    except KeyError:
        return None
    with package.open(info) as stream:
        data = stream.read(MAX_PART_BYTES + 1)
    if len(data) > MAX_PART_BYTES:
        raise WordUnreadable(f"The Word file's part {name} unpacks to more than {MAX_PART_BYTES // 2 ** 20} MB; "
                             "it is not read. Save the document again in Word, without embedded files, and upload it.")
    return data


def _on(element) -> bool:
    """Whether an on/off run property (``<w:i/>``, ``<w:i w:val="0"/>``) is on (17.17.4)."""
    return element is not None and element.get(_W + "val", "true").lower() not in ("0", "false", "off")


def _mark_paragraphs(data: bytes) -> bytes:
    """The document part with each paragraph's comment ids and deleted mark written on it as attributes."""
    root = etree.fromstring(data, _PARSER)
    for paragraph in root.iter(_W + "p"):
        ids = [e.get(_W + "id", "") for e in paragraph.iter(_W + "commentRangeStart")]
        ids += [e.get(_W + "id", "") for e in paragraph.iter(_W + "commentReference") if e.get(_W + "id") not in ids]
        if ids:
            paragraph.set(_L + "comments", " ".join(dict.fromkeys(ids)))
        if paragraph.find(f"{_W}pPr/{_W}rPr/{_W}del") is not None:
            paragraph.set(_L + "joined", "1")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def _style_names(styles: bytes | None) -> dict[str, str]:
    if styles is None:
        return {}
    root = etree.fromstring(styles, _PARSER)
    names = {}
    for style in root.iter(_W + "style"):
        name = style.find(_W + "name")
        names[style.get(_W + "styleId", "")] = name.get(_W + "val", "") if name is not None else ""
    return names


def _runs(paragraph, note_numbers: dict[str, int]) -> list[Run]:
    """The paragraph's runs in order (those of a paragraph nested in it, a text box's, excluded)."""
    runs: list[Run] = []
    for run in paragraph.iter(_W + "r"):
        if next(run.iterancestors(_W + "p")) is not paragraph:
            continue
        properties = run.find(_W + "rPr")
        bold = italic = False
        if properties is not None:
            bold, italic = _on(properties.find(_W + "b")), _on(properties.find(_W + "i"))
        for child in run:
            tag = child.tag
            if tag == _W + "t" and child.text:
                runs.append(Run(child.text, bold, italic))
            elif tag == _W + "tab":
                runs.append(Run("\t", bold, italic))
            elif tag in (_W + "br", _W + "cr"):
                runs.append(Run("\n", bold, italic))
            elif tag == _W + "noBreakHyphen":
                runs.append(Run("-", bold, italic))
            elif tag == _W + "footnoteReference":
                note = child.get(_W + "id", "")
                note_numbers.setdefault(note, len(note_numbers) + 1)
                runs.append(Run(footnote=note_numbers[note]))
    return runs


def _notes(footnotes: bytes | None, changes: WordChanges, hidden) -> dict[str, list[Run]]:
    if footnotes is None:
        return {}
    root = etree.fromstring(accept_story(freeze_fields(footnotes, changes.fields), changes, hidden), _PARSER)
    notes = {}
    for note in root.iter(_W + "footnote"):
        if note.get(_W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
            continue
        runs: list[Run] = []
        for paragraph in note.iter(_W + "p"):
            if runs:
                runs.append(Run(" "))
            runs.extend(_runs(paragraph, {}))
        notes[note.get(_W + "id", "")] = runs
    return notes


def _version_sha256s(package: zipfile.ZipFile) -> list[str]:
    found: list[str] = []
    footers = sorted(n for n in package.namelist() if re.fullmatch(r"word/footer\d*\.xml", n))
    for name in ["docProps/core.xml", *footers]:
        data = _read(package, name)
        if data is None:
            continue
        text = "".join(etree.fromstring(data, _PARSER).itertext())
        found += [sha for sha in _VERSION_SHA.findall(text) if sha not in found]
    return found


def refusal_for_type(path: Path) -> str:
    """Why the file at ``path`` is not read as a DOCX ('' when it is one by its content): another type, a
    password-protected document, a Word 97-2003 file."""
    with open(path, "rb") as stream:
        head = stream.read(8192)
    if not head:
        return "The file is empty (0 bytes): nothing was received. Upload the Word file again."
    found = sniff(path, head)
    if found.description == ENCRYPTED_OFFICE_DESCRIPTION or encrypted(path):
        return ("The Word file is password-protected (encrypted), so its text cannot be read. In Word, remove the "
                "password (File › Info › Protect Document › Encrypt with Password, cleared), save, and upload it "
                "again.")
    if found.kind != "docx" and head.startswith(b"PK\x03\x04") and not zipfile.is_zipfile(path):
        # A ZIP that does not open: a DOCX cut short in a download or a copy, most likely.
        return ("The Word file is damaged and could not be read (its ZIP package does not open: it may have been cut "
                "short). Open it in Word, save it again, and upload that.")
    if found.kind != "docx":
        return (f"This file is a {found.description}, not a Word document (DOCX). Save the draft in Word as a "
                "Word Document (.docx) and upload that.")
    return ""


def read_word(path: Path) -> WordDocument:
    """Read the DOCX at ``path`` (see the module's docstring). Raises WordUnreadable for a file that is not a
    DOCX, is password-protected, is damaged (a ZIP or XML part that does not read), or has no document part."""
    refusal = refusal_for_type(path)
    if refusal:
        raise WordUnreadable(refusal)
    try:
        with zipfile.ZipFile(path) as package:
            document = _read(package, "word/document.xml")
            if document is None:
                raise WordUnreadable("The Word file has no document part (word/document.xml): it is damaged. "
                                     "Open it in Word, save it again, and upload that.")
            styles = _read(package, "word/styles.xml")
            hidden = hidden_styles(styles) if styles is not None else frozenset()
            changes = WordChanges()
            accepted = accept_story(freeze_fields(_mark_paragraphs(document), changes.fields), changes, hidden)
            notes_by_id = _notes(_read(package, "word/footnotes.xml"), changes, hidden)
            comment_part = _read(package, "word/comments.xml")
            comments = comments_by_id(comment_part) if comment_part is not None else {}
            changes.comments = len(comments)
            version_sha256s = _version_sha256s(package)
            names = _style_names(styles)
    except WordUnreadable:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, etree.XMLSyntaxError, EOFError, OSError, ValueError,
            NotImplementedError) as exc:
        # A truncated download, a part that does not parse, a compression method zipfile lacks.
        raise WordUnreadable(f"The Word file is damaged and could not be read ({exc}). Open it in Word, save it "
                             "again, and upload that.") from exc
    body = etree.fromstring(accepted, _PARSER).find(_W + "body")
    paragraphs: list[WordParagraph] = []
    note_numbers: dict[str, int] = {}
    joining: WordParagraph | None = None
    for element in (body.iter(_W + "p") if body is not None else []):
        if any(a.tag == _MC_FALLBACK for a in element.iterancestors()):
            continue  # the same content as the choice Word shows, for older readers
        properties = element.find(_W + "pPr")
        style_element = properties.find(_W + "pStyle") if properties is not None else None
        style_id = style_element.get(_W + "val", "") if style_element is not None else ""
        level = properties.find(f"{_W}numPr/{_W}ilvl") if properties is not None else None
        numbered = properties is not None and properties.find(_W + "numPr") is not None
        paragraph = WordParagraph(
            style=names.get(style_id, style_id), runs=_runs(element, note_numbers),
            numbered_level=(int(level.get(_W + "val", "0")) + 1 if level is not None and
                            level.get(_W + "val", "0").isdigit() else 1) if numbered else 0,
            comments=[c for c in element.get(_L + "comments", "").split() if c])
        if joining is not None:  # the paragraph before lost its mark: one paragraph once the deletion is accepted
            joining.runs += paragraph.runs
            joining.comments += [c for c in paragraph.comments if c not in joining.comments]
            paragraph = joining
        else:
            paragraphs.append(paragraph)
        joining = paragraph if element.get(_L + "joined") else None
    notes = [notes_by_id.get(note, []) for note, _ in sorted(note_numbers.items(), key=lambda item: item[1])]
    return WordDocument(paragraphs, notes, comments, changes, version_sha256s)
