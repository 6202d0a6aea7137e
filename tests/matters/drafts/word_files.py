"""Word files made by the tests: a DOCX's document part edited as Word would store an edit made with tracked
changes on (``w:ins`` / ``w:del`` runs, a deleted paragraph mark) and a comment (``word/comments.xml`` with its
anchors, relationship and content type), ECMA-376 Part 1, 17.13."""

import io
import zipfile
from xml.sax.saxutils import escape, quoteattr

from lxml import etree

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_W = f"{{{W}}}"
_REVISION = {_W + "id": "0", _W + "author": "Dana Whitfield", _W + "date": "2026-03-02T10:00:00Z"}


def parts(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as package:
        return {info.filename: package.read(info) for info in package.infolist()}


def packed(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            package.writestr(name, data)
    return out.getvalue()


def _paragraph(root, starting: str):
    for paragraph in root.iter(_W + "p"):
        if "".join(paragraph.itertext()).startswith(starting):
            return paragraph
    raise AssertionError(f"no paragraph starts with {starting!r}")


def _element(tag: str, **attributes) -> etree._Element:
    element = etree.Element(_W + tag)
    for name, value in attributes.items():
        element.set(_W + name, value)
    return element


def _text_run(text: str, *, deleted: bool = False) -> etree._Element:
    run = _element("r")
    t = etree.SubElement(run, _W + ("delText" if deleted else "t"))
    t.text = text
    t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return run


class WordEdit:
    """Edits of one exported DOCX, applied to its document part in order; :meth:`bytes` packs the result."""

    def __init__(self, content: bytes):
        self.members = parts(content)
        self.root = etree.fromstring(self.members["word/document.xml"])
        self.comments: list[tuple[str, str]] = []

    def track_replace(self, starting: str, old: str, new: str) -> "WordEdit":
        """In the paragraph starting with ``starting``, the words ``old`` struck and ``new`` inserted as tracked
        changes: the run holding ``old`` is split into the text before, ``w:del``, ``w:ins`` and the text after."""
        paragraph = _paragraph(self.root, starting)
        for run in paragraph.iter(_W + "r"):
            t = run.find(_W + "t")
            if t is None or old not in (t.text or ""):
                continue
            before, after = t.text.split(old, 1)
            t.text = before
            t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
            deletion = _element("del", **{k.split("}")[1]: v for k, v in _REVISION.items()})
            deletion.set(_W + "id", "901")
            deletion.append(_text_run(old, deleted=True))
            insertion = _element("ins", **{k.split("}")[1]: v for k, v in _REVISION.items()})
            insertion.set(_W + "id", "902")
            insertion.append(_text_run(new))
            index = run.getparent().index(run)
            run.getparent().insert(index + 1, deletion)
            run.getparent().insert(index + 2, insertion)
            run.getparent().insert(index + 3, _text_run(after))
            return self
        raise AssertionError(f"{old!r} is not in one run")

    def track_insert_paragraph(self, after: str, text: str) -> "WordEdit":
        """A new paragraph ``text`` after the one starting with ``after``, inserted with tracked changes."""
        anchor = _paragraph(self.root, after)
        paragraph = _element("p")
        insertion = etree.SubElement(paragraph, _W + "ins", {_W + "id": "903", _W + "author": "Dana Whitfield"})
        insertion.append(_text_run(text))
        anchor.addnext(paragraph)
        return self

    def track_delete_paragraph(self, starting: str) -> "WordEdit":
        """The paragraph starting with ``starting`` deleted with tracked changes: its runs and its mark."""
        paragraph = _paragraph(self.root, starting)
        for run in list(paragraph.findall(_W + "r")):
            for t in run.findall(_W + "t"):
                t.tag = _W + "delText"
            deletion = _element("del", id="904", author="Dana Whitfield")
            run.addprevious(deletion)
            deletion.append(run)
        properties = paragraph.find(_W + "pPr")
        if properties is None:
            properties = _element("pPr")
            paragraph.insert(0, properties)
        run_properties = etree.SubElement(properties, _W + "rPr")
        run_properties.append(_element("del", id="905", author="Dana Whitfield"))
        return self

    def delete_mark(self, starting: str) -> "WordEdit":
        """The mark of the paragraph starting with ``starting`` deleted (tracked): it joins the next one."""
        paragraph = _paragraph(self.root, starting)
        properties = paragraph.find(_W + "pPr")
        if properties is None:
            properties = _element("pPr")
            paragraph.insert(0, properties)
        etree.SubElement(properties, _W + "rPr").append(_element("del", id="906", author="Dana Whitfield"))
        return self

    def comment(self, starting: str, text: str, author: str = "Dana Whitfield") -> "WordEdit":
        """A comment anchored on the whole paragraph starting with ``starting``."""
        comment_id = str(len(self.comments) + 1)
        paragraph = _paragraph(self.root, starting)
        runs = paragraph.findall(_W + "r")
        runs[0].addprevious(_element("commentRangeStart", id=comment_id))
        runs[-1].addnext(_element("commentRangeEnd", id=comment_id))
        reference = _element("r")
        reference.append(_element("commentReference", id=comment_id))
        paragraph.append(reference)
        self.comments.append((author, text))
        return self

    def set_text(self, starting: str, text: str) -> "WordEdit":
        """The paragraph starting with ``starting`` rewritten in place (no tracked change): one plain run."""
        paragraph = _paragraph(self.root, starting)
        for run in list(paragraph.iter(_W + "r")):
            run.getparent().remove(run)
        paragraph.append(_text_run(text))
        return self

    def bytes(self) -> bytes:
        members = dict(self.members)
        members["word/document.xml"] = etree.tostring(self.root, xml_declaration=True, encoding="UTF-8",
                                                      standalone=True)
        if self.comments:
            body = "".join(
                f'<w:comment w:id="{i}" w:author={quoteattr(author)} w:date="2026-03-02T10:00:00Z" w:initials="DW">'
                f'<w:p><w:r><w:t>{escape(text)}</w:t></w:r></w:p></w:comment>'
                for i, (author, text) in enumerate(self.comments, start=1))
            members["word/comments.xml"] = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                                            f'<w:comments xmlns:w="{W}">{body}</w:comments>').encode()
            rels = members["word/_rels/document.xml.rels"].decode()
            members["word/_rels/document.xml.rels"] = rels.replace("</Relationships>", (
                '<Relationship Id="rIdComments" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                'relationships/comments" Target="comments.xml"/></Relationships>')).encode()
            types = members["[Content_Types].xml"].decode()
            members["[Content_Types].xml"] = types.replace("</Types>", (
                '<Override PartName="/word/comments.xml" ContentType="application/vnd.openxmlformats-'
                'officedocument.wordprocessingml.comments+xml"/></Types>')).encode()
        return packed(members)
