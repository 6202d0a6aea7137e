"""A draft's text read as Markdown (CommonMark through markdown-it-py, raw HTML off), for the formatted view and
the exports.

Drafts come from models and people; their text is untrusted. The HTML for the page is rendered with raw HTML
disabled and then passed through nh3 keeping only formatting tags, no attributes and no links, so nothing a
draft says can run or load in the attorney's browser. Footnotes use the common extension syntax, which
CommonMark itself lacks: ``text[^1]`` and a definition line ``[^1]: the note`` (continued by indented lines).
They are taken out before parsing (CommonMark would read ``[^1]: ...`` as a link definition) and numbered in
the order they are first referenced.
"""

import re
from dataclasses import dataclass, field

import nh3
from markdown_it import MarkdownIt

from matters.invisible import reveal_in_html

# Formatting only: no links, images, forms, media or attributes of any kind.
FORMATTING_TAGS = {"p", "br", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "b", "i", "u", "s", "code",
                   "pre", "blockquote", "ul", "ol", "li", "hr", "sup", "sub", "table", "thead", "tbody", "tr",
                   "th", "td"}

_DEFINITION = re.compile(r"^\[\^([^\]\s]+)\]:[ \t]?(.*)$")
_REFERENCE = re.compile(r"\[\^([^\]\s]+)\]")
# Placeholders for footnote references that survive Markdown parsing as plain text (private-use characters, which
# a draft has no business containing; any that it does contain are removed first).
_REF_OPEN, _REF_CLOSE = "\ue000", "\ue001"
_PLACEHOLDER = re.compile(f"{_REF_OPEN}(\\d+){_REF_CLOSE}")
# Places marked in the text before it is read (a citation's start, for the table of authorities): private-use
# characters too, which Markdown reads as ordinary text and which never stand next to a construct's syntax.
_MARK_OPEN, _MARK_CLOSE = "\ue002", "\ue003"
_MARK = re.compile(f"{_MARK_OPEN}(\\d+){_MARK_CLOSE}")
_PLACE = re.compile(f"{_REF_OPEN}(\\d+){_REF_CLOSE}|{_MARK_OPEN}(\\d+){_MARK_CLOSE}")


def mark_places(text: str, places: list[tuple[int, int]]) -> str:
    """``text`` with a mark before each character offset of ``places`` (``(offset, mark number)`` pairs), which
    :func:`blocks` returns as a :class:`Run` with that ``mark``. Marks the draft itself holds (the same private-use
    characters) are removed; offsets are those of ``text`` as given. Several marks at one offset stand in the
    order of their numbers."""
    pieces, position = [], 0
    for offset, number in sorted(places):
        pieces.append(text[position:offset].replace(_MARK_OPEN, "").replace(_MARK_CLOSE, ""))
        pieces.append(f"{_MARK_OPEN}{number}{_MARK_CLOSE}")
        position = max(position, offset)
    pieces.append(text[position:].replace(_MARK_OPEN, "").replace(_MARK_CLOSE, ""))
    return "".join(pieces)


def unmarked(text: str) -> str:
    """``text`` without the marks :func:`mark_places` put in (a code block prints its text as it is)."""
    return _MARK.sub("", text)


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


@dataclass
class Footnoted:
    """A draft's body with footnote references replaced by numbered placeholders, and the notes' texts by number
    (1-based, in order of first reference)."""

    body: str
    notes: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # the label each note had in the text (note n: item n-1)
    lines: list[int] = field(default_factory=list)  # for each line of ``body``, its line in the text
    definition_lines: dict[str, list[int]] = field(default_factory=dict)  # label -> its lines in the text


def split_footnotes(text: str) -> Footnoted:
    """Take footnote definitions out of ``text`` and number the references to them. A reference to a label with no
    definition stays as written; a definition never referenced is dropped from the body and kept as a note after
    the referenced ones, so no text of the draft is lost."""
    text = text.replace(_REF_OPEN, "").replace(_REF_CLOSE, "")
    definitions: dict[str, list[str]] = {}
    definition_lines: dict[str, list[int]] = {}
    body_lines: list[str] = []
    lines: list[int] = []
    current: list[str] | None = None
    for index, line in enumerate(text.splitlines()):
        match = _DEFINITION.match(line)
        if match:
            current = definitions.setdefault(match.group(1), [])
            current.append(match.group(2).strip())
            definition_lines.setdefault(match.group(1), []).append(index)
            label = match.group(1)
            continue
        if current is not None and line.strip() and (line.startswith("    ") or line.startswith("\t")):
            current.append(line.strip())
            definition_lines[label].append(index)
            continue
        current = None
        body_lines.append(line)
        lines.append(index)
    numbers: dict[str, int] = {}

    def number(match: re.Match) -> str:
        label = match.group(1)
        if label not in definitions:
            return match.group(0)
        numbers.setdefault(label, len(numbers) + 1)
        return f"{_REF_OPEN}{numbers[label]}{_REF_CLOSE}"

    body = _REFERENCE.sub(number, "\n".join(body_lines))
    for label in definitions:
        numbers.setdefault(label, len(numbers) + 1)
    notes = [""] * len(numbers)
    labels = [""] * len(numbers)
    for label, index in numbers.items():
        notes[index - 1] = " ".join(definitions[label])
        labels[index - 1] = label
    return Footnoted(body=body, notes=notes, labels=labels, lines=lines, definition_lines=definition_lines)


def sanitize(html: str) -> str:
    """Keep only formatting tags (no attributes, no links); everything else is dropped or escaped."""
    return nh3.clean(html, tags=FORMATTING_TAGS, attributes={}, url_schemes=set(), strip_comments=True,
                     link_rel=None)


def render_html(text: str, *, notes_heading: str = "Notes", reveal: bool = True) -> str:
    """Return safe HTML for ``text`` read as Markdown, footnotes as superscript numbers and a numbered list at the
    end, and (with ``reveal``, for the review page) zero-width and bidi characters shown as ``U+XXXX`` marks as in
    the page viewer. Safe to mark_safe: it has been through :func:`sanitize`."""
    parts = split_footnotes(text)
    html = _parser().render(parts.body)
    if parts.notes:
        items = "".join(f"<li>{_parser().renderInline(note)}</li>" for note in parts.notes)
        html += f"<hr><p><strong>{notes_heading}</strong></p><ol>{items}</ol>"
    html = _PLACEHOLDER.sub(lambda m: f"<sup>{m.group(1)}</sup>", html)
    html = sanitize(html)
    return reveal_in_html(html) if reveal else html


@dataclass
class Run:
    """A piece of a paragraph with one formatting; ``footnote`` is a note's number (the run is its reference);
    ``mark`` the number of a place marked with :func:`mark_places` (the run holds no text)."""

    text: str = ""
    bold: bool = False
    italic: bool = False
    code: bool = False
    footnote: int | None = None
    mark: int | None = None


@dataclass
class Block:
    """One paragraph-level element for an export: ``kind`` is ``heading`` (``level`` 1-6), ``paragraph``,
    ``bullet`` or ``number`` (a list item; ``level`` is its nesting depth from 1), ``quote``, ``code`` or
    ``rule``."""

    kind: str
    runs: list[Run] = field(default_factory=list)
    level: int = 0

    @property
    def text(self) -> str:
        return "".join(f"[{r.footnote}]" if r.footnote else r.text for r in self.runs if r.mark is None)


def _inline_runs(children) -> list[Run]:
    runs: list[Run] = []
    bold = italic = False
    for token in children or []:
        if token.type in ("strong_open", "strong_close"):
            bold = token.type == "strong_open"
        elif token.type in ("em_open", "em_close"):
            italic = token.type == "em_open"
        elif token.type == "code_inline":
            runs.extend(Run(mark=int(m)) for m in _MARK.findall(token.content))
            runs.append(Run(unmarked(token.content), bold, italic, code=True))
        elif token.type == "softbreak":
            runs.append(Run(" ", bold, italic))
        elif token.type == "hardbreak":
            runs.append(Run("\n", bold, italic))
        elif token.type in ("text", "html_inline"):
            position = 0
            for match in _PLACE.finditer(token.content):
                if match.start() > position:
                    runs.append(Run(token.content[position:match.start()], bold, italic))
                if match.group(1):
                    runs.append(Run(footnote=int(match.group(1))))
                else:
                    runs.append(Run(mark=int(match.group(2))))
                position = match.end()
            if position < len(token.content):
                runs.append(Run(token.content[position:], bold, italic))
        elif token.type == "image":
            runs.append(Run(unmarked(token.content), bold, italic))
    return runs


def blocks(text: str) -> tuple[list[Block], list[list[Run]]]:
    """Read ``text`` as Markdown into paragraph-level blocks and the footnotes' runs (note n is item n-1).
    Links keep their text only; images their description."""
    body, notes, _, _ = _read_blocks(text)
    return body, notes


def source_blocks(text: str) -> tuple[list[tuple[Block, int, int]], list[list[Run]], Footnoted]:
    """:func:`blocks` with where each block is written: ``(block, first line, end line)``, lines of
    ``text.splitlines()`` counted from 0, the end excluded (a list item's lines include its marker); and the
    footnotes as :func:`split_footnotes` read them (their labels and the lines of their definitions)."""
    body, notes, maps, parts = _read_blocks(text)
    placed = []
    for block, (first, end) in zip(body, maps):
        placed.append((block, parts.lines[first], parts.lines[max(first, end - 1)] + 1))
    return placed, notes, parts


def _read_blocks(text: str) -> tuple[list[Block], list[list[Run]], list[tuple[int, int]], Footnoted]:
    parts = split_footnotes(text)
    out: list[Block] = []
    maps: list[tuple[int, int]] = []  # each block's lines of ``parts.body``
    lists: list[str] = []  # the open lists, innermost last: "bullet" or "number"
    quote_depth = 0
    pending: Block | None = None
    for token in _parser().parse(parts.body):
        if token.type == "heading_open":
            pending = Block("heading", level=int(token.tag[1]))
        elif token.type == "bullet_list_open":
            lists.append("bullet")
        elif token.type == "ordered_list_open":
            lists.append("number")
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif token.type == "blockquote_open":
            quote_depth += 1
        elif token.type == "blockquote_close":
            quote_depth -= 1
        elif token.type == "paragraph_open" and pending is None:
            if lists:
                pending = Block(lists[-1], level=len(lists))
            else:
                pending = Block("quote" if quote_depth else "paragraph")
        elif token.type == "inline" and pending is not None:
            pending.runs = _inline_runs(token.children)
            out.append(pending)
            maps.append(tuple(token.map or (0, 0)))
            pending = None
        elif token.type in ("code_block", "fence"):
            marks = [Run(mark=int(m)) for m in _MARK.findall(token.content)]
            out.append(Block("code", [*marks, Run(unmarked(token.content).rstrip("\n"), code=True)]))
            maps.append(tuple(token.map or (0, 0)))
        elif token.type == "hr":
            out.append(Block("rule"))
            maps.append(tuple(token.map or (0, 0)))
        elif token.type in ("heading_close", "paragraph_close"):
            pending = None
    notes = [_inline_runs(_parser().parseInline(note)[0].children) if note else [] for note in parts.notes]
    return out, notes, maps, parts
