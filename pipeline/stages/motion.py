"""A motion written section by section (docs/jobs.md, "A motion, section by section"): the plan's outline checked
and keyed, what the plan stage reads of the matter, the parts LawDesk writes from the matter record (caption,
signature block, certificate of service: never a model), what a section whose retrieval found nothing says, and
the document assembled in the outline's order.

Django-free apart from the matter and job instances it is handed; the stage objects
(:class:`pipeline.stages.kinds.Plan`, :class:`pipeline.stages.kinds.Section`) call it.
"""

import re

from .specs import SECTION_KINDS

#: Sections LawDesk writes from the matter record; every other kind is drafted by the drafter, one run each.
RECORD_KINDS = ("caption", "signature_block", "certificate_of_service")
LABELS = {"caption": "Caption", "introduction": "Introduction", "statement_of_facts": "Statement of facts",
          "legal_standard": "Legal standard", "argument": "Argument", "conclusion": "Conclusion",
          "signature_block": "Signature block", "certificate_of_service": "Certificate of service"}
NOT_IN_RECORD = "NOT IN THE MATTER RECORD"
# What the plan stage's prompt lists of the matter, at most: exhibits, authorities, dated facts.
PLAN_EXHIBITS, PLAN_AUTHORITIES, PLAN_FACTS = 60, 30, 15
_DIGEST_CHARS, _FACT_CHARS = 240, 200


def states_facts(outline: dict) -> list[str]:
    """The keys of the drafted sections of ``outline`` that state the facts and so must stand on the record: the
    statement of facts and each argument; in an outline with neither, its first drafted section that is not the
    legal standard (an introduction, most often); [] when there is none."""
    drafted = [s for s in outline["sections"] if s["writer"] == "drafter"]
    keys = [s["key"] for s in drafted if s["kind"] in ("statement_of_facts", "argument")]
    return keys or [s["key"] for s in drafted if s["kind"] != "legal_standard"][:1]


class OutlineError(ValueError):
    """The plan's outline cannot be used; the message says why, for an attorney."""


# A heading or title that is not words: markup, template braces or brackets a small model copied (``{MATTER}``,
# ``[Matter: ...``, ``<<<END ...>>>``), or a run of characters no heading has (``17-3984_0256DKLN 2/FBAC:SECTIONX``).
_NOT_PROSE = re.compile(r"[{}<>\[\]_|\\^~=@#*]|[^\sA-Za-z]{6,}")
_WORDLIKE = re.compile(r"[(\[\"“'‘]*[A-Za-z][A-Za-z'’.-]*[)\]\"”'’.,:;!?]*")
# LawDesk's own fences (pipeline.packet) or any like them, copied from the prompt into a section's text.
_FENCE = re.compile(r"<{2,3}/?[A-Z][^<>\n]{0,200}?>{1,3}")


_CITELIKE = re.compile(r"[§¶]+|[\dA-Za-z().,]*\d[\dA-Za-z().,]*")


def plain_words(text: str) -> bool:
    """Whether ``text`` (a heading or a title a model wrote) reads as words: no markup characters, no long run of
    characters that are not letters, and at least one word of letters and no fewer words than tokens that are
    neither words nor parts of a cite (``§``, ``1028A``, ``12(b)(6)``, ``F.3d``)."""
    if _NOT_PROSE.search(text):
        return False
    words = junk = 0
    for token in text.split():
        if _WORDLIKE.fullmatch(token):
            words += 1
        elif not _CITELIKE.fullmatch(token):
            junk += 1
    return words >= max(1, junk)


def _strings(value, limit: int) -> list[str]:
    items = value if isinstance(value, list) else []
    return list(dict.fromkeys(" ".join(str(v).split()) for v in items if str(v).strip()))[:limit]


# The outline a filing gets when the plan names only what LawDesk writes itself (a small model's plan that lists
# the caption and stops): each section searched for the request's own words; its argument, the first, is where
# the stored authorities are quoted (pipeline.stages.attribution).
STANDARD_SECTIONS = [("introduction", "What does the request ask the court to do, and why?"),
                     ("statement_of_facts", "What facts in the record bear on the request?"),
                     ("argument", "Why does the law support the request?"),
                     ("conclusion", "What relief is asked for?")]


def outline_from(parsed: dict | None, *, queries: list[str] | None = None) -> dict:
    """The outline of a plan's answer ``parsed`` (:data:`pipeline.stages.specs.PLAN_SCHEMA`), keyed and in filing
    order: ``{"title", "sections": [{"key", "kind", "heading", "questions", "queries", "writer"}], "notes"}``.

    ``writer`` is ``matter`` for the kinds in :data:`RECORD_KINDS` and ``drafter`` for the others. The caption
    comes first and the signature block and certificate of service last whatever the plan said (added where it
    left them out, one of each); the drafted sections keep the plan's order. ``key`` is the section's place and
    kind (``03-argument``), unique in the outline. ``notes`` says what was added or moved. Raises OutlineError for
    a plan with no sections. A plan naming only sections LawDesk writes (the caption and the like) gets the
    drafted sections of :data:`STANDARD_SECTIONS`, each searched for ``queries`` (the request's words), and a note
    saying so; a plan naming neither a legal standard nor an argument gets a legal standard (before the conclusion,
    searched for ``queries``), and a note saying so."""
    sections = (parsed or {}).get("sections")
    if not isinstance(sections, list) or not sections:
        raise OutlineError("The reasoner's plan has no sections, so there is nothing to write. Retry the plan "
                           "stage, or state the motion's grounds in the request more plainly.")
    drafted, seen, notes = [], [], []
    for entry in sections:
        if not isinstance(entry, dict) or entry.get("kind") not in SECTION_KINDS:
            continue
        kind = entry["kind"]
        if kind in RECORD_KINDS:
            seen.append(kind)
            continue
        heading = " ".join(str(entry.get("heading") or "").split())[:120]
        if heading and not plain_words(heading):
            notes.append(f"The plan's heading “{heading}” is not words; LawDesk used “{LABELS[kind]}”.")
            heading = ""
        drafted.append({"kind": kind, "heading": heading or LABELS[kind],
                        "questions": _strings(entry.get("questions"), 2),
                        "queries": _strings(entry.get("queries"), 2)})
    if not drafted:
        named = ", ".join(LABELS[k].lower() for k in dict.fromkeys(seen)) or "no section of a known kind"
        searches = [q for q in (queries or []) if q.strip()][:2]
        drafted = [{"kind": kind, "heading": LABELS[kind], "questions": [question], "queries": searches}
                   for kind, question in STANDARD_SECTIONS]
        notes.append(f"The reasoner's plan named no section for the drafter to write (it named {named}); LawDesk "
                     "used the standard outline of introduction, statement of facts, argument and conclusion, "
                     "each searched for the request's words.")
    elif not any(entry["kind"] in ("legal_standard", "argument") for entry in drafted):
        # A motion states the law it rests on; a small model's plan of an introduction and facts alone does not.
        place = next((i for i, entry in enumerate(drafted) if entry["kind"] == "conclusion"), len(drafted))
        drafted.insert(place, {"kind": "legal_standard", "heading": LABELS["legal_standard"],
                               "questions": ["What law governs the request?"],
                               "queries": [q for q in (queries or []) if q.strip()][:2]})
        notes.append("The reasoner's plan named no legal standard and no argument; LawDesk added a legal standard, "
                     "searched for the request's words, so the filing states the law it rests on.")
    for kind in RECORD_KINDS:
        if kind not in seen:
            notes.append(f"The plan left out the {LABELS[kind].lower()}; LawDesk adds it from the matter record.")
    ordered = [{"kind": "caption", "heading": LABELS["caption"], "questions": [], "queries": []}, *drafted,
               *({"kind": k, "heading": LABELS[k], "questions": [], "queries": []} for k in RECORD_KINDS[1:])]
    for number, entry in enumerate(ordered, start=1):
        entry["key"] = f"{number:02d}-{entry['kind']}"
        entry["writer"] = "matter" if entry["kind"] in RECORD_KINDS else "drafter"
    title = " ".join(str((parsed or {}).get("title") or "").split())[:150]
    if title and not plain_words(title):
        notes.append(f"The plan's title “{title}” is not words; the caption names the document by its kind.")
        title = ""
    if not title or _looks_like_caption(title):
        title = ""
    return {"title": title, "sections": ordered, "notes": notes}


def drafted_keys(outline: dict) -> list[str]:
    """The keys of the sections the drafter writes, in outline order."""
    return [s["key"] for s in outline.get("sections", []) if s.get("writer") == "drafter"]


def section_entry(outline: dict, key: str) -> dict | None:
    return next((s for s in outline.get("sections", []) if s.get("key") == key), None)


# What the plan reads of the matter.

def plan_context(*, exhibits: list[tuple], authorities: list, facts: list) -> dict:
    """The plan prompt's lists: ``exhibits`` as (Exhibit, ExhibitDigest or None) pairs, ``authorities`` as
    Exhibits of origin authority, ``facts`` as :class:`matters.chronology.selectors.DatedFact` in date order.
    Each list is cut at its limit above, saying how many more there are."""
    lines = []
    for exhibit, digest in exhibits[:PLAN_EXHIBITS]:
        pages = f"{exhibit.page_count} page{'' if exhibit.page_count == 1 else 's'}"
        line = f"- {exhibit.display_label}: {exhibit.title or 'untitled'} ({pages})"
        data = digest.digest if digest is not None and digest.status == "done" and digest.digest else None
        if data:
            about = "; ".join(str(v) for v in (data.get("document_type"), data.get("date"), data.get("summary"))
                              if v)
            line += f" — digest: {about[:_DIGEST_CHARS]}"
        lines.append(line)
    if len(exhibits) > PLAN_EXHIBITS:
        lines.append(f"- and {len(exhibits) - PLAN_EXHIBITS} more exhibits")
    law = [f"- {a.cites_as or a.title or 'untitled'}" for a in authorities[:PLAN_AUTHORITIES]]
    if len(authorities) > PLAN_AUTHORITIES:
        law.append(f"- and {len(authorities) - PLAN_AUTHORITIES} more authorities")
    dated = [f"- {f.when}: {f.text[:_FACT_CHARS]} ({f.label} at {f.page}{f', {f.bates}' if f.bates else ''})"
             for f in facts[:PLAN_FACTS]]
    return {"exhibits": "\n".join(lines) or "(no evidence exhibits)",
            "authority_captions": "\n".join(law) or "(none: the matter holds no authorities)",
            "chronology": "\n".join(dated) or "(no dated facts found)"}


# The parts written from the matter record.

def caption_text(matter, title: str, kind_label: str) -> str:
    """The caption from ``matter`` (its court, its name, which the record keeps as the case's caption: the
    parties, and its case number) and the document's title; a field the record lacks is written as a visible
    blank, never guessed."""
    court = " ".join(matter.court.split()).upper()
    number = " ".join(matter.case_number.split())
    return "\n".join([court or f"[COURT: {NOT_IN_RECORD}]", "", " ".join(matter.name.split()),
                      f"Case No. {number or f'[{NOT_IN_RECORD}]'}", "", (title or kind_label).upper()])


def signature_text(matter, attorney_name: str) -> str:
    """The signature block: the attorney who started the job as the user record names them, for the matter's
    client; what the record does not hold (bar number, address) left as blanks to fill."""
    client = " ".join(matter.client.split())
    return "\n".join(["Respectfully submitted,", "", "/s/ ______________________________",
                      attorney_name or "[Attorney name]", "[Bar number, address, telephone, e-mail]",
                      f"Counsel for {client}" if client else f"Counsel for [client: {NOT_IN_RECORD}]"])


def certificate_text(matter) -> str:
    """The certificate of service, with the date and manner of service left as blanks for the attorney."""
    other = " ".join(matter.opposing_party.split())
    served = f"counsel for {other}" if other else "[the parties to be served]"
    return "\n".join(["CERTIFICATE OF SERVICE", "", f"I certify that on [date of service] a true copy of this "
                      f"document was served on {served} by [manner of service].", "",
                      "/s/ ______________________________"])


# A model's section answer, kept to its section.

_CAPTION_LINE = re.compile(
    r"(?i)^\s*(?:in\s+the\s+.*\bcourt\b.*|.*\bcourt\s+(?:of|for)\b.*|(?:civil\s+action|case|cause|docket|index)\s+"
    r"no\b.*|no\.\s*[\w:-]*\d[\w:-]*|(?:plaintiffs?|defendants?|petitioners?|respondents?|movants?)[,.]?|.*,\s*"
    r"(?:plaintiffs?|defendants?|petitioners?|respondents?)[,.]?|v\.?|vs\.?|[^.\n]{1,80}\s+v\.\s+[^.\n]{1,80}|"
    r"[)§]+.*|[-=_*]{3,})\s*$")
_CAPTION_ANCHOR = re.compile(r"(?i)\bcourt\b|\b(?:case|cause|docket|index|civil\s+action)\s+no\b|^\s*no\.\s*\w*\d")
_CLOSING = re.compile(r"(?im)^\s*(?:respectfully\s+submitted|/s/|certificate\s+of\s+service)\b")


def _looks_like_caption(line: str) -> bool:
    return bool(_CAPTION_LINE.match(line) and _CAPTION_ANCHOR.search(line))


def section_body(text: str, heading: str) -> tuple[str, list[str]]:
    """``text`` (a drafter's answer for one section) without a caption, a repeated heading or a closing of its
    own: a leading block of caption lines (one naming a court or a case number among them) is dropped, and
    everything from a "Respectfully submitted", "/s/" or "Certificate of service" line on. Returns the text and
    what was removed (``caption``, ``heading``, ``closing``, ``markup``: fences like the packet's, ``<<<END
    EVIDENCE>>>``, copied from the prompt)."""
    removed = []
    unfenced = _FENCE.sub("", text)
    if unfenced != text:
        removed.append("markup")
        text = unfenced
    lines = text.strip().splitlines()
    block = 0
    while block < len(lines) and block < 15 and (not lines[block].strip() or _CAPTION_LINE.match(lines[block])):
        block += 1
    if any(_CAPTION_ANCHOR.search(line) for line in lines[:block]):
        lines = lines[block:]
        removed.append("caption")
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines and lines[0].strip().strip("#*: ").casefold() == heading.strip().casefold():
        lines.pop(0)
        removed.append("heading")
    body = "\n".join(lines).strip()
    if closing := _CLOSING.search(body):
        body = body[:closing.start()].rstrip()
        removed.append("closing")
    return body, removed


def missing_text(entry: dict) -> str:
    """What a section says when retrieval found nothing for it: what it needed, plainly, and what to do."""
    needs = "; ".join(entry.get("questions") or []) or entry.get("heading", "")
    searched = "; ".join(f"“{q}”" for q in entry.get("queries") or []) or f"“{entry.get('heading', '')}”"
    return (f"[NOT WRITTEN: nothing in the record answered this section's searches ({searched}), so it was not "
            f"drafted rather than invented. It needs: {needs}. Add the evidence or authority that shows it and run "
            "the job again, or write this section yourself.]")


QUERY_MAX_CHARS = 100  # a plan's query (pipeline.stages.specs: "maxLength": 100)


def query_of(request: str) -> str:
    """``request`` as one search query of at most QUERY_MAX_CHARS characters, cut at a word: cut at the
    character, "...owes the unpaid rent" searched for "ren" and lost its key word."""
    request = " ".join(request.split())
    if len(request) <= QUERY_MAX_CHARS:
        return request
    head = request[:QUERY_MAX_CHARS + 1]
    return head.rsplit(" ", 1)[0] if " " in head.strip() else request[:QUERY_MAX_CHARS]


def not_written_text(entry: dict, by: str) -> str:
    """What a section says when the drafter could not write it (every answer unusable) and ``by`` (a user's name)
    went on without it: that it is a gap, what it needed, and that it is the attorney's to write."""
    needs = "; ".join(entry.get("questions") or []) or entry.get("heading", "")
    return (f"[NOT WRITTEN: the drafter's answers for this section could not be used (they repeated themselves), "
            f"and {by} went on without it. It needs: {needs}. Write this section yourself before this document "
            "is filed.]")


def assemble(*, head: str, sections: list[dict], tail: list[str]) -> tuple[str, list[dict], list[int]]:
    """The document: ``head`` (the caption), each drafted section under its heading in the order given
    (``sections``: dicts with ``key``, ``heading`` and ``text``), then the ``tail`` parts (signature block,
    certificate of service). Returns the text, each section's character span (``{"key", "start", "end"}``) and
    the span of the body between the head and the tail (``[start, end]``)."""
    text = head.rstrip() + "\n\n"
    spans, body_start = [], len(text)
    for section in sections:
        start = len(text)
        text += f"{section['heading']}\n\n{section['text'].strip()}\n\n"
        spans.append({"key": section["key"], "start": start, "end": len(text) - 2})
    body_end = len(text) - 2
    text += "\n\n".join(part.strip() for part in tail) + "\n"
    return text, spans, [body_start, body_end]


def record_spans(text: str, body: list[int]) -> list[list[int]]:
    """The spans of ``text`` outside its ``body``: what LawDesk wrote from the matter record, which the verifier
    does not read as a model's assertions (``record_spans`` in a version's provenance)."""
    return [[0, body[0]], [body[1], len(text)]]


def rewrap(*, text: str, body: list[int], revised: str) -> tuple[str, list[int]]:
    """``text`` (an assembled version) with its body span ``body`` replaced by ``revised`` (the reasoner's
    revision of the body, stripped of any caption or closing of its own): the caption, signature block and
    certificate stay LawDesk's. Returns the text and the new body span."""
    start, end = body
    head, tail = text[:start], text[end:]
    revised = revised.strip()
    return head + revised + tail, [start, start + len(revised)]


def split_by_headings(body: str, headings: list[str]) -> list[str] | None:
    """``body`` (a revision of an assembled body) cut at ``headings`` (the drafted sections' headings, in outline
    order), each found at the start of a line in that order (Markdown ``#``/``*`` marks and a trailing colon
    allowed): the text under each, without its heading. None when a heading is missing or out of order, so no text
    is given to a section it may not belong to."""
    lines = body.splitlines(keepends=True)
    starts, at = [], 0
    for heading in headings:
        wanted = " ".join(heading.split()).casefold()
        while at < len(lines) and " ".join(lines[at].strip().strip("#*_: ").split()).casefold() != wanted:
            at += 1
        if at == len(lines):
            return None
        starts.append(at)
        at += 1
    ends = [*starts[1:], len(lines)]
    return ["".join(lines[start + 1:end]).strip() for start, end in zip(starts, ends)]


def body_text(sections: list[dict]) -> tuple[str, list[dict]]:
    """The body of :func:`assemble` for ``sections`` (``key``, ``heading``, ``text``): the text and each section's
    span in it (``{"key", "start", "end"}``, from the body's first character)."""
    text, spans = "", []
    for section in sections:
        start = len(text)
        text += f"{section['heading']}\n\n{section['text'].strip()}\n\n"
        spans.append({"key": section["key"], "start": start, "end": len(text) - 2})
    return text[:-2], spans
