"""Fields of a model's structured answer that cite the record: constrained to the packet's real cites, and checked.

- :func:`constrained_schema`: a stage's JSON schema with every field that cites the record (``source`` of an
  extraction row, ``cited_pages`` of the gate) given an ``enum`` of the evidence packet's page cites (Bates numbers,
  or ``Ex. N at P``). llama.cpp turns the schema into a grammar (``response_format.json_schema``) and Ollama
  enforces it through ``format``, so a model cannot write a cite the packet does not hold; the answer is validated
  against the same schema on return (:mod:`pipeline.llm.client`).
- :func:`extraction_check`: every extraction row verified as a draft's claim is (:func:`matters.drafts.verifier.check.
  verify_text`): its value must be on its source page. Each row gets ``status`` and ``message`` (glossary
  finding statuses); a value the verifier cannot read as a date or amount is ``ambiguous``, never passed.
"""

import copy

from matters.drafts.verifier.check import verify_text
from matters.models import Matter

# Fields that name a page of the record, by stage schema: (path to the array's item schema, field).
_CITE_FIELDS = {"source", "cited_pages"}
# An enum this long makes a grammar llama.cpp compiles slowly; a packet that large keeps the free string (still
# checked row by row on return).
MAX_ENUM_CITES = 2000


def constrained_schema(schema: dict | None, cites: list[str]) -> dict | None:
    """A copy of ``schema`` whose record-cite fields (``source``, ``cited_pages``; strings or arrays of strings)
    may only be one of ``cites``; ``schema`` itself when there is nothing to constrain."""
    cites = list(dict.fromkeys(c for c in cites if c))
    if schema is None or not cites or len(cites) > MAX_ENUM_CITES:
        return schema
    constrained = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.get("properties", {}).items():
                if key in _CITE_FIELDS and isinstance(value, dict):
                    # A schema may share one sub-schema between fields (the gate's reasons and cited_pages).
                    value = node["properties"][key] = copy.deepcopy(value)
                    target = value.get("items", value) if value.get("type") == "array" else value
                    if target.get("type") == "string":
                        target.pop("maxLength", None)
                        target["enum"] = cites
                walk(value)
            walk(node.get("items"))

    walk(constrained)
    return constrained


_KIND_OF = {"date": "date", "amount": "amount", "party": "quotation"}


def _row_sentence(number: int, item: dict) -> str:
    value = " ".join(str(item.get("value", "")).split()).replace("“", "").replace("”", "").replace('"', "")
    source = " ".join(str(item.get("source", "")).split())
    shown = f"“{value}”" if item.get("type") == "party" else value
    return f"Row {number}: {shown} ({source})."


def extraction_check(*, matter: Matter, items: list[dict]) -> list[dict]:
    """Verify each row of an extraction (``{"type": "amount"|"date"|"party", "value", "source"}``) against the
    matter: its value on its source page. Returns the rows with ``status`` and ``message`` added. One verification
    for all rows (each row a sentence of its own, its source its record cite)."""
    sentences, spans = [], []
    position = 0
    for number, item in enumerate(items, 1):
        sentence = _row_sentence(number, item)
        spans.append((position, position + len(sentence)))
        sentences.append(sentence)
        position += len(sentence) + 1
    findings = verify_text(matter=matter, text="\n".join(sentences)) if items else []
    checked = []
    for item, (start, end) in zip(items, spans):
        mine = [f for f in findings if start <= f.start < end]
        cite = next((f for f in mine if f.kind in ("bates_cite", "exhibit_cite")), None)
        fact = next((f for f in mine if f.kind == _KIND_OF.get(item.get("type"))), None)
        if cite is None:
            status, message = "ungrounded", f"“{item.get('source')}” is not a page cite of this matter."
        elif cite.status != "grounded":
            status, message = cite.status, cite.message
        elif fact is None:
            what = {"date": "a date", "amount": "an amount"}.get(item.get("type"), "a name of two or more words")
            status, message = "ambiguous", f"LawDesk could not read “{item.get('value')}” as {what}; check it by hand."
        else:
            status, message = fact.status, fact.message
        checked.append({**item, "status": status, "message": message})
    return checked
