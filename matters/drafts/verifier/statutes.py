"""Statutes, regulations and court rules in text, federal and state, each with its full section and subdivisions.

Read in this order, a later reading never taking text an earlier one took:

0. constitutions, federal and state, as The Bluebook rule 11 cites them: ``U.S. Const. art. III, § 2``, ``U.S.
   Const. art. I, § 8, cl. 3``, ``U.S. Const. amend. XIV, § 1``, ``U.S. Const. pmbl.``, ``Cal. Const. art. I, §
   7``, ``N.Y. Const. art. I, § 12``, ``Ohio Const. art. I, § 16`` (form ``constitution``: ``section`` the article
   or amendment, ``clause`` the section and clause within it);
1. federal codes: ``18 U.S.C. § 1028A``, ``50 U.S.C. 1701``, ``15 U.S.C. §§ 78j(b), 78t(a)``, ``17 C.F.R. §
   240.10b-5`` and ``17 CFR § 240.10b-5`` (eyecite truncates ``240.10b-5`` to ``240``);
2. eyecite's reading of reporters-db's table of state codes (``Cal. Civ. Proc. Code § 340``, ``Tex. Civ. Prac. &
   Rem. Code Ann. § 16.003``, ``Fla. Stat. § 95.11(3)``), its section extended by the subdivisions eyecite leaves
   off (``(3)``);
3. the same table read more leniently where its patterns are strict: a code named without ``Ann.`` (``La. Civ.
   Code art. 3492`` for the table's ``La. Civ. Code Ann. art``), ``art.`` with its period, a chapter or section
   with letters (``Mass. Gen. Laws ch. 93A, § 2``, ``N.J. Stat. Ann. § 2A:14-1``), ``5/13-202`` with no spaces
   around the slash;
4. our own patterns for what the table lacks: ``735 ILCS 5/2-101``, ``N.Y. C.P.L.R. 213(2)`` / ``CPLR 213``, the
   Federal Rules (``Fed. R. Civ. P. 12(b)(6)``, ``Fed. R. Evid. 801(d)(2)(D)``, ``Fed. R. App. P. 4(a)(1)(A)``,
   ``Fed. R. Crim. P.``, ``Fed. R. Bankr. P.``), ``Sup. Ct. R. 10`` and local rules (``N.D. Ill. L.R. 7.1``,
   ``Local Rule 56.1``, ``S.D.N.Y. Local Civ. R. 6.3``);
5. a section sign left over (``§ 1028A(c)`` after a full citation) is a short form of the last code cited; one
   with no code cited before it (or only a court rule) cannot be read and is returned as :class:`UnreadableCite`,
   never dropped.
"""

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache

from eyecite.models import FullLawCitation
from reporters_db import LAWS

from .citations import eyecite_citations
from .text import Spans


@dataclass
class StatuteMention:
    """One section of a statute, regulation or rule: ``title`` ``18``, ``code`` ``U.S.C.``, ``section``
    ``1028A``, ``subsections`` ``["a", "1"]`` for ``(a)(1)``. ``form``: ``federal``, ``state``, ``rule`` or
    ``short`` (a bare ``§`` read as the last code cited) or ``constitution`` (``code`` ``U.S. Const.``, ``section``
    ``art. III`` or ``amend. XIV``, ``clause`` ``§ 2`` or ``§ 8, cl. 3``)."""

    start: int
    end: int
    text: str
    title: str
    code: str
    section: str
    subsections: list[str] = field(default_factory=list)
    form: str = "federal"
    sign: str = "§"
    chapter: str = ""
    note: str = ""  # how a bare rule number was read (the set of rules of the matter's court)
    clause: str = ""  # of a constitution: the section and clause within the article or amendment

    @property
    def cite(self) -> str:
        if self.form == "constitution":
            return f"{self.code} {self.section}" + (f", {self.clause}" if self.clause else "")
        if self.form == "rule":
            return f"{self.code} {self.section}"
        if "/" in self.section or self.code in ("ILCS", "N.Y. C.P.L.R."):
            return f"{self.title} {self.code} {self.section}".strip()
        if self.chapter:
            return f"{self.code} ch. {self.chapter}, {self.sign} {self.section}"
        return f"{self.title} {self.code} {self.sign} {self.section}".strip()

    @property
    def code_key(self) -> str:
        """The code's name reduced for comparison: ``17 C.F.R.`` and ``17 CFR``, ``Tex. ... Code Ann.`` and
        ``Tex. ... Code`` compare equal."""
        return code_key(self.code)


@dataclass(frozen=True)
class UnreadableCite:
    """Citation-shaped text no reading above could read, and why."""

    start: int
    end: int
    text: str
    why: str


def code_key(code: str) -> str:
    """``Tex. Civ. Prac. & Rem. Code Ann.`` -> ``texcivpracremcode``: letters only, lower case, without the
    words that name an edition rather than the code (``Ann.``, ``Annotated``)."""
    words = re.findall(r"[A-Za-z]+", code)
    return "".join(w.lower() for w in words if w.lower() not in ("ann", "annotated"))


_SUBS = r"(?:\([A-Za-z0-9]{1,4}\))*"
_SECTION = r"\d[\w.\-–]*?(?:\([A-Za-z0-9]{1,4}\))*"
_END = r"(?=[\s,;)]|\.(?:\s|$)|$)"
_FEDERAL = re.compile(
    r"(?=\d)\b(?P<title>\d{1,3})\s+(?P<code>U\.\s?S\.\s?C\.(?:\s?A\.)?|C\.\s?F\.\s?R\.|USCA?\b|CFR\b)\s*"
    r"(?:§§?|[Ss]ec(?:tions?|s?\.)\s?)?\s*"
    rf"(?P<sections>{_SECTION}{_END}(?:\s*(?:,|and|&)\s*(?:§\s*)?{_SECTION}{_END}(?!\s+[A-Z][A-Za-z]?\.))*)"
)
# A constitution's name: "U.S." or a state's abbreviation (Bluebook table T10: "Cal.", "N.Y.", "W. Va.", "Ohio").
_CONSTITUTION = re.compile(
    r"\b(?P<code>(?:U\.\s?S\.|Alaska|Idaho|Iowa|Ohio|Utah|[A-Z][A-Za-z]{0,5}\.(?:\s?[A-Z][A-Za-z]{0,4}\.)?)\s?Const\.)\s*"
    r"(?:(?P<kind>art(?:icle|\.)|amend(?:ment|\.))\s*(?P<number>[IVXLC]+\b|\d+\b)|(?P<preamble>pmbl\.|preamble\b))"
    r"(?P<clause>(?:,?\s*(?:§§?\s*\d+[A-Za-z]?|cl\.\s*\d+))*)")
_ONE_SECTION = re.compile(rf"{_SECTION}{_END}")
# A section number: digits, then letters, dots, colons and hyphens between word characters (2A:14-1, 240.10b-5).
_SEC_TOKEN = r"\d[0-9A-Za-z]*(?:[.:\-–][0-9A-Za-z]+)*"
_RULES = [
    (re.compile(r"(?=F)\bFed(?:eral)?\.?\s*R(?:ules?)?\.?\s*(?:of\s+)?(?P<which>Civ(?:il)?\.?\s*P(?:roc(?:edure)?)?\.?|"
                r"Evid(?:ence)?\.?|App(?:ellate)?\.?\s*P(?:roc(?:edure)?)?\.?|Crim(?:inal)?\.?\s*P(?:roc(?:edure)?)?\.?|"
                r"Bankr(?:uptcy)?\.?\s*P(?:roc(?:edure)?)?\.?)\s*(?P<section>\d+(?:\.\d+)?)(?P<subs>" + _SUBS + ")"),
     None),
    (re.compile(r"(?=S)\bSup\.\s?Ct\.\s?R\.\s*(?P<section>\d+(?:\.\d+)?)(?P<subs>" + _SUBS + ")"), "Sup. Ct. R."),
    (re.compile(r"\bN\.\s?Y\.\s*C\.\s?P\.\s?L\.\s?R\.?\s*(?:§\s*)?(?P<section>" + _SEC_TOKEN + r")(?P<subs>" + _SUBS
                + r")|\bCPLR\s*(?:§\s*)?(?P<section2>" + _SEC_TOKEN + r")(?P<subs2>" + _SUBS + ")"), "N.Y. C.P.L.R."),
    (re.compile(r"(?=\d)\b(?P<title>\d{1,4})\s+(?:ILCS|Ill\.\s?Comp\.\s?Stat\.(?:\s?Ann\.)?)\s+(?P<act>\d+)\s*/\s*"
                r"(?P<section>" + _SEC_TOKEN + r")(?P<subs>" + _SUBS + ")"), "ILCS"),
    (re.compile(r"(?=[NSEWMCDLR])(?P<court>\b(?:[NSEWMC]\.\s?D\.|D\.)\s?[A-Z][A-Za-z]*\.?(?:\s?(?!L\.\s?R\.)[A-Z][a-z]*\.)?\s*)?"
                r"\b(?P<rule>(?:Local\s+)?(?:Civ(?:il)?\.?\s+|Crim(?:inal)?\.?\s+)?(?:L\.\s?R\.|LR|Rule|R\.))\s*"
                r"(?P<section>\d+(?:\.\d+)*[A-Za-z]?)(?P<subs>" + _SUBS + ")"), "L.R."),
]
# What each reading cannot match without, searched first (a scan that skips to a letter is many times faster
# than trying a pattern at every position of a paragraph that names no statute, as most do).
_FEDERAL_CODE = re.compile(r"U\.\s?S\.\s?C|C\.\s?F\.\s?R|USC|CFR")
_RULE_NEEDS = [re.compile(r"Fed"), re.compile(r"Sup\."), re.compile(r"N\.\s?Y|CPLR"), re.compile(r"ILCS|Ill\."),
               re.compile(r"L\.\s?R|LR|Rule|R\.")]
_RULE_NAMES = {"civ": "Fed. R. Civ. P.", "evi": "Fed. R. Evid.", "app": "Fed. R. App. P.", "cri": "Fed. R. Crim. P.",
               "ban": "Fed. R. Bankr. P."}
_LOCAL_RULE_WORDS = re.compile(r"^(?:Local\b|L\.\s?R\.|LR\b)")
_BARE_SECTION = re.compile(r"§§?\s*(?P<section>" + _SEC_TOKEN + r")(?P<subs>" + _SUBS + ")")
_SUBS_AFTER = re.compile(r"(?P<more>(?:[.:\-–][0-9A-Za-z]+)*)(?P<subs>" + _SUBS + ")")


# A code's subject as state codes name it between the state and "Code" or "Law": "Civ. Prac. & Rem.", "Bus. &
# Com.", "Gen. Oblig.", one to six capitalised words or abbreviations.
_SUBJECT = r"(?:[A-Z][A-Za-z]*\.?\s*(?:&\s*)?){1,6}?"


def _subject_codes() -> list[str]:
    """Patterns for the table's codes named by subject (reporters-db's ``$law_subject``: ``Tex. $law_subject Code
    Ann.``, ``Cal. $law_subject Code``, ``N.Y. $law_subject Law``), whose table key ("Tex. Code Ann.") is never
    written as such: without them a Texas code cited without "Ann." was read as a bare section and blocked."""
    found = []
    for entries in LAWS.values():
        for regex in (r for e in entries for r in e.get("regexes") or []):
            reporter = re.match(r"\(\?P<reporter>(.*?)\) ", regex)
            if reporter and "$law_subject" in reporter.group(1) and "§" in regex:
                inner = reporter.group(1).replace(r" Ann\.", "")
                found.append(inner.replace("$law_subject", _SUBJECT).replace(" ", r"\s*"))
    return sorted(set(found), key=len, reverse=True)


@lru_cache(maxsize=1)
def _table() -> re.Pattern:
    """The state codes of reporters-db's table (``reporters_db.LAWS``) whose citations name a section, article
    or act/section, as one lenient pattern: spaces after periods optional, ``Ann.`` optional."""
    names = set()
    for key, entries in LAWS.items():
        regexes = " ".join(r for e in entries for r in e.get("regexes") or [])
        if "§" in regexes or " art" in regexes or "/ $law_section" in regexes:
            names.add(re.sub(r"\s*\bAnn\.", "", key).strip())
    names -= {"U.S.C.", "C.F.R."}
    alternatives = _subject_codes()
    for name in sorted(names, key=len, reverse=True):
        tokens = name.split()
        alternatives.append(r"\s*".join(re.escape(t) for t in tokens))
    return re.compile(
        r"(?:\b(?P<title>\d{1,4})\s+)?(?P<code>(?:" + "|".join(alternatives) + r")(?:\s*Ann\.)?)"
        r"(?:,?\s*(?:tit\.|ch\.)\s*(?P<chapter>\d+[A-Za-z]?),?)?"
        r"\s*(?:(?P<act>\d+)\s*/\s*|§§?\s*|[Aa]rt(?:icle|\.)?\s*)(?P<section>" + _SEC_TOKEN + r")(?P<subs>"
        + _SUBS + ")"
    )


# A code's name in the table stands this close before its section sign, "art." or "act/section".
# An act and section ("735 ILCS 5/2-619") has one slash; a numeric date (4/17/2000) two, and is no anchor: a draft
# full of dates had the table tried around every one of them.
_ANCHOR = re.compile(r"(?=[§Aa\d])(?:§|\b[Aa]rt(?:icle|\.)?\s*\d|(?<![\d/])\d++\s*/\s*\d++(?!\s*/))")
_BEFORE_ANCHOR, _AFTER_ANCHOR = 80, 60


def _table_matches(flat: str):
    """Matches of the table pattern, tried only around an anchor: the pattern is an alternation of a few
    hundred code names, too slow to try at every position of a long draft."""
    reach = 0
    for anchor in _ANCHOR.finditer(flat):
        low = max(reach, anchor.start() - _BEFORE_ANCHOR)
        high = min(len(flat), anchor.end() + _AFTER_ANCHOR)
        for match in _table().finditer(flat, low, high):
            if match.end() >= high and high < len(flat):
                break  # cut short by the window: a later anchor's window reads it whole
            if match.end() > reach:
                reach = match.end()
                yield match


def roman(number: int) -> str:
    """``14`` -> ``XIV``: articles and amendments are cited in Roman numerals (The Bluebook rule 11)."""
    out = ""
    for value, letters in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                           (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while number >= value:
            out, number = out + letters, number - value
    return out


def _constitution(match: re.Match, flat: str) -> StatuteMention:
    """A constitutional provision as :class:`StatuteMention` (form ``constitution``), its parts in the Bluebook's
    abbreviations (``art.``, ``amend.``, ``pmbl.``) whatever the draft spelled out."""
    code = " ".join(match.group("code").replace("U. S.", "U.S.").split())
    if match.group("preamble"):
        section = "pmbl."
    else:
        kind = "amend." if match.group("kind").lower().startswith("amend") else "art."
        number = match.group("number").upper()
        section = f"{kind} {roman(int(number)) if number.isdigit() else number}"
    clause = " ".join(match.group("clause").strip(" ,").split())
    end = _trim(flat, match.start(), match.end())
    return StatuteMention(match.start(), end, flat[match.start():end], "", code, section, form="constitution",
                          clause=clause)


def _subsections(subs: str) -> list[str]:
    return re.findall(r"\(([A-Za-z0-9]{1,4})\)", subs or "")


def _trim(flat: str, start: int, end: int) -> int:
    """``end`` pulled back over a sentence's final period."""
    while end > start and flat[end - 1] in ".-–":
        end -= 1
    return end


def find_statutes(flat: str, citations: list | None = None) -> list[StatuteMention]:
    """Every statute, regulation and rule section cited in ``flat``, one mention per section (see the module
    docstring for the forms and their order). ``citations``: eyecite's citations of ``flat`` when the caller has
    them (:func:`matters.drafts.verifier.citations.eyecite_citations`)."""
    return read_statutes(flat, citations)[0]


_APPEALS = re.compile(
    r"court\s+of\s+appeals\b.*\bcircuit\b|\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|federal|d\.\s?c\.)\s+circuit\b|\b\d{1,2}(?:st|nd|rd|th|d)\s+cir\b|\bfed\.\s?cir\b", re.IGNORECASE)
_DISTRICT = re.compile(
    r"\b(?:united\s+states|u\.\s?s\.|federal)\s+district\s+court\b|^\s*(?:[NSEWMC]\.\s?)?D\.\s?[A-Z]",
    re.IGNORECASE)
_BANKRUPTCY = re.compile(r"\bbankruptcy\s+court\b|\bbankr\.", re.IGNORECASE)
# A state's court, whatever circuit or district it names ("Louisiana Fourth Circuit Court of Appeal", "D.C.
# Superior Court", "Florida First District Court of Appeal"): its rules are the state's, unless the court is
# also named as the United States'.
_STATES = (r"alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|florida|georgia|hawaii|idaho|"
           r"illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|minnesota|"
           r"mississippi|missouri|montana|nebraska|nevada|new\s+hampshire|new\s+jersey|new\s+mexico|new\s+york|"
           r"north\s+carolina|north\s+dakota|ohio|oklahoma|oregon|pennsylvania|rhode\s+island|south\s+carolina|"
           r"south\s+dakota|tennessee|texas|utah|vermont|virginia|washington|west\s+virginia|wisconsin|wyoming")
_STATE_COURT = re.compile(rf"\b(?:{_STATES})\b|\bsuperior\s+court\b|\bcourt\s+of\s+appeal\b(?!s)|\bcounty\b|"
                          r"\bparish\b|\bcommonwealth\b", re.IGNORECASE)
_UNITED_STATES = re.compile(r"\bunited\s+states\b|\bu\.\s?s\.", re.IGNORECASE)


def rules_of_court(court: str) -> tuple[str, str] | None:
    """The set of rules a bare ``Rule 56`` means before ``court`` (``Matter.court``), as ``(code, name)``:
    a federal court of appeals ``("Fed. R. App. P.", "Federal Rules of Appellate Procedure")``, a federal
    district court the Federal Rules of Civil Procedure, a bankruptcy court the Federal Rules of Bankruptcy
    Procedure; None when the court does not make it plain (a state court, or none named). The rules' own scope
    is the source: Fed. R. Civ. P. 1, Fed. R. App. P. 1(a), Fed. R. Bankr. P. 1001."""
    court = court or ""
    if _STATE_COURT.search(court) and not _UNITED_STATES.search(court):
        return None
    if _BANKRUPTCY.search(court):
        return "Fed. R. Bankr. P.", "Federal Rules of Bankruptcy Procedure"
    if _APPEALS.search(court):
        return "Fed. R. App. P.", "Federal Rules of Appellate Procedure"
    if _DISTRICT.search(court):
        return "Fed. R. Civ. P.", "Federal Rules of Civil Procedure"
    return None


def read_statutes(flat: str, citations: list | None = None, court: str = "", rules_before: str = "",
                  statute_before: tuple[str, str, str] | None = None
                  ) -> tuple[list[StatuteMention], list[UnreadableCite]]:
    """:func:`find_statutes`, and the citation-shaped text none of its readings could read. ``court``: the
    matter's court, whose set of rules a bare ``Rule 56`` means when no set is cited before it
    (:func:`rules_of_court`). ``rules_before`` and ``statute_before``: the set of rules last named and the last
    statute cited (title, code, form) in the text before ``flat`` (the paragraphs before it), which a bare
    ``Rule 12(c)`` or ``§ 1441(b)`` of ``flat`` refers to when ``flat`` names none before it."""
    if citations is None:
        citations = eyecite_citations(flat)
    found: list[StatuteMention] = []
    unreadable: list[UnreadableCite] = []
    taken = Spans()

    def add(mention: StatuteMention) -> None:
        if mention.section and not taken.overlaps(mention.start, mention.end):
            taken.add(mention.start, mention.end)
            found.append(mention)

    for match in _CONSTITUTION.finditer(flat):
        add(_constitution(match, flat))

    for match in _FEDERAL.finditer(flat) if _FEDERAL_CODE.search(flat) else ():
        code = re.sub(r"\s", "", match.group("code"))
        code = {"USC": "U.S.C.", "USCA": "U.S.C.A.", "CFR": "C.F.R."}.get(code, code)
        base = match.start("sections")
        for i, section in enumerate(_ONE_SECTION.finditer(match.group("sections"))):
            raw = section.group(0).rstrip(".-–")
            number = re.sub(r"\(.*", "", raw)
            start = match.start() if i == 0 else base + section.start()
            end = base + section.start() + len(raw)
            add(StatuteMention(start, end, flat[start:end], match.group("title"), code, number, _subsections(raw)))
    for citation in citations:
        if not isinstance(citation, FullLawCitation):
            continue
        start, end = citation.span()
        groups = citation.groups
        section = groups.get("section", "") or groups.get("article", "")
        more = _SUBS_AFTER.match(flat, end)
        if more:
            section += more.group("more")
            end = more.end()
        subs = _subsections(more.group("subs") if more else "")
        end = _trim(flat, start, end)
        title = groups.get("chapter", "") or groups.get("title", "")
        # eyecite's reporter group can stop short of the code's name (``N.Y.`` for ``N.Y. Gen. Oblig. Law``).
        code = re.split(r"\s*(?:§|\bart\b)", flat[start:end])[0]
        code = re.sub(r"^\d+\s+", "", code).strip() or groups.get("reporter", "")
        add(StatuteMention(start, end, flat[start:end], title, code, section.rstrip(".-–"), subs, "state",
                           "art." if re.search(r"\bart\b", flat[start:end]) else "§"))
    for match in _table_matches(flat):
        end = _trim(flat, match.start(), match.end())
        section = match.group("section").rstrip(".-–")
        if match.group("act"):
            section = f"{match.group('act')}/{section}"
        sign = "§" if "§" in match.group(0) or match.group("act") else "art."
        add(StatuteMention(match.start(), end, flat[match.start():end], match.group("title") or "",
                           " ".join(match.group("code").split()), section, _subsections(match.group("subs")),
                           "state", sign, match.group("chapter") or ""))
    for (pattern, name), needs in zip(_RULES, _RULE_NEEDS):
        if not needs.search(flat):
            continue
        for match in pattern.finditer(flat):
            groups = match.groupdict()
            section = (groups.get("section") or groups.get("section2") or "").rstrip(".")
            subs = _subsections(groups.get("subs") or groups.get("subs2") or "")
            title, form, code = "", "rule", name
            if name is None:
                code = _RULE_NAMES[re.sub(r"[^a-z]", "", match.group("which").lower())[:3]]
            elif name == "L.R.":
                rule = match.group("rule")
                if not (groups.get("court") or _LOCAL_RULE_WORDS.match(rule)):
                    if taken.overlaps(match.start(), match.end()):
                        continue
                    # "Rule 12(b)(6)" names no set of rules itself. Briefs name the set once ("Federal Rule of
                    # Civil Procedure 12(b)(6)") and then write "Rule 12(c)": read it as the set named last before
                    # it; with none named, it is reported as unreadable, never dropped.
                    named = [s for s in found if s.form == "rule" and s.start < match.start()
                             and not s.code.endswith("L.R.")]
                    plain = rules_of_court(court) if not named and not rules_before else None
                    if plain:
                        end = _trim(flat, match.start(), match.end())
                        add(StatuteMention(match.start(), end, flat[match.start():end], "", plain[0], section, subs,
                                           "rule", note=(f"“{flat[match.start():end]}” names no set of rules; read "
                                                         f"as the {plain[1]}, the rules of the matter's court "
                                                         f"({' '.join(court.split())}).")))
                        continue
                    if not named and rules_before:
                        end = _trim(flat, match.start(), match.end())
                        add(StatuteMention(match.start(), end, flat[match.start():end], "", rules_before, section,
                                           subs, "rule"))
                        continue
                    if not named:
                        end = _trim(flat, match.start(), match.end())
                        unreadable.append(UnreadableCite(
                            match.start(), end, flat[match.start():end],
                            "names no set of rules and none is cited before it: say which (for example "
                            "Fed. R. Civ. P. 12(b)(6), or the state's or the court's local rule)"))
                        taken.add(match.start(), match.end())
                        continue
                    code = max(named, key=lambda s: s.start).code
                else:
                    court = " ".join((groups.get("court") or "").split())
                    code = f"{court} L.R.".strip()
            elif name == "ILCS":
                title, form, section = match.group("title"), "state", f"{match.group('act')}/{section}"
            elif name == "N.Y. C.P.L.R.":
                form = "state"
            end = _trim(flat, match.start(), match.end())
            add(StatuteMention(match.start(), end, flat[match.start():end], title, code, section, subs, form))

    found.sort(key=lambda s: s.start)
    starts = [s.start for s in found]
    for match in _BARE_SECTION.finditer(flat):
        if taken.overlaps(match.start(), match.end()):
            continue
        i = bisect.bisect_left(starts, match.start()) - 1
        before = next((found[j] for j in range(i, -1, -1) if found[j].form != "short"), None)
        if before is None and statute_before is not None:
            title, code, form = statute_before
            before = StatuteMention(0, 0, "", title, code, "", [], form)
        end = _trim(flat, match.start(), match.end())
        if before is not None and before.form == "constitution":
            # "§ 9" after "U.S. Const. art. I, § 8": another section of the same article.
            add(StatuteMention(match.start(), end, flat[match.start():end], "", before.code, before.section,
                               form="constitution", clause=flat[match.start():end]))
            continue
        if before is None or before.form == "rule":
            unreadable.append(UnreadableCite(match.start(), end, flat[match.start():end],
                                             "names no code: no statute or regulation is cited before it"))
            taken.add(match.start(), match.end())
            continue
        mention = StatuteMention(match.start(), end, flat[match.start():end], before.title, before.code,
                                 match.group("section").rstrip(".-–"), _subsections(match.group("subs")), "short")
        add(mention)
    found.sort(key=lambda s: s.start)
    unreadable.sort(key=lambda u: u.start)
    return found, unreadable
