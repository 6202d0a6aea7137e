"""Case, statute and regulation citations in text.

Case citations come from eyecite (Free Law Project), full and short forms, ``Id.`` and ``supra``, with eyecite's
resolution of short forms to the full citation they refer to. Three gaps of eyecite 2.7 are filled here:
- a citation-shaped string with a reporter eyecite does not know (``45 F.9th 12 (5th Cir. 2019)``) yields
  nothing from eyecite; it is read here and reported (no such reporter: likely invented), with a parenthetical
  year or right after a case name; written as a word (``Smith v. Jones, 346 Fictitious 12 (2d Cir. 2019)``), after
  a case name or with a court in its parenthetical, it is ``unreadable`` (no reader knows the form);
- the year in the parenthetical is read here, right after the citation and its pin cite, because eyecite can
  attach the next citation's year to an earlier one;
- statutes, regulations and rules are read in :mod:`matters.drafts.verifier.statutes`.
A year outside the dates of the reporter's edition (reporters-db, through eyecite) is reported too.
"""

import bisect
import re
from dataclasses import dataclass

from eyecite import get_citations, resolve_citations
from eyecite.models import (
    FullCaseCitation,
    FullJournalCitation,
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
    year the reporter did not cover). ``in_parenthetical``: it stands inside a ``(citing ...)`` or ``(quoting
    ...)`` parenthetical, so ``Id.`` does not refer to it. A public-domain citation (``2022-NCSC-1``) has the
    year as ``volume``, the court code as ``reporter`` and the decision number as ``page``."""

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
    in_parenthetical: bool = False
    name: str = ""  # the case name as written in the draft ("Calvary Chapel of Bangor v. Mills"), for messages
    source: int | None = None  # index of eyecite's citation it was read from, in the list it was read from
    unreadable: bool = False  # a citation-shaped string no reader knows (346 Fictitious 12 (2d Cir. 2019))

    @property
    def reporter_cite(self) -> str:
        return f"{self.volume} {self.reporter} {self.page}".strip()


_PIN = r"(?:slip\s+op\.\s+at\s+)?\*?\d+(?:\s*[-–—]\s*\*?\d+)?"
_AFTER = re.compile(
    rf"(?:,\s*(?:at\s+)?(?P<pin>{_PIN}(?:\s*(?:,|&)\s*{_PIN})*|_{{2,}})(?:\s*n\.\s*\d+)?)?"
    r"\s*\((?P<court>[^()]{0,60}?)\s*(?P<year>1[6-9]\d\d|20\d\d)\)"
)
# Volume, reporter, page: a citation of a reporter eyecite does not know when a parenthetical with a year follows
# (``court`` is then set) or a case name stands right before it ("Smith v. Jones, 346 Fict. Rep. 12.").
_PARENTHETICAL_AHEAD = r"(?:(?=(?:,\s*(?:at\s+)?\d+(?:\s*[-–—]\s*\d+)?)?\s*\((?P<court>[^()]{0,60}?)\d{4}\)))?"
_UNKNOWN = re.compile(
    r"\b(?P<volume>\d{1,4})\s+(?P<reporter>[A-Z][A-Za-z]*\.(?:\s?[A-Za-z0-9]+\.?){0,4})\s+(?P<page>\d{1,5})\b"
    + _PARENTHETICAL_AHEAD
)
# The same shape with a reporter written as whole words, no period (346 Fictitious 12): a citation only where a case
# name stands before it or its parenthetical names a court, since "the 2019 Form 1040 (2020)" has the shape too.
_UNKNOWN_WORDS = re.compile(
    r"\b(?P<volume>\d{1,4})\s+(?P<reporter>[A-Z][A-Za-z]+(?:\s+[A-Z][A-Za-z0-9]*){0,3})\s+(?P<page>\d{1,5})\b"
    + _PARENTHETICAL_AHEAD
)
_COURT_WORDS = re.compile(r"\b(?:Cir|Ct|App|Bankr|Dist|Sup|Cl|D)\.|\b(?:[SNEWCM]\.)?D\.\s?[A-Z]")
_MONTH_WORDS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
                "dec"}
# A public-domain (vendor-neutral) citation: year, court code, decision number, paragraph pins (2022-NCSC-1, ¶ 52).
_NEUTRAL = re.compile(
    r"\b(?P<year>(?:19|20)\d\d)-(?P<court>[A-Z][A-Za-z]{1,9})-(?P<number>\d{1,6})\b"
    r"(?:,\s*(?P<pin>¶¶?\s*\d+(?:\s*[-–—]\s*\d+)?))?"
)
# A citation to a reporter volume whose page is not yet known (569 U.S. ___), pinned to the slip opinion's pages.
_BLANK_PAGE = re.compile(
    r"\b(?P<volume>\d{1,4})\s+(?P<reporter>[A-Z][A-Za-z0-9.]*(?:\s?[A-Za-z0-9]+\.){0,3})\s+_{2,}"
    r"(?:,\s*(?:_{2,}|(?P<pin>slip\s+op\.\s+at\s+\d+(?:\s*[-–—]\s*\d+)?)))?"
    r"\s*\([^()]{0,60}?(?P<year>1[6-9]\d\d|20\d\d)\)"
)
_CAPTION_BEFORE = re.compile(
    r"([A-Z][\w.'’&]*(?:,?\s+[\w.'’&]+){0,6}"
    r"\s+v\.\s+[A-Z][\w.'’&]*(?:,?\s+(?:[A-Z][\w.'’&]*|ex\s+rel\.|of|the|for|and|&)){0,6}),\s*$"
)
# Where a sentence ends inside what eyecite took for a case name: after a word of three or more lower-case
# letters or a digit (not after "Inc." or "U.S.", which a name holds).
_SENTENCE_END = re.compile(r"([A-Za-z]*[a-z]{3,}|\d)[.;:!?]\s+(?=[A-Z])")
# Abbreviations a case name holds before a capital ("State ex rel. Perdue", "Techs. Inc.", "Bros. Co.").
NAME_ABBREVIATIONS = {"rel", "inc", "techs", "tech", "bros", "corp", "assn", "ass'n", "dept", "dist", "cnty", "twp",
                      "mfg", "ins", "mut", "nat", "natl", "int", "intl", "bhd", "univ", "sch", "hosp", "auth",
                      "comm'n", "comm", "sys", "servs", "serv", "prods", "indus", "elec", "equip", "fin", "gen",
                      "gov't", "grp", "hldgs", "invs", "mgmt", "mktg", "pharms", "ret", "sec", "trans", "util"}
# A parenthetical whose citations are the cited authority's, not the draft's: "Id." never refers to them.
_CITING = re.compile(r"\(\s*(?:citing|quoting|cited\s+in|quoted\s+in|(?:internal\s+)?(?:quotation\s+marks\s+and\s+)?"
                     r"citations?\s+omitted[;,]?\s*(?:citing|quoting))\b", re.IGNORECASE)
_LOOK_BACK = 600
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


def _open_parenthesis(flat: str, start: int) -> int | None:
    """Where the nearest parenthesis left open before ``start`` opens (looking back ``_LOOK_BACK`` characters)."""
    depth = 0
    for k in range(start - 1, max(-1, start - _LOOK_BACK), -1):
        char = flat[k]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                return k
            depth -= 1
    return None


def in_citing_parenthetical(flat: str, start: int, ends: list[int] = ()) -> bool:
    """Whether ``start`` lies inside a parenthetical whose citations are the cited authority's: one opening with
    ``citing`` or ``quoting`` (also after "internal quotation marks omitted;"), or any parenthetical opening right
    after a citation (``ends``: where the citations before ``start`` end), as an explanatory parenthetical does
    (``(relying on ...)``, ``(first quoting ...; then quoting ...)``, ``(internal quotation marks omitted; quoting
    ...)``; Bluebook rule 1.5). A parenthetical of the text's own (``The statute (see ...) applies``) is
    neither."""
    k = _open_parenthesis(flat, start)
    if k is None:
        return False
    if _CITING.match(flat, k):
        return True
    # Right after a citation: only white space and whole parentheticals ("(2012) (cleaned up) ") between.
    i = bisect.bisect_right(ends, k) - 1
    return i >= 0 and _ONLY_PARENTHETICALS.fullmatch(flat, ends[i], k) is not None


_ONLY_PARENTHETICALS = re.compile(r"[\s,)]*(?:\([^()]*\)[\s,)]*)*")


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
    mentions = read_case_citations(flat, citations)
    resolve_case_citations(mentions, citations)
    return mentions


def _after_stops(flat: str, name_start: int, cite_start: int, stops: Spans | None) -> int:
    """Where a case name reaching back from ``cite_start`` to ``name_start`` begins once it gives up every other
    citation in it (``stops``: the spans of the statutes, rules, record and transcript cites read from the same
    text): right after the last one that ends inside it, past the commas, semicolons and signals between."""
    if stops is None:
        return name_start
    inside = stops.ends_within(name_start, cite_start)
    if inside is None:
        return name_start
    rest = _LEADING_SEPARATORS.match(flat, inside, cite_start)
    return rest.end() if rest else inside


# What stands between a citation and the next one's case name: punctuation and signals ("; see also", ", and").
_LEADING_SEPARATORS = re.compile(
    r"[\s,;.:]*(?:(?:see(?:\s+also)?|also|and|or|but|cf\.|accord|compare|with|contra|e\.g\.,?)\b[\s,;.:]*)*",
    re.IGNORECASE)
_PARENTHETICAL_SIGNAL = re.compile(r"\s*(?:quoting|citing|cited\s+in|quoted\s+in)\s+", re.IGNORECASE)
_LOWER_SIGNALS = re.compile(r"(?:(?:see(?:\s+also)?|also|and|or|but|cf\.|accord|compare|with|contra|e\.g\.,?)\s+)+")
# A short form's name is a party's name ("Tarrant", "Calvary Chapel"): a semicolon, a section sign, a closing
# parenthesis or a number in what eyecite took for it belongs to a citation before it.
_NOT_IN_SHORT_NAME = re.compile(r".*(?:[;§)]|\S*\d\S*)", re.DOTALL)


def _short_name_start(flat: str, name_start: int, cite_start: int, stops: Spans | None) -> int:
    """Where a short form's case name begins (``Tarrant, 569 U.S. at 622``): eyecite's guess, ``name_start``, cut
    after any other citation in it, the last sentence end and the last character no party's name holds;
    ``cite_start`` (no name) when nothing is left."""
    name_start = _after_stops(flat, name_start, cite_start, stops)
    ends = [m for m in _SENTENCE_END.finditer(flat, name_start, cite_start)
            if m.group(1).lower() not in NAME_ABBREVIATIONS]
    name_start = ends[-1].end() if ends else name_start  # a sentence end, as a full citation's name stops at
    cut = _NOT_IN_SHORT_NAME.match(flat, name_start, cite_start)
    if cut:
        rest = _LEADING_SEPARATORS.match(flat, cut.end(), cite_start)
        name_start = rest.end() if rest else cut.end()
    return name_start if flat[name_start:cite_start].strip(" ,") else cite_start


def read_case_citations(flat: str, citations: list, stops: Spans | None = None) -> list[CaseMention]:
    """The case citations of ``flat`` in order of position, read but not resolved: each mention read from one of
    eyecite's ``citations`` (:func:`eyecite_citations` of ``flat``) names it by index in ``source``, for
    :func:`resolve_case_citations`. Reads nothing before ``flat``'s start, so a paragraph reads the same wherever
    it stands. ``stops``: the spans of the other citations read from ``flat`` (statutes, rules, record and
    transcript cites); a case name never reaches back over one (eyecite's guess can: ``See Fed. R. Civ. P.
    56(a), Tarrant, 569 U.S. at 622`` gave the rule to the short form, and the rule went unchecked)."""
    mentions: list[CaseMention] = []
    for index, citation in enumerate(citations):
        start, end = citation.span()
        if isinstance(citation, FullCaseCitation):
            year, pin, end = _year_and_end(flat, end)
            name_start = start
            plaintiff, defendant = _party(citation.metadata.plaintiff), _party(citation.metadata.defendant)
            if citation.full_span_start is not None and start - citation.full_span_start <= _NAME_SPAN:
                name_start = citation.full_span_start
                # eyecite's case name can reach back over the sentence before and a citation it does not read
                # ("Cooper, 2022-NCSC-1, ¶ 29. Also 2019 WI 12"): the name starts after the last sentence end,
                # and after any citation another reader read.
                ends = [m for m in _SENTENCE_END.finditer(flat, name_start, start)
                        if m.group(1).lower() not in NAME_ABBREVIATIONS]
                cut = max(ends[-1].end() if ends else name_start, _after_stops(flat, name_start, start, stops))
                # A parenthesis eyecite's name reaches back over opens before the name ("(Quoting Hest Techs.,
                # Inc. v. State"); a lower-case signal or conjunction it took in ("and Smith v. Jones") is no
                # party's word.
                opened = flat.rfind("(", cut, start)
                if opened >= 0 and ")" not in flat[opened:start]:
                    cut = opened + 1
                    participle = _PARENTHETICAL_SIGNAL.match(flat, cut, start)
                    cut = participle.end() if participle else cut
                signal = _LOWER_SIGNALS.match(flat, cut, start)
                cut = signal.end() if signal else cut
                if cut != name_start:
                    name_start = cut
                    parties = re.split(r"\s+v\.?\s+", flat[name_start:start].strip().rstrip(","), maxsplit=1)
                    plaintiff, defendant = (_party(parties[0]), parties[1]) if len(parties) == 2 else ("", "")
            mention = CaseMention(
                name_start, end, flat[name_start:end], "full", citation.groups.get("volume") or "",
                citation.groups.get("reporter") or "", citation.groups.get("page") or "",
                pin or (citation.metadata.pin_cite or ""), year, plaintiff, defendant,
            )
            mention.problem = _edition_problem(citation, year)
            # Messages quote the name as the draft writes it: eyecite's plaintiff and defendant are normalised
            # for matching and drop words ("Calvary Chapel  Bangor" for "Calvary Chapel of Bangor").
            written = " ".join(_party(flat[name_start:start]).split()).rstrip(", ")
            mention.name = written if " v. " in written or " v " in written else ""
        elif isinstance(citation, FullJournalCitation):
            # A law review article: checked like an opinion (an authority that is the article grounds it).
            year, pin, end = _year_and_end(flat, end)
            mention = CaseMention(start, end, flat[start:end], "full", citation.groups.get("volume") or "",
                                  citation.groups.get("reporter") or "", citation.groups.get("page") or "",
                                  pin or (citation.metadata.pin_cite or ""), year)
        elif isinstance(citation, ShortCaseCitation):
            mention = CaseMention(start, end, flat[start:end], "short", citation.groups.get("volume") or "",
                                  citation.groups.get("reporter") or "", "", citation.metadata.pin_cite or "")
            if citation.full_span_start is not None and start - citation.full_span_start <= 80:
                mention.start = _short_name_start(flat, citation.full_span_start, start, stops)
                mention.text = flat[mention.start:end]
        elif isinstance(citation, IdCitation):
            end = max(end, citation.full_span_end or end)
            mention = CaseMention(start, end, flat[start:end], "id", pin_cite=citation.metadata.pin_cite or "")
        elif isinstance(citation, SupraCitation):
            if citation.full_span_start is not None:
                start = _short_name_start(flat, citation.full_span_start, start, stops)
            end = max(end, citation.full_span_end or end)
            mention = CaseMention(start, end, flat[start:end], "supra", pin_cite=citation.metadata.pin_cite or "")
        else:
            continue
        mention.source = index
        mentions.append(mention)

    # What any reader read is not unknown: eyecite's citations of every kind (a statute it reads as one), and the
    # statutes, rules, record and transcript cites of ``stops`` ("3 Tr. 45 (Mar. 3, 2019)").
    known = Spans([(m.start, m.end) for m in mentions] + [c.span() for c in citations]
                  + (list(stops) if stops is not None else []))
    for match in _UNKNOWN.finditer(flat):
        if (known.overlaps(match.start(), match.end())
                or match.group("reporter").split()[0].rstrip(".").lower() in _MONTH_WORDS):
            continue  # "12 Mar. 2021" is a date
        start = match.start()
        if match.group("court") is None:
            start, parties = _caption_before(flat, match.start(), stops)
            if not parties[0]:
                continue
        year, pin, end = _year_and_end(flat, match.end())
        mentions.append(CaseMention(
            start, end, flat[start:end], "unknown_reporter", match.group("volume"),
            match.group("reporter"), match.group("page"), pin, year,
            problem=f"No reporter abbreviated “{match.group('reporter')}” exists (reporters-db); "
                    "this citation is likely invented.",
        ))
    for match in _UNKNOWN_WORDS.finditer(flat):
        reporter = match.group("reporter")
        if known.overlaps(match.start(), match.end()) or reporter.split()[0].lower() in _MONTH_WORDS:
            continue
        start, parties = _caption_before(flat, match.start(), stops)
        if not parties[0] and not _COURT_WORDS.search(match.group("court") or ""):
            continue
        year, pin, end = _year_and_end(flat, match.end())
        mentions.append(CaseMention(
            start, end, flat[start:end], "unknown_reporter", match.group("volume"), reporter, match.group("page"),
            pin, year, _party(parties[0]), parties[1].strip(), unreadable=True,
            problem=f"“{flat[match.start():end]}” is shaped like a case citation (volume, reporter, "
                    f"page), but no reporter LawDesk knows (reporters-db) is written “{reporter}”, and no "
                    "other reader reads it: it may be invented. Write a citation LawDesk can check, or waive this "
                    "finding with a reason."))
    for match in _NEUTRAL.finditer(flat):
        if known.overlaps(match.start(), match.end()):
            continue
        start, parties = _caption_before(flat, match.start(), stops)
        mentions.append(CaseMention(
            start, match.end(), flat[start:match.end()], "full", match.group("year"), match.group("court"),
            match.group("number"), match.group("pin") or "", int(match.group("year")), _party(parties[0]),
            parties[1].strip()))
    for match in _BLANK_PAGE.finditer(flat):
        if known.overlaps(match.start(), match.end()):
            continue
        start, parties = _caption_before(flat, match.start(), stops)
        mentions.append(CaseMention(
            start, match.end(), flat[start:match.end()], "full", match.group("volume"), match.group("reporter"), "",
            match.group("pin") or "", int(match.group("year")), _party(parties[0]), parties[1].strip()))
    mentions.sort(key=lambda m: m.start)
    ends: list[int] = []
    for mention in mentions:
        mention.in_parenthetical = in_citing_parenthetical(flat, mention.start, ends)
        bisect.insort(ends, mention.end)
    return mentions


def resolve_case_citations(mentions: list[CaseMention], citations: list) -> None:
    """Point every short form of ``mentions`` (in order of position) at its full citation: ``antecedent`` is an
    index into ``mentions``. Short forms and ``supra`` resolve through eyecite's ``resolve_citations`` over the
    citations the mentions were read from (``source`` indexes ``citations``), so a citation dropped from
    ``mentions`` (one inside a quotation) is not a candidate; ``Id.`` as :func:`_resolve_ids` says."""
    kept = [citations[m.source] for m in mentions if m.source is not None]
    position = {id(citations[m.source]): i for i, m in enumerate(mentions) if m.source is not None}
    for resource, members in resolve_citations(kept).items():
        full = position.get(id(getattr(resource, "citation", None)))
        for member in members:
            i = position.get(id(member))
            if i is not None and mentions[i].form != "full":
                mentions[i].antecedent = full
    # eyecite resolves "supra" only to citations it read itself; a public-domain citation (2022-NCSC-1) or one to
    # a volume not yet paged is read here, so "Gift Surplus, supra" is matched to it by party name as eyecite
    # matches its own: the latest earlier full citation naming a party with that word.
    for i, mention in enumerate(mentions):
        if mention.form != "supra" or mention.antecedent is not None or mention.source is None:
            continue
        guess = (citations[mention.source].metadata.antecedent_guess or "").strip().lower()
        if not guess:
            continue
        word = re.compile(rf"\b{re.escape(guess)}\b", re.IGNORECASE)
        mention.antecedent = next((j for j in range(i - 1, -1, -1) if mentions[j].form == "full" and (
            word.search(mentions[j].plaintiff) or word.search(mentions[j].defendant))), None)
    _resolve_ids(mentions)


def _caption_before(flat: str, start: int, stops: Spans | None = None) -> tuple[int, list[str]]:
    """Where the case name written just before ``start`` begins, and its two parties (``["", ""]`` when none).
    The name never reaches back over one of ``stops`` (another citation: see :func:`read_case_citations`)."""
    low = max(0, start - 120)
    low = max(low, _after_stops(flat, low, start, stops))
    name = _CAPTION_BEFORE.search(flat[low:start])
    if not name:
        return start, ["", ""]
    # The window can reach back past the end of the sentence before ("Appeal. State v. Doe").
    cut = list(re.finditer(r"(?:\b[a-z]{2,}|[a-z]{3,}|\d)[.;:!?]\s+", name.group(1).split(" v. ", 1)[0]))
    caption = name.group(1)[cut[-1].end():] if cut else name.group(1)
    return start - len(name.group(0)) + (len(name.group(1)) - len(caption)), caption.split(" v. ", 1)


def _resolve_ids(mentions: list[CaseMention]) -> None:
    """Point every ``Id.`` at the last authority cited before it, passing over citations inside ``(citing ...)``
    and ``(quoting ...)`` parentheticals (eyecite resolves it to the last citation of any kind, or to none)."""
    last: int | None = None
    for i, mention in enumerate(mentions):
        if mention.form == "statute_id":
            continue  # "Id. § 12": the statute's short form, not a case's
        if mention.form == "id":
            mention.antecedent = last
            continue
        if mention.in_parenthetical:
            continue
        last = i if mention.form in ("full", "unknown_reporter") else mention.antecedent
