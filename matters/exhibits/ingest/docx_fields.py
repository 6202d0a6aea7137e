"""Word fields shown as Word last displayed them, never computed again at conversion.

A Word field (ECMA-376 Part 1 section 17.16) is stored as an instruction and, when Word has shown it, the result
it displayed: ``w:fldSimple`` holds the instruction in ``w:instr`` and the result as its runs (17.16.19); a complex
field is a run with ``w:fldChar w:fldCharType="begin"``, instruction runs (``w:instrText``, possibly with nested
fields), a ``separate`` mark, the result runs, and an ``end`` mark (17.16.18). LibreOffice computes many fields
again when it opens a file, so a letter dated with ``DATE`` converted to the day of the upload, and ``FILENAME`` or
``USERNAME`` to the sandbox's name for the file and user. The evidence is what the document showed when it was
written and sent; so before conversion every field that has a stored result is replaced by that result (its runs
kept as plain runs, the instruction and the marks removed), except the fields in :data:`LIVE_FIELDS`, whose
value depends on where on the printed page they stand (a footer's ``PAGE`` is stored once, for one page) or that
draw a form control. A field that depends on when or where the file is opened (:data:`VOLATILE_FIELDS`) and has
no stored result is removed: nothing Word showed can be shown, and today's value would be false.

Every field replaced or removed is recorded (its name, instruction and stored result) for the exhibit page.
Both the transitional and the strict (ISO/IEC 29500 Strict) namespaces are read. Django-free: runs in the ingest
child.
"""

from dataclasses import dataclass

from lxml import etree

_NAMESPACES = ("http://schemas.openxmlformats.org/wordprocessingml/2006/main",
               "http://purl.oclc.org/ooxml/wordprocessingml/main")
# Fields whose value is computed from the page they are printed on, or that draw a form control from ``w:ffData``:
# LibreOffice lays them out itself (17.16.5).
LIVE_FIELDS = frozenset({"PAGE", "NUMPAGES", "SECTIONPAGES", "SECTION", "FORMTEXT", "FORMCHECKBOX",
                         "FORMDROPDOWN"})
# Fields whose value depends on when, where or by whom the file is opened, saved or printed (17.16.5).
VOLATILE_FIELDS = frozenset({"DATE", "TIME", "PRINTDATE", "SAVEDATE", "CREATEDATE", "EDITTIME", "FILENAME",
                             "FILESIZE", "USERNAME", "USERINITIALS", "USERADDRESS", "LASTSAVEDBY", "REVNUM",
                             "NUMCHARS", "NUMWORDS", "TEMPLATE"})
# At most this many fields are recorded per file; past it they are still replaced.
MAX_RECORDED_FIELDS = 500
MAX_RESULT_CHARS = 300
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def field_name(instruction: str) -> str:
    """The field type of an instruction (``DATE \\@ "MMMM d, yyyy"`` -> ``DATE``), upper case; '' if none."""
    words = instruction.replace("\\", " \\").split()
    return words[0].upper().lstrip("=") if words else ""


def _local(element) -> str:
    tag = element.tag
    if not isinstance(tag, str) or not tag.startswith("{"):
        return ""
    namespace, _, local = tag[1:].partition("}")
    return local if namespace in _NAMESPACES else ""


def _attribute(element, name: str) -> str:
    for namespace in _NAMESPACES:
        value = element.get(f"{{{namespace}}}{name}")
        if value is not None:
            return value
    return ""


def _text(runs) -> str:
    return "".join(node.text or "" for run in runs for node in run.iter() if _local(node) == "t")


def _remove(element) -> None:
    parent = element.getparent()
    if parent is not None:
        parent.remove(element)


@dataclass(eq=False)
class _Complex:
    order: int  # where its begin stands among the file's fields: outer fields come before those they hold
    begin: object  # the run holding fldChar begin
    instruction: list  # instrText elements of this field itself
    instruction_runs: list  # every run between begin and separate (nested fields' runs included)
    result_runs: list
    separate: object = None
    end: object = None


def _record(found: list[tuple[int, dict]], position: int, instruction: str, result: str, shown: str) -> None:
    if len(found) < MAX_RECORDED_FIELDS:
        found.append((position, {"name": field_name(instruction), "instruction": " ".join(instruction.split())[:200],
                                 "result": " ".join(result.split())[:MAX_RESULT_CHARS], "shown": shown}))


def _decide(instruction: str, has_result: bool, eligible: frozenset[str] | None) -> str:
    """"result" (show the stored result), "removed" (a volatile field with nothing stored) or "" (left)."""
    name = field_name(instruction)
    if not name or name in LIVE_FIELDS or (eligible is not None and name not in eligible):
        return ""
    if has_result:
        return "result"
    return "removed" if name in VOLATILE_FIELDS else ""


def _simple_fields(root, found: list[tuple[int, dict]], position: dict, eligible: frozenset[str] | None) -> None:
    for field in [e for e in root.iter() if _local(e) == "fldSimple"]:
        if field.getparent() is None:
            continue
        instruction = _attribute(field, "instr")
        has_result = any(_local(node) == "r" for node in field.iter())
        shown = _decide(instruction, has_result, eligible)
        if not shown:
            continue
        _record(found, position[field], instruction, _text([field]), shown)
        parent = field.getparent()
        index = parent.index(field)
        kept = list(field) if shown == "result" else []
        for offset, child in enumerate(kept):
            if _local(child) in ("fldData",):
                continue
            parent.insert(index + offset, child)
        _remove(field)


def _complex_fields(root) -> list[_Complex]:
    """The complex fields of ``root`` that begin and end, outermost first, each with its runs."""
    open_fields: list[_Complex] = []
    closed: list[_Complex] = []
    for run in [e for e in root.iter() if _local(e) == "r"]:
        marks = [child for child in run if _local(child) == "fldChar"]
        kind = _attribute(marks[0], "fldCharType") if marks else ""
        # The run is part of the instruction of every field still reading its instruction, bar its own.
        outer = open_fields[:-1] if kind in ("separate", "end") else open_fields
        for field in outer:
            if field.separate is None:
                field.instruction_runs.append(run)
            else:
                field.result_runs.append(run)
        if kind == "begin":
            open_fields.append(_Complex(order=len(closed) + len(open_fields), begin=run, instruction=[],
                                        instruction_runs=[], result_runs=[]))
        elif kind == "separate" and open_fields:
            open_fields[-1].separate = run
        elif kind == "end" and open_fields:
            field = open_fields.pop()
            field.end = run
            closed.append(field)
        elif open_fields and open_fields[-1].separate is None:
            open_fields[-1].instruction += [child for child in run if _local(child) == "instrText"]
    return sorted(closed, key=lambda field: field.order)


def _strip_marks(run) -> None:
    for child in list(run):
        if _local(child) in ("fldChar", "instrText"):
            run.remove(child)


def freeze_fields(data: bytes, found: list[dict], eligible: frozenset[str] | None = None) -> bytes:
    """Return the story part ``data`` (``word/document.xml``, a header ...) with each field that has a stored
    result replaced by that result and each volatile field without one removed; append a record of each to
    ``found`` (``{"name", "instruction", "result", "shown": "result"|"removed"}``) in document order; a field nested
    in a replaced field's instruction goes with it, unrecorded. ``eligible``: the field names that may be
    replaced (None: all); others are left to the caller (the DOCX allowlist cuts fields that reach outside the
    file, and counts them). Raises lxml's XMLSyntaxError for a damaged part."""
    if b"fldSimple" not in data and b"fldChar" not in data:
        return data  # most parts hold no field: no second parse
    root = etree.fromstring(data, _PARSER)
    position = {element: index for index, element in enumerate(root.iter())}
    found_here: list[tuple[int, dict]] = []
    _simple_fields(root, found_here, position, eligible)
    for field in _complex_fields(root):
        if field.begin.getparent() is None:
            continue  # inside the instruction of an outer field already replaced
        instruction = "".join(element.text or "" for element in field.instruction)
        result_runs = field.result_runs if field.separate is not None else []
        shown = _decide(instruction, bool(result_runs), eligible)
        if not shown:
            continue
        _record(found_here, position[field.begin], instruction, _text(result_runs), shown)
        for run in field.instruction_runs:
            _remove(run)
        for run in (field.begin, field.separate, field.end):
            if run is not None:
                _strip_marks(run)
        if shown == "removed":
            for run in result_runs:
                _remove(run)
    found_here.sort(key=lambda item: item[0])
    found += [record for _, record in found_here[:max(0, MAX_RECORDED_FIELDS - len(found))]]
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
