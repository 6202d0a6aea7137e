"""Case, statute and regulation citations in text.

Case citations come from eyecite (Free Law Project), full and short forms, ``Id.`` and ``supra``, with eyecite's
resolution of short forms to the full citation they refer to. Three gaps of eyecite 2.7 are filled here:
- a citation-shaped string with a reporter eyecite does not know (``45 F.9th 12 (5th Cir. 2019)``) yields
  nothing from eyecite; it is read here and reported (no such reporter: likely invented);
- the year in the parenthetical is read here, right after the citation and its pin cite, because eyecite can
  attach the next citation's year to an earlier one;
- statutes and regulations (``18 U.S.C. § 1028A``, ``17 C.F.R. § 240.10b-5``, ``50 U.S.C. 1701``,
  ``15 U.S.C. §§ 78j(b), 78t(a)``) are read here with their full section numbers; eyecite misses or truncates
  these. Other codes eyecite knows (state codes) come from eyecite.
A year outside the dates of the reporter's edition (reporters-db, through eyecite) is reported too.
"""

import re
from dataclasses import dataclass, field

from eyecite import get_citations, resolve_citations
from eyecite.models import (
    FullCaseCitation,
    FullLawCitation,
    IdCitation,
    ShortCaseCitation,
    SupraCitation,
)

from .text import Spans


@dataclass
class CaseMention:
    """A case citation. ``form``: ``full``, ``short``, ``id``, ``supra`` or ``unknown_reporter``. For a short form,
    ``antecedent`` is the index (in the returned list) of the full citation eyecite resolved it to, or None.
    ``problem`` is set when the citation cannot be right whatever the authorities say (an unknown reporter, a
    year the reporter did not cover)."""

    start: int
    end: int
    text: str
    form: str
    volume: str = ""
    reporter: str = ""
    page: str = ""
    pin_cite: str = ""
    year: int | None = None
    plaintiff: str = ""
    defendant: str = ""
    antecedent: int | None = None
    problem: str = ""
    name: str = ""  # the case name as written in the draft ("Calvary Chapel of Bangor v. Mills"), for messages

    @property
    def reporter_cite(self) -> str:
        return f"{self.volume} {self.reporter} {self.page}".strip()


@dataclass
class StatuteMention:
    """One section of a statute or regulation: ``title`` 18, ``code`` ``U.S.C.``, ``section`` ``1028A``."""

    start: int
    end: int
    text: str
    title: str
    code: str
    section: str
    subsections: list[str] = field(default_factory=list)

    @property
    def cite(self) -> str:
        return f"{self.title} {self.code} § {self.section}".strip()


_AFTER = re.compile(
    r"(?:,\s*(?:at\s+)?(?P<pin>\d+(?:\s*[-–]\s*\d+)?(?:\s*(?:,|&)\s*\d+(?:\s*[-–]\s*\d+)?)*)(?:\s*n\.\s*\d+)?)?"
    r"\s*\((?P<court>[^()]{0,60}?)\s*(?P<year>1[6-9]\d\d|20\d\d)\)"
)
_UNKNOWN = re.compile(
    r"\b(?P<volume>\d{1,4})\s+(?P<reporter>[A-Z][A-Za-z]*\.(?:\s?[A-Za-z0-9]+\.?){0,4})\s+(?P<page>\d{1,5})\b"
    r"(?=(?:,\s*(?:at\s+)?\d+(?:\s*[-–]\s*\d+)?)?\s*\([^()]{0,60}?\d{4}\))"
)
_SECTION = r"\d[\w.\-–]*?(?:\([A-Za-z0-9]{1,4}\))*"
_FEDERAL = re.compile(
    r"\b(?P<title>\d{1,3})\s+(?P<code>U\.\s?S\.\s?C\.(?:\s?A\.)?|C\.\s?F\.\s?R\.)\s*"
    r"(?:§§?|[Ss]ec(?:tions?|s?\.)\s?)?\s*"
    rf"(?P<sections>{_SECTION}(?=[\s,;)]|\.(?:\s|$)|$)(?:\s*(?:,|and|&)\s*(?:§\s*)?{_SECTION}(?=[\s,;)]|\.(?:\s|$)|$)(?!\s+[A-Z][A-Za-z]?\.))*)"
)
_ONE_SECTION = re.compile(rf"{_SECTION}(?=[\s,;)]|\.(?:\s|$)|$)")
_NAME_SPAN = 200
# eyecite looks, after every full case citation, through the whole rest of the text for later references to it by
# name, which this module does not use: minutes for a 2 MB draft. A long text is read a stretch at a time, cut
# where a paragraph ends (or at least between words), and the spans are shifted back into the whole text.
_STRETCH = 20_000


def _cut(flat: str, start: int) -> int:
    """Where the stretch that begins at ``start`` ends: after the last blank (a flattened line break) in its
    second half, else after its last space, else ``_STRETCH`` characters on."""
    limit = start + _STRETCH
    if limit >= len(flat):
        return len(flat)
    for gap in ("  ", " "):
        found = flat.rfind(gap, start + _STRETCH // 2, limit)
        if found >= 0:
            return found + len(gap)
    return limit


def eyecite_citations(flat: str) -> list:
    """eyecite's ``get_citations`` of ``flat`` (text with line breaks flattened), spans into ``flat``; none for
    blank text, which eyecite refuses. Short forms resolve over the whole list with ``resolve_citations``, which
    reads the citations, not the text, so reading in stretches loses only a citation cut in two, and stretches
    end between paragraphs where one can."""
    citations: list = []
    start = 0
    while start < len(flat):
        end = _cut(flat, start)
        if flat[start:end].strip():
            for citation in get_citations(flat[start:end]):
                if start:
                    _shift(citation, start)
                citations.append(citation)
        start = end
    return citations


def _shift(citation, offset: int) -> None:
    span_start, span_end = citation.span()
    citation.span_start, citation.span_end = span_start + offset, span_end + offset
    for owner, name in ((citation, "full_span_start"), (citation, "full_span_end"),
                        (citation.metadata, "pin_cite_span_start"), (citation.metadata, "pin_cite_span_end")):
        value = getattr(owner, name, None)
        if value is not None:
            setattr(owner, name, value + offset)


def _year_and_end(flat: str, end: int) -> tuple[int | None, str, int]:
    match = _AFTER.match(flat, end)
    if match is None:
        return None, "", end
    return int(match.group("year")), (match.group("pin") or ""), match.end()


def _edition_problem(citation, year: int | None) -> str:
    if year is None:
        return ""
    editions = [e for e in (getattr(citation, "all_editions", None) or []) if e is not None]
    if not editions and getattr(citation, "edition_guess", None) is not None:
        editions = [citation.edition_guess]
    if not editions:
        return ""
    for edition in editions:
        start = edition.start.year if edition.start else None
        end = edition.end.year if edition.end else None
        if (start is None or start <= year) and (end is None or year <= end):
            return ""
    spans = ", ".join(
        f"{e.short_name} {e.start.year if e.start else '?'}–{e.end.year if e.end else 'today'}" for e in editions
    )
    return f"The reporter {citation.groups.get('reporter')} covers {spans}; a {year} decision cannot be in it."


def _party(text: str | None) -> str:
    text = (text or "").strip()
    # eyecite's case-name guess can swallow the signal or conjunction before the name ("See Doe", "And Doe").
    return re.sub(r"^(?:see(?: also)?|also|and|but|cf\.|accord|in|e\.g\.,?)\s+", "", text, flags=re.IGNORECASE)


def find_case_citations(flat: str, citations: list | None = None) -> list[CaseMention]:
    """Every case citation in ``flat`` (text with line breaks flattened), full ones with their case name, pin cite
    and year, short forms pointing at their full citation. ``citations``: :func:`eyecite_citations` of ``flat``
    when the caller already has it."""
    citations = eyecite_citations(flat) if citations is None else citations
    mentions: list[CaseMention] = []
    index_of: dict[int, int] = {}
    for citation in citations:
        start, end = citation.span()
        if isinstance(citation, FullCaseCitation):
            year, pin, end = _year_and_end(flat, end)
            name_start = start
            if citation.full_span_start is not None and start - citation.full_span_start <= _NAME_SPAN:
                name_start = citation.full_span_start
            mention = CaseMention(
                name_start, end, flat[name_start:end], "full", citation.groups.get("volume", ""),
                citation.groups.get("reporter", ""), citation.groups.get("page", ""),
                pin or (citation.metadata.pin_cite or ""), year, _party(citation.metadata.plaintiff),
                _party(citation.metadata.defendant),
            )
            mention.problem = _edition_problem(citation, year)
            # Messages quote the name as the draft writes it: eyecite's plaintiff and defendant are normalised
            # for matching and drop words ("Calvary Chapel  Bangor" for "Calvary Chapel of Bangor").
            written = " ".join(_party(flat[name_start:start]).split()).rstrip(", ")
            mention.name = written if " v. " in written or " v " in written else ""
        elif isinstance(citation, ShortCaseCitation):
            mention = CaseMention(start, end, flat[start:end], "short", citation.groups.get("volume", ""),
                                  citation.groups.get("reporter", ""), "", citation.metadata.pin_cite or "")
            if citation.full_span_start is not None and start - citation.full_span_start <= 80:
                mention.start = citation.full_span_start
                mention.text = flat[mention.start:end]
        elif isinstance(citation, IdCitation):
            end = max(end, citation.full_span_end or end)
            mention = CaseMention(start, end, flat[start:end], "id", pin_cite=citation.metadata.pin_cite or "")
        elif isinstance(citation, SupraCitation):
            start = citation.full_span_start if citation.full_span_start is not None else start
            end = max(end, citation.full_span_end or end)
            mention = CaseMention(start, end, flat[start:end], "supra", pin_cite=citation.metadata.pin_cite or "")
        else:
            continue
        index_of[id(citation)] = len(mentions)
        mentions.append(mention)

    for resource, members in resolve_citations(citations).items():
        full = index_of.get(id(getattr(resource, "citation", None)))
        for member in members:
            i = index_of.get(id(member))
            if i is not None and mentions[i].form != "full":
                mentions[i].antecedent = full

    known = Spans((m.start, m.end) for m in mentions)
    for match in _UNKNOWN.finditer(flat):
        if known.overlaps(match.start(), match.end()):
            continue
        year, pin, end = _year_and_end(flat, match.end())
        mentions.append(CaseMention(
            match.start(), end, flat[match.start():end], "unknown_reporter", match.group("volume"),
            match.group("reporter"), match.group("page"), pin, year,
            problem=f"No reporter abbreviated “{match.group('reporter')}” exists (reporters-db); "
                    "this citation is likely invented.",
        ))
    mentions.sort(key=lambda m: m.start)
    return mentions


def find_statutes(flat: str, citations: list | None = None) -> list[StatuteMention]:
    """Every section of a federal statute or regulation cited in ``flat``, one mention per section, with its
    subsections; and state code sections that eyecite recognises (``citations`` as for
    :func:`find_case_citations`)."""
    found: list[StatuteMention] = []
    taken = Spans()
    for match in _FEDERAL.finditer(flat):
        code = re.sub(r"\s", "", match.group("code"))
        base = match.start("sections")
        for i, section in enumerate(_ONE_SECTION.finditer(match.group("sections"))):
            raw = section.group(0).rstrip(".-–")
            number = re.sub(r"\(.*", "", raw)
            subsections = re.findall(r"\(([A-Za-z0-9]{1,4})\)", raw)
            start = match.start() if i == 0 else base + section.start()
            end = base + section.start() + len(raw)
            found.append(StatuteMention(start, end, flat[start:end], match.group("title"), code, number, subsections))
            taken.add(start, end)
    for citation in eyecite_citations(flat) if citations is None else citations:
        if not isinstance(citation, FullLawCitation):
            continue
        start, end = citation.span()
        if taken.overlaps(start, end):
            continue
        groups = citation.groups
        found.append(StatuteMention(start, end, flat[start:end], groups.get("chapter", "") or groups.get("title", ""),
                                    groups.get("reporter", ""), groups.get("section", "")))
        taken.add(start, end)
    found.sort(key=lambda s: s.start)
    return found
