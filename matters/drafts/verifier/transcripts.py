"""Transcript record cites: ``Roe Dep. 45:3-12``, ``Tr. 112:4-9``, ``Hr'g Tr. 7:1``, ``Roe Dep. 45:20-46:4``.

A transcript cite names a transcript by the short form a brief uses for it (Bluebook B17.1.1 / rule 10.8.3 and
local practice: ``<Deponent> Dep.``, ``Tr.``, ``Hr'g Tr.``), then page:line. Which exhibit is "Roe Dep." is set on
the exhibit (``Exhibit.transcript_cite``, prefilled from its caption when it is read as a transcript, editable and
audited). The cite must name a page of that transcript (its own printed page number, see
:func:`matters.exhibits.reading.transcript_page_number`) and lines 1-25 of it; the dates, amounts and quotations it
supports must be on those lines, not only somewhere on the page. Found as ``exhibit_cite`` findings.
"""

import re
from dataclasses import dataclass

from matters.exhibits.reading import TRANSCRIPT_LINES, transcript_lines, transcript_page_number
from matters.models import Exhibit, Matter, Page

from .dates import find_dates
from .money import find_amounts
from .quotes import find_quotations, prepare
from .text import match_words

_SIGNAL_WORDS = {"see", "also", "cf.", "e.g.,", "e.g.", "accord", "compare", "but", "contra", "and", "with",
                 "generally", "citing", "quoting"}
TRANSCRIPT_CITE = re.compile(
    r"(?P<name>(?:[A-Z][\w'’.\-]*\s+){0,3}?(?:Dep\.|Depo\.|Hr[’']g\s+Tr\.|Tr\.))\s*(?:at\s+)?"
    r"(?P<page>\d{1,5}):(?P<line>\d{1,2})"
    r"(?:\s*[-–—]\s*(?:(?P<page2>\d{1,5}):)?(?P<line2>\d{1,2}))?(?!\d)"
)


@dataclass(frozen=True)
class TranscriptMention:
    """A transcript cite: ``name`` as written (``Roe Dep.``), from ``page``:``line`` to ``last_page``:``last_line``."""

    start: int
    end: int
    text: str
    name: str
    page: int
    line: int
    last_page: int
    last_line: int

    @property
    def key(self) -> str:
        return cite_key(self.name)

    @property
    def where(self) -> str:
        if (self.page, self.line) == (self.last_page, self.last_line):
            return f"{self.page}:{self.line}"
        if self.page == self.last_page:
            return f"{self.page}:{self.line}–{self.last_line}"
        return f"{self.page}:{self.line}–{self.last_page}:{self.last_line}"


def cite_key(name: str) -> str:
    """``name`` compared as a transcript's short form: case, apostrophe style and spacing do not matter."""
    return " ".join(name.replace("’", "'").lower().split())


def find_transcript_cites(text: str) -> list[TranscriptMention]:
    """Every transcript cite in ``text`` (signals before the name, ``See Roe Dep.``, are not part of it)."""
    found = []
    if ":" not in text:
        return found  # every cite is page:line
    for match in TRANSCRIPT_CITE.finditer(text):
        words = match.group("name").split()
        while len(words) > 1 and words[0].lower() in _SIGNAL_WORDS:
            words.pop(0)
        name = " ".join(words)
        start = match.start("name") + match.group("name").index(words[0])
        page, line = int(match.group("page")), int(match.group("line"))
        last_page = int(match.group("page2")) if match.group("page2") else page
        last_line = int(match.group("line2")) if match.group("line2") else line
        found.append(TranscriptMention(start, match.end(), text[start:match.end()], name, page, line, last_page,
                                       last_line))
    return found


def suggest_transcript_cite(first_page_text: str) -> str:
    """The short form a brief would use for a transcript whose first page reads ``first_page_text``: ``Roe Dep.``
    for "DEPOSITION OF JANE ROE", ``Hr'g Tr.`` for a hearing, ``Trial Tr.`` for a trial, else ``Tr.``."""
    head = " ".join(first_page_text.split())[:3000]
    # The deponent's name as a caption prints it: in capitals (JANE ROE), or in title case before a word of the
    # caption's next line (Taken, Volume, Date ...).
    deponent = re.search(r"(?i:deposition\s+of)\s+((?:[A-Z][A-Z.'’\-]+\s*){1,4})(?![a-z])", head)
    if deponent is None:
        deponent = re.search(r"(?i:deposition\s+of)\s+((?:(?!(?:Taken|Volume|Vol|Date|Held|Pages|On|At|Conducted|"
                             r"Before|Reported)\b)[A-Z][A-Za-z.'’\-]+\s*){1,4})", head)
    if deponent:
        names = [w.strip(",.") for w in deponent.group(1).split()
                 if w.upper().strip(",.") not in {"MR", "MS", "MRS", "DR", "JR", "SR", "II", "III", "ESQ"}]
        names = [w for w in names if len(w) > 1]
        if names:
            last = names[-1]
            return f"{last[:1].upper()}{last[1:].lower()} Dep."
    if re.search(r"\bHEARING\b", head, re.IGNORECASE):
        return "Hr'g Tr."
    if re.search(r"\bTRIAL\b", head, re.IGNORECASE):
        return "Trial Tr."
    return "Tr."


@dataclass
class TranscriptCheck:
    """The outcome of one transcript cite: ``status``/``message`` of its finding, ``page_ids`` it names, and the
    text of the cited lines (None when the page's lines cannot be told apart and the whole page was read)."""

    mention: TranscriptMention
    status: str
    message: str
    page_ids: list[int]
    lines_text: str | None = None


def check_transcript_cite(mention: TranscriptMention, matter: Matter, evidence_ids: set[int],
                          cache: dict) -> TranscriptCheck:
    """Judge ``mention`` against ``matter``'s transcripts. ``evidence_ids``: the exhibits that are evidence;
    ``cache``: a dict kept for the whole verification (one query per transcript, not per cite)."""
    if "transcripts" not in cache:
        cache["transcripts"] = {cite_key(t): pk for pk, t in Exhibit.objects.filter(matter=matter).exclude(
            transcript_cite="").values_list("pk", "transcript_cite")}
    words = mention.key.split()
    # "Jane Roe Dep." cites the transcript set as "Roe Dep.": the longest name set on an exhibit that ends the cite.
    exhibit_id = next((cache["transcripts"][" ".join(words[i:])] for i in range(len(words))
                       if " ".join(words[i:]) in cache["transcripts"]), None)
    if exhibit_id is None:
        return TranscriptCheck(mention, "ungrounded",
                               f"No exhibit of this matter is the transcript “{mention.name}”: set its transcript "
                               "name on the exhibit's page (the deposition or hearing transcript), or fix the cite.",
                               [])
    if exhibit_id not in evidence_ids:
        return TranscriptCheck(mention, "ungrounded",
                               f"The transcript “{mention.name}” is not evidence (not ready, an authority, or "
                               "LawDesk's own output); it cannot support a fact.", [])
    key = ("pages", exhibit_id)
    if key not in cache:
        pages = list(Page.objects.filter(exhibit_id=exhibit_id).order_by("number").values_list("id", "number", "text"))
        numbered = {}
        for page_id, number, text in pages:
            numbered.setdefault(transcript_page_number(text) or number, (page_id, text))
        cache[key] = numbered
    numbered = cache[key]
    if mention.last_page < mention.page or (mention.last_page == mention.page and mention.last_line < mention.line):
        return TranscriptCheck(mention, "ungrounded", f"{mention.text} ends before it starts.", [])
    if max(mention.line, mention.last_line) > TRANSCRIPT_LINES or min(mention.line, mention.last_line) < 1:
        return TranscriptCheck(mention, "ungrounded",
                               f"{mention.text}: a transcript page has lines 1–{TRANSCRIPT_LINES}.", [])
    wanted = range(mention.page, mention.last_page + 1)
    missing = [n for n in wanted if n not in numbered]
    if missing:
        span = f"{min(numbered)}–{max(numbered)}" if numbered else "none"
        return TranscriptCheck(mention, "ungrounded",
                               f"{mention.name} has no page {missing[0]} (its pages run {span}).", [])
    page_ids = [numbered[n][0] for n in wanted]
    parts, readable = [], True
    for n in wanted:
        lines = transcript_lines(numbered[n][1])
        if not lines:
            readable = False
            break
        first = mention.line if n == mention.page else 1
        last = mention.last_line if n == mention.last_page else TRANSCRIPT_LINES
        parts += [lines[k] for k in range(first, last + 1) if k in lines]
    if not readable:
        return TranscriptCheck(mention, "grounded",
                               f"{mention.name} at {mention.where}; the lines of this page could not be told apart "
                               "(its margin numbers were read apart from its text), so the whole page was read.",
                               page_ids)
    return TranscriptCheck(mention, "grounded", f"{mention.name} at {mention.where}.", page_ids, " ".join(parts))


def _on_lines(finding, lines_text: str, matter: Matter) -> bool:
    if finding.kind == "date":
        readings = set(finding.detail.get("readings", []))
        return any(readings & set(d.readings) for d in find_dates(lines_text, matter.date_order))
    if finding.kind == "amount":
        return any(a.key == finding.detail.get("value") for a in find_amounts(lines_text, matter.number_format))
    quotes = find_quotations(finding.text)
    search = prepare(quotes[0].inner) if quotes else None
    return bool(search and search.segments) and search.find(match_words(lines_text)) is not None


def narrow_to_lines(findings: list, checks: list[TranscriptCheck], supported: dict[int, list[int]],
                    matter: Matter) -> None:
    """A fact supported by a transcript cite must be on the cited lines: each grounded date, amount or quotation
    finding whose sentence a cite of ``checks`` supports (``supported``: index in ``checks`` -> indexes of those
    findings in ``findings``) and that is not on its lines becomes ``ungrounded``, saying so."""
    for index, check in enumerate(checks):
        if check.lines_text is None:
            continue
        for position in supported.get(index, []):
            finding = findings[position]
            if finding.status != "grounded" or _on_lines(finding, check.lines_text, matter):
                continue
            finding.status = "ungrounded"
            finding.message = (f"It is on the transcript page cited but not at lines {check.mention.where} of "
                               f"{check.mention.name}; cite the lines it is on.")


def supported_facts(findings: list, checks: list[TranscriptCheck], sentence_of, merged: set[int]) -> dict:
    """For each of ``checks`` (by index), the indexes in ``findings`` of the dates, amounts and quotations it
    supports: those of its own sentence, and of the sentence before when its own is a citation sentence
    (``merged``: indexes of such sentences); ``sentence_of(offset)`` gives a sentence's index."""
    facts = [(i, sentence_of(f.start)) for i, f in enumerate(findings) if f.kind in ("date", "amount", "quotation")]
    supported: dict[int, list[int]] = {}
    for index, check in enumerate(checks):
        own = sentence_of(check.mention.start)
        targets = {own, own - 1} if own in merged else {own}
        supported[index] = [i for i, sentence in facts if sentence in targets]
    return supported
