"""The text of a new version from a draft's previous version and the DOCX an attorney edited in Word.

**Matching.** Each side is cut into paragraphs as the Word export writes them: one per Markdown block (heading,
paragraph, list item, block quotation, code block, rule) of the previous version
(:func:`matters.drafts.markdown.source_blocks`), one per non-empty body paragraph of the Word file
(:mod:`matters.drafts.word_reading`). Both are compared in one form, :func:`match_form`: the words only (italics,
bold, a paragraph's style and Markdown markup are not compared), each footnote's text in place of its mark, the
characters the export leaves out (:func:`matters.invisible.without_invisible`) left out here too, Unicode NFC,
every run of white space one space. The two lists are aligned with :class:`difflib.SequenceMatcher` (the longest
run of paragraphs in common first, then the same on each side of it; no junk heuristic).

**The new text.** A paragraph Word left unchanged keeps the previous version's exact text, Markdown and all, with
the text between it and the next unchanged one: the verifier keeps its findings by paragraph text
(:mod:`matters.drafts.verifier.memo`), so an unchanged paragraph is not checked again, and a waiver on it carries
over (:func:`matters.drafts.services.draft_verify`). A paragraph Word changed or added is written as Markdown
from the document (:func:`paragraph_markdown`). What the export could not carry to Word (a table) is kept as it
was, after the paragraph it followed: text the attorney never saw in Word is not dropped by an edit there.
Footnotes keep their label and definition when their text is unchanged; a new note takes the next free number.
"""

import difflib
import re
import unicodedata
from dataclasses import dataclass, field

from matters.drafts.markdown import Block, Run, source_blocks
from matters.drafts.word_reading import WordDocument, WordParagraph
from matters.invisible import without_invisible

# A paragraph this short ("ARGUMENT", "* * *", a caption line) is in many documents: it alone does not make a
# Word file a version of the draft.
MIN_COMMON_WORDS = 5
_LIST_KINDS = ("bullet", "number")


def match_form(runs: list[Run], notes: list[list[Run]]) -> str:
    """The form in which paragraphs are compared (see the module's docstring): ``runs`` of a paragraph, each
    footnote mark replaced by ``[^`` its note's text ``]`` (``notes``: note n is item n-1)."""
    pieces = []
    for run in runs:
        if run.footnote:
            note = notes[run.footnote - 1] if 0 < run.footnote <= len(notes) else []
            pieces.append(" [^" + "".join(r.text for r in note).strip() + "]")
        else:
            pieces.append(run.text)
    text = unicodedata.normalize("NFC", without_invisible("".join(pieces)))
    return " ".join(text.split())


def _block_form(block: Block, notes: list[list[Run]]) -> str:
    # The export writes a rule as a centred "*  *  *" paragraph.
    return "* * *" if block.kind == "rule" else match_form(block.runs, notes)


def paragraph_kind(paragraph: WordParagraph) -> tuple[str, int]:
    """``(kind, level)`` of a Word paragraph as a Markdown block (:class:`matters.drafts.markdown.Block`), from
    its style's name (the names the export uses, which are Word's built-in ones) or Word's own numbering."""
    style = paragraph.style.strip()
    if match := re.fullmatch(r"(?i)heading\s*([1-9])", style):
        return "heading", min(int(match.group(1)), 6)
    if style.lower() == "title":
        return "heading", 1
    if match := re.fullmatch(r"(?i)list\s*(bullet|number)(?:\s*([2-9]))?", style):
        return match.group(1).lower(), int(match.group(2) or 1)
    if style.lower() in ("quote", "intense quote", "block text"):
        return "quote", 0
    if paragraph.numbered_level:
        return "bullet", paragraph.numbered_level
    return "paragraph", 0


_ESCAPE = re.compile(r"([\\`*_]|\[(?=\^))")
_LINE_START = re.compile(r"^(#{1,6}(?=\s|$)|>|[-+](?=\s)|=+\s*$|\d{1,9}(?=[.)]\s))")


def _inline(runs: list[Run], labels: dict[int, str]) -> str:
    """Markdown of ``runs``: italics ``*...*``, bold ``**...**``, a footnote ``[^label]``; the characters Markdown
    would read as markup escaped. Line breaks stay single line breaks (a blank line would end the paragraph)."""
    out = []
    groups: list[tuple[bool, bool, str]] = []
    for run in runs:
        if run.footnote:
            groups.append((False, False, f"\0{run.footnote}\0"))
            continue
        text = _ESCAPE.sub(r"\\\1", run.text.replace("\t", " "))
        if groups and groups[-1][:2] == (run.bold, run.italic) and "\0" not in groups[-1][2]:
            groups[-1] = (run.bold, run.italic, groups[-1][2] + text)
        else:
            groups.append((run.bold, run.italic, text))
    for bold, italic, text in groups:
        if text.startswith("\0"):
            out.append(f"[^{labels[int(text.strip(chr(0)))]}]")
            continue
        marker = ("**" if bold else "") + ("*" if italic else "")
        core = text.strip()
        if not marker or not core:
            out.append(text)
            continue
        lead, trail = text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]
        out.append(f"{lead}{marker}{core}{marker[::-1]}{trail}")
    lines = [line.strip() for line in "".join(out).split("\n")]
    return "\n".join(_LINE_START.sub(r"\\\1", line) for line in lines if line)


def paragraph_markdown(paragraph: WordParagraph, labels: dict[int, str]) -> str:
    """The Markdown of one Word paragraph (its kind from :func:`paragraph_kind`); ``labels``: the footnote label
    for each of the document's note numbers."""
    kind, level = paragraph_kind(paragraph)
    text = _inline(paragraph.runs, labels)
    if kind == "heading":
        return "#" * level + " " + " ".join(text.split("\n"))
    if kind in _LIST_KINDS:
        indent = ("  " if kind == "bullet" else "   ") * (level - 1)
        marker = "- " if kind == "bullet" else "1. "
        return indent + marker + text.replace("\n", "\n" + indent + " " * len(marker))
    if kind == "quote":
        return "> " + text.replace("\n", "\n> ")
    return text


@dataclass
class Merged:
    """The new version's text and what became of each paragraph. ``kept``, ``changed``, ``added``, ``removed``:
    counts of paragraphs (Word's for the first three, the previous version's for ``removed``). ``paragraphs``:
    for each Word paragraph, ``(start, end)`` of it in ``text`` (character offsets), for its comments.
    ``common``: paragraphs of at least MIN_COMMON_WORDS words found unchanged."""

    text: str
    kept: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0
    common: int = 0
    paragraphs: list[tuple[int, int]] = field(default_factory=list)


def merge(previous: str, word: WordDocument) -> Merged:
    """The text of the version made from ``word`` over ``previous`` (the text of the draft's version it is
    uploaded on); see the module's docstring."""
    placed, old_notes, parts = source_blocks(previous)
    lines = previous.splitlines(keepends=True)
    definition_lines = {n for numbers in parts.definition_lines.values() for n in numbers}
    old_forms = [_block_form(block, old_notes) for block, _, _ in placed]
    word_paragraphs = [(i, p) for i, p in enumerate(word.paragraphs) if match_form(p.runs, word.notes)]
    new_forms = [match_form(p.runs, word.notes) for _, p in word_paragraphs]

    def source(first: int, end: int) -> str:
        return "".join(lines[k] for k in range(first, end) if k not in definition_lines).rstrip("\r\n")

    def between(u: int) -> str:
        """What lies after old block ``u`` (or before the first, for -1) that is no block, blank or definition."""
        first = placed[u][2] if u >= 0 else 0
        end = placed[u + 1][1] if u + 1 < len(placed) else len(lines)
        return source(first, end).strip("\r\n") if source(first, end).strip() else ""

    # Notes: an unchanged note keeps its label; a new one takes the next number no label of the draft uses.
    old_by_form = {}
    for number, label in enumerate(parts.labels, start=1):
        old_by_form.setdefault(match_form(old_notes[number - 1], []), label)
    used = set(parts.labels)
    labels: dict[int, str] = {}
    for number, runs in enumerate(word.notes, start=1):
        label = old_by_form.get(match_form(runs, []))
        if label is None or label in labels.values():
            label = next(str(n) for n in range(1, len(used) + len(word.notes) + 2) if str(n) not in used)
        used.add(label)
        labels[number] = label

    # (text, kind, Word paragraph index or None, what comes before it: None for a blank line, or a list item's
    # line break after a list item)
    pieces: list[tuple[str, str, int | None, str | None]] = []
    merged = Merged(text="")
    if lead := between(-1):
        pieces.append((lead, "extra", None, None))
    matcher = difflib.SequenceMatcher(None, old_forms, new_forms, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            gap = None
            for offset in range(i2 - i1):
                block, first, end = placed[i1 + offset]
                pieces.append((source(first, end), block.kind, word_paragraphs[j1 + offset][0], gap))
                # Between two kept blocks, what separated them is kept too (a line break in a tight list).
                gap = None
                if extra := between(i1 + offset):
                    pieces.append((extra, "extra", None, None))
                elif i1 + offset + 1 < len(placed):
                    last = lines[end - 1]
                    gap = last[len(last.rstrip("\r\n")):] + "".join(
                        lines[k] for k in range(end, placed[i1 + offset + 1][1]) if k not in definition_lines)
                merged.common += len(old_forms[i1 + offset].split()) >= MIN_COMMON_WORDS
            merged.kept += i2 - i1
            continue
        for index, paragraph in word_paragraphs[j1:j2]:
            pieces.append((paragraph_markdown(paragraph, labels), paragraph_kind(paragraph)[0], index, None))
        for u in range(i1, i2):
            if extra := between(u):
                pieces.append((extra, "extra", None, None))
        if op == "replace":
            common = min(i2 - i1, j2 - j1)
            merged.changed += common
            merged.added += (j2 - j1) - common
            merged.removed += (i2 - i1) - common
        elif op == "insert":
            merged.added += j2 - j1
        else:
            merged.removed += i2 - i1
    # Consecutive list items stay one list; anything else is its own paragraph.
    text, spans = "", {}
    for k, (piece, kind, index, gap) in enumerate(pieces):
        if k and gap is not None and gap.strip("\r\n") == "" and gap:
            text += gap
        elif k:
            text += "\n" if kind in _LIST_KINDS and pieces[k - 1][1] in _LIST_KINDS else "\n\n"
        if index is not None:
            spans[index] = (len(text), len(text) + len(piece))
        text += piece
    text += _definitions(text, previous, parts, old_notes, word, labels)
    merged.text = text if text.endswith("\n") or not previous.endswith("\n") else text + "\n"
    merged.paragraphs = [spans.get(i, (0, 0)) for i in range(len(word.paragraphs))]
    return merged


def _definitions(body: str, previous: str, parts, old_notes, word: WordDocument, labels: dict[int, str]) -> str:
    """The footnote definitions for the notes ``body`` refers to and does not define: a kept note's lines as they
    were, a new or changed one written from Word. The previous version's block of definitions is kept whole when
    it is still exactly what is needed."""
    lines = previous.splitlines()
    old_labels = parts.labels
    wanted = list(dict.fromkeys(labels[n] for n in range(1, len(word.notes) + 1)))
    defined = set(re.findall(r"(?m)^\[\^([^\]\s]+)\]:", body))
    missing = [label for label in wanted if label not in defined]
    if not missing:
        return ""
    # A label is reused only for a note whose text is unchanged (merge), so the same labels in the same order
    # are the same notes: their lines are kept as they were, blank lines between them included.
    numbers = sorted(n for label in old_labels for n in parts.definition_lines.get(label, []))
    if missing == old_labels and numbers and all(
            k in numbers or not lines[k].strip() for k in range(numbers[0], numbers[-1] + 1)):
        return "\n\n" + "\n".join(lines[numbers[0]:numbers[-1] + 1])
    written = []
    by_label = {labels[n]: n for n in labels}
    for label in missing:
        runs = word.notes[by_label[label] - 1]
        kept = label in old_labels and match_form(old_notes[old_labels.index(label)], []) == match_form(runs, [])
        if kept:
            written.append("\n".join(lines[k] for k in parts.definition_lines[label]))
        else:
            written.append(f"[^{label}]: " + " ".join(_inline(runs, labels).split("\n")))
    return "\n\n" + "\n".join(written)
