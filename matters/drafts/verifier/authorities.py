"""The matter's authorities (exhibits of origin ``authority``: opinions, statutes, rules) and how a citation is
matched to one.

A citation is grounded by an authority only when the exhibit *is* the cited opinion or provision, as shown by
what the document says of itself, never by what it cites:

- its "cites as" value (``Exhibit.cites_as``), set by an attorney and prefilled from the first page
  (:func:`suggest_cites_as`);
- its own citation: a reporter citation or "Cite as:" line at the head of one of its first pages (the running
  head and citation block, where ``569 U.S. 614`` or ``Cite as: 569 U. S. ____ (2013)`` stands);
- its own caption: the parties' names in capitals (``TARRANT REGIONAL WATER DISTRICT v. HERRMANN``) on its
  first page, or in its running heads; a distinctive word of each party's name must be there (``Tarrant`` and
  ``Herrmann`` for *Tarrant Regional Water Dist. v. Herrmann*);
- for a statute, regulation or rule: a document that is not an opinion, whose head names the code (``Title 18``,
  ``18 U.S.C.``, ``Federal Rules of Civil Procedure``) and which has the section as a heading (``§ 1028A.``,
  ``Rule 12.``).

A case or section that an authority only mentions (in its syllabus, its text, its notes) is "cited within" it:
:func:`cited_within` says where, so the finding can ask for the authority itself.
"""

import re
from dataclasses import dataclass, field
from functools import cached_property

from matters.models import Exhibit, Matter, Origin, Page

from .citations import CaseMention
from .quotes import FOOT_WORDS, QuoteSearch
from .statutes import StatuteMention, code_key, find_statutes
from .text import flatten, match_words

# Words of a case name that say nothing about which case it is.
_CAPTION_STOPWORDS = {
    "the", "of", "and", "in", "re", "et", "al", "inc", "co", "corp", "llc", "ltd", "company", "corporation",
    "dist", "district", "city", "county", "state", "states", "united", "people", "commonwealth", "ex", "rel",
    "dept", "department", "bd", "board", "assn", "association", "nat", "natl", "national", "v", "vs", "matter",
}
_HEAD_PAGES = 3
# A page's running head or citation block is its first line, after a line holding only the page number: a
# second line of text is already the opinion's body (which cites other cases).
_PAGE_NUMBER_CHARS = 5
_CITE_AS = re.compile(r"\bCite\s+as:?\s*(?P<cite>[^\n]{3,120})", re.IGNORECASE)
# A caption in capitals: "TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL." (lines may break inside it).
_CAPS_CAPTION = re.compile(r"(?<![A-Za-z])[A-Z][A-Z.,'’&\- ]{2,120}\s+v\.\s+[A-Z][A-Z.,'’&\- ]{2,120}")
# Where a capitalised caption's second party ends and the heading after it begins.
_CAPTION_END = re.compile(r"\s+(?:CERTIORARI|ON\s+(?:WRIT|PETITION|APPEAL)|APPEAL|IN\s+THE|SUPREME|UNITED\s+STATES\s+"
                          r"COURT|COURT\s+OF|NO\.?)\b.*", re.DOTALL)
# What marks a document as a court's opinion rather than the text of a law.
_OPINION_MARKS = re.compile(
    r"\b(?:opinion of the court|delivered the opinion|per curiam|syllabus|slip opinion|cite as|certiorari|"
    r"appeal from|affirmed|reversed|circuit judge|district judge|justice)\b", re.IGNORECASE)


# A public-domain citation standing on a line of its own (``2022-NCSC-1``, ``2019 WI 12``, ``2020 IL 124112``), in
# the first lines of a page.
_NEUTRAL_OWN = re.compile(r"(?m)^\s*(?:19|20)\d\d[- ][A-Z][A-Za-z]{1,9}[- ]\d{1,6}\s*$")
_NEUTRAL_HEAD_LINES = 4


def _top(text: str) -> str:
    """The head line of a page: its first line of text, past a line holding only a page number."""
    for line in text.splitlines():
        line = line.strip()
        if len(line) > _PAGE_NUMBER_CHARS:
            return line
    return ""


@dataclass
class AuthorityDoc:
    """One authority exhibit: its pages ``(page_id, number, text)`` in order and its ``cites_as`` value."""

    exhibit_id: int
    label: str
    title: str
    pages: list[tuple[int, int, str]] = field(default_factory=list)
    cites_as: str = ""

    @cached_property
    def head(self) -> str:
        return flatten(self.title + "\n" + "\n".join(t for _, _, t in self.pages[:_HEAD_PAGES]))

    @cached_property
    def own(self) -> str:
        """What the document says of itself: its "cites as" value, title, the top lines of its first pages,
        "Cite as:" lines and capitalised captions on its first page (flattened, one part per line)."""
        parts = [self.cites_as, self.title]
        for _, _, text in self.pages[:_HEAD_PAGES]:
            parts.append(_top(text))
            parts.extend(m.group(0) for m in _CITE_AS.finditer(text))
            # A public-domain citation printed in the head block (``2022-NCSC-1`` under the court's name, or
            # under the running head) is the opinion's own: the opinion's body starts further down.
            head = "\n".join(text.strip().splitlines()[:_NEUTRAL_HEAD_LINES])
            parts.extend(m.group(0) for m in _NEUTRAL_OWN.finditer(head))
        if self.pages:
            first = " ".join(self.pages[0][2].split())
            parts.extend(m.group(0) for m in _CAPS_CAPTION.finditer(first))
        return "\n".join(p for p in parts if p)

    @cached_property
    def is_opinion(self) -> bool:
        return bool(_OPINION_MARKS.search(self.head)) or bool(_CAPS_CAPTION.search(self.head))

    @cached_property
    def full(self) -> str:
        return flatten("\n".join(t for _, _, t in self.pages))

    @cached_property
    def words(self) -> tuple[str, list[tuple[int, int]]]:
        """The match words of all pages joined, and where each page starts in them ``(offset, page_id)``."""
        parts, offsets, position = [], [], 0
        for page_id, _, text in self.pages:
            words = match_words(text)
            offsets.append((position, page_id))
            parts.append(words)
            position += len(words) + 1
        return " ".join(parts), offsets

    def page_at(self, offset: int) -> int:
        _, offsets = self.words
        page_id = offsets[0][1] if offsets else 0
        for start, pid in offsets:
            if start <= offset:
                page_id = pid
        return page_id

    def page_number(self, page_id: int) -> int:
        return next((number for pid, number, _ in self.pages if pid == page_id), 0)

    def find_quote(self, search: QuoteSearch) -> int | None:
        """The page id where the quotation appears in this authority, or None."""
        words, offsets = self.words
        span = search.find(words)
        if span is not None:
            return self.page_at(span[0])
        # A quotation running over a page break with the running head, page number or footnotes between its
        # halves: tried only where the page's last words hold the quotation's first words.
        first = " ".join(search.words[:3])
        if not first:
            return None
        bounds = [start for start, _ in offsets] + [len(words) + 1]
        for i in range(len(offsets) - 1):
            page = words[bounds[i]:bounds[i + 1] - 1]
            if first in page[-(FOOT_WORDS * 12):] and search.find_across(page, words[bounds[i + 1]:bounds[i + 2] - 1]):
                return offsets[i][1]
        return None

    @cached_property
    def flat_pages(self) -> list[tuple[int, str]]:
        return [(page_id, flatten(text)) for page_id, _, text in self.pages]

    def first_page_with(self, pattern: re.Pattern) -> int | None:
        for page_id, text in self.flat_pages:
            if pattern.search(text):
                return page_id
        return None


def authorities_of(matter: Matter) -> list[AuthorityDoc]:
    """Every ready authority exhibit of ``matter`` with its page text and "cites as" value."""
    docs: dict[int, AuthorityDoc] = {}
    exhibits = matter.exhibits.filter(origin=Origin.AUTHORITY, status=Exhibit.Status.READY)
    for exhibit in exhibits.order_by("label_seq", "id"):
        docs[exhibit.pk] = AuthorityDoc(exhibit.pk, exhibit.label, exhibit.title or exhibit.original_name,
                                        cites_as=exhibit.cites_as)
    for page_id, exhibit_id, number, text in (
        Page.objects.filter(exhibit_id__in=docs).order_by("exhibit_id", "number")
        .values_list("id", "exhibit_id", "number", "text")
    ):
        docs[exhibit_id].pages.append((page_id, number, text))
    return list(docs.values())


def _reporter_pattern(case: CaseMention) -> re.Pattern:
    reporter = r"\s*".join(re.escape(part) for part in case.reporter.replace(".", ". ").split())
    # A public-domain citation joins its parts with hyphens (2022-NCSC-1).
    return re.compile(rf"\b{re.escape(case.volume)}(?:\s+|-){reporter}(?:\s*|-){re.escape(case.page)}\b",
                      re.IGNORECASE)


def _caption_words(party: str) -> list[str]:
    words = re.findall(r"[A-Za-z][A-Za-z'’\-]+", party)
    return [w for w in words if len(w) >= 3 and w.lower().strip("'’") not in _CAPTION_STOPWORDS]


def _names_parties(case: CaseMention, text: str) -> bool:
    plaintiff, defendant = _caption_words(case.plaintiff), _caption_words(case.defendant)
    if not (plaintiff and defendant):
        return False
    return any(re.search(rf"\b{re.escape(w)}\b", text, re.IGNORECASE) for w in plaintiff) and any(
        re.search(rf"\b{re.escape(w)}\b", text, re.IGNORECASE) for w in defendant)


def match_case(case: CaseMention, docs: list[AuthorityDoc]) -> tuple[AuthorityDoc, int, str] | None:
    """The authority that *is* the opinion a full case citation names, the page id that shows it, and how it
    matched (``reporter citation`` or ``caption``); None when no authority of the matter is that opinion (one
    may still cite it: :func:`cited_within`)."""
    if case.volume and case.page:
        pattern = _reporter_pattern(case)
        for doc in docs:
            if pattern.search(doc.own):
                return doc, doc.first_page_with(pattern) or doc.pages[0][0], "reporter citation"
    for doc in docs:
        if _names_parties(case, doc.own):
            return doc, doc.pages[0][0] if doc.pages else 0, "caption"
    return None


def cited_within(pattern: re.Pattern, docs: list[AuthorityDoc]) -> tuple[AuthorityDoc, int] | None:
    """The first authority whose text cites ``pattern`` (a citation it mentions, not its own) and the page
    number there; None when none does."""
    for doc in docs:
        page_id = doc.first_page_with(pattern)
        if page_id is not None:
            return doc, doc.page_number(page_id)
    return None


def case_cited_within(case: CaseMention, docs: list[AuthorityDoc]) -> tuple[AuthorityDoc, int] | None:
    """:func:`cited_within` for a full case citation, by its reporter citation."""
    if not (case.volume and case.page):
        return None
    return cited_within(_reporter_pattern(case), docs)


def volume_conflict(case: CaseMention, doc: AuthorityDoc) -> str:
    """The volume an authority matched by caption shows for its own cite when it differs from the citation's
    (a slip opinion's ``Cite as: 569 U. S. ____``, or ``569 U.S. 614`` where the draft has ``570 U.S. 614``),
    else ''."""
    if not (case.volume and case.reporter):
        return ""
    reporter = r"\s*".join(re.escape(part) for part in case.reporter.replace(".", ". ").split())
    # The opinion's own cite: a slip opinion's placeholder (569 U. S. ____), or the same first page in another
    # volume. Other cites on its first pages are cases it cites.
    own = rf"\b(\d{{1,4}})\s+{reporter}\s*(?:_{{2,}}|{re.escape(case.page)}\b)"
    shown = {m.group(1) for m in re.finditer(own, doc.own, re.IGNORECASE)}
    if shown and case.volume not in shown:
        return sorted(shown)[0]
    return ""


def _code_pattern(code: str) -> str:
    letters = [c for c in code if c.isalpha()]
    return r"\.?\s?".join(letters) + r"\.?"


# How the head of a code or a set of rules names itself, for codes cited by abbreviation.
_CODE_NAMES = {
    "fedrcivp": r"federal\s+rules?\s+of\s+civil\s+procedure", "fedrevid": r"federal\s+rules?\s+of\s+evidence",
    "fedrappp": r"federal\s+rules?\s+of\s+appellate\s+procedure",
    "fedrcrimp": r"federal\s+rules?\s+of\s+criminal\s+procedure",
    "fedrbankrp": r"federal\s+rules?\s+of\s+bankruptcy\s+procedure",
}


# The constitutions' names as their texts head themselves, by the abbreviation a citation uses (The Bluebook,
# table T10); "U.S." for the Constitution of the United States.
_STATE_NAMES = {
    "ala": "alabama", "alaska": "alaska", "ariz": "arizona", "ark": "arkansas", "cal": "california",
    "colo": "colorado", "conn": "connecticut", "del": "delaware", "fla": "florida", "ga": "georgia",
    "haw": "hawai", "idaho": "idaho", "ill": "illinois", "ind": "indiana", "iowa": "iowa", "kan": "kansas",
    "ky": "kentucky", "la": "louisiana", "me": "maine", "md": "maryland", "mass": "massachusetts",
    "mich": "michigan", "minn": "minnesota", "miss": "mississippi", "mo": "missouri", "mont": "montana",
    "neb": "nebraska", "nev": "nevada", "nh": "new hampshire", "nj": "new jersey", "nm": "new mexico",
    "ny": "new york", "nc": "north carolina", "nd": "north dakota", "ohio": "ohio", "okla": "oklahoma",
    "or": "oregon", "pa": "pennsylvania", "ri": "rhode island", "sc": "south carolina", "sd": "south dakota",
    "tenn": "tennessee", "tex": "texas", "utah": "utah", "vt": "vermont", "va": "virginia", "wash": "washington",
    "wva": "west virginia", "wis": "wisconsin", "wyo": "wyoming", "us": "united states",
}
_AMENDMENT_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth twenty-first twenty-second twenty-third "
    "twenty-fourth twenty-fifth twenty-sixth twenty-seventh").split()


def _constitution_named(statute: StatuteMention, head: str) -> bool:
    """Whether ``head`` is the head of the constitution ``statute`` cites (its name and the word constitution)."""
    state = _STATE_NAMES.get(statute.code_key.removesuffix("const"))
    return bool(state and re.search(r"\bconstitution\b", head, re.IGNORECASE)
                and re.search(r"\b" + r"\s+".join(state.split()), head, re.IGNORECASE))


def _provision_heading(statute: StatuteMention) -> re.Pattern:
    """An article or amendment as the constitution's text heads it: ``Article III``, ``Art. 3``, ``Amendment
    XIV``, ``Fourteenth Amendment``; the preamble as ``Preamble`` or ``We the People``."""
    if statute.section == "pmbl.":
        return re.compile(r"\bpreamble\b|\bwe\s+the\s+people\b", re.IGNORECASE)
    kind, numeral = statute.section.split()
    value = _from_roman(numeral)
    if kind == "art.":
        return re.compile(rf"\bart(?:icle|\.)?\s*(?:{numeral}|{value})\b", re.IGNORECASE)
    ordinal = _AMENDMENT_ORDINALS[value - 1] if 0 < value <= len(_AMENDMENT_ORDINALS) else "-"
    return re.compile(rf"\bamend(?:ment|\.)?\s*(?:{numeral}|{value})\b|\b{ordinal}\s+amendment\b", re.IGNORECASE)


def _from_roman(numeral: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, letter in enumerate(numeral):
        value = values.get(letter, 0)
        total += -value if i + 1 < len(numeral) and values.get(numeral[i + 1], 0) > value else value
    return total


def _section_heading(statute: StatuteMention) -> re.Pattern:
    if statute.form == "constitution":
        return _provision_heading(statute)
    section = re.escape(statute.section)
    word = r"(?:§§?|\bsec(?:tion|\.)?|\brule|\bart(?:icle|\.)?)"
    return re.compile(rf"{word}\s*{section}(?![\w\-]*\w)", re.IGNORECASE)


def _statute_cited(statute: StatuteMention) -> re.Pattern:
    section = re.escape(statute.section)
    return re.compile(rf"\b{re.escape(statute.title)}\s*{_code_pattern(statute.code)}\s*(?:§§?|sec(?:tion|s?\.)?|"
                      rf"rule|art\.?)?\s*{section}(?![\w.\-]*\w)", re.IGNORECASE)


def _own_statutes(doc: AuthorityDoc) -> list[StatuteMention]:
    return find_statutes(flatten(doc.cites_as)) if doc.cites_as else []


def _names_code(statute: StatuteMention, doc: AuthorityDoc) -> bool:
    head = doc.head
    if statute.form == "constitution":
        return _constitution_named(statute, head)
    if statute.title and re.search(rf"\btitle\s+{re.escape(statute.title)}\b", head, re.IGNORECASE):
        return True
    if re.search(rf"\b{re.escape(statute.title)}\s*{_code_pattern(statute.code)}", head, re.IGNORECASE):
        return True
    name = _CODE_NAMES.get(statute.code_key)
    return bool(name and re.search(name, head, re.IGNORECASE))


def match_statute(statute: StatuteMention, docs: list[AuthorityDoc]) -> tuple[AuthorityDoc, int] | None:
    """The authority that *is* this section (or the code volume or set of rules holding it), and the page id
    where the section stands; None when none is (one may still cite it: :func:`statute_cited_within`).

    An authority whose "cites as" names the code and section (``Fed. R. Civ. P. 12`` holds ``12(b)(6)``) or
    only the code (a code volume; its section heading must then be in it) holds it; without a "cites as", a
    document that is not an opinion, names the code in its head and has the section as a heading does."""
    heading = _section_heading(statute)
    for doc in docs:
        owns = _own_statutes(doc)
        for own in owns:
            if own.code_key == statute.code_key and own.title == statute.title and own.section == statute.section:
                return doc, doc.first_page_with(heading) or doc.pages[0][0]
        volume = re.match(r"\s*(\d*)\s*(.*)", doc.cites_as)
        if doc.cites_as and not owns and volume and code_key(volume.group(2)) == statute.code_key \
                and volume.group(1) == statute.title:
            page = doc.first_page_with(heading)
            if page is not None:
                return doc, page
    for doc in docs:
        if doc.cites_as or doc.is_opinion or not _names_code(statute, doc):
            continue
        page = doc.first_page_with(heading)
        if page is not None:
            return doc, page
    return None


def statute_cited_within(statute: StatuteMention, docs: list[AuthorityDoc]) -> tuple[AuthorityDoc, int] | None:
    """:func:`cited_within` for a section of a statute, regulation or rule."""
    return cited_within(_statute_cited(statute), docs)


def suggest_cites_as(first_page: str) -> str:
    """What an authority's first page says it is, to prefill its "cites as" value: the "Cite as:" line of a slip
    opinion (``569 U. S. ____ (2013)``) or the first reporter citation at the head of the page, after the
    capitalised caption when there is one (``TARRANT REGIONAL WATER DISTRICT v. HERRMANN, 569 U. S. ____``);
    for a code or rules, the first section it cites of itself (``18 U.S.C. § 1028A``). '' when nothing is
    found."""
    flat = " ".join(first_page.split())
    caption = _CAPS_CAPTION.search(flat)
    cite_as = _CITE_AS.search(first_page)
    top = _top(first_page)
    reporter = re.search(r"\b\d{1,4}\s+[A-Z][A-Za-z.]*(?:\s?[A-Za-z0-9]+\.){0,3}\s*(?:\d{1,5}|_{2,})\b", top)
    cite = cite_as.group("cite").strip() if cite_as else reporter.group(0) if reporter else ""
    if caption:
        name = _CAPTION_END.sub("", " ".join(caption.group(0).split())).rstrip(",.- ")
        return f"{name}, {cite}" if cite else name
    if cite:
        return cite
    heading = re.search(r"\btitle\s+(\d{1,3})\b.*?§\s*([0-9][\w.\-]*)", flat[:2000], re.IGNORECASE)
    if heading:
        return f"{heading.group(1)} U.S.C. § {heading.group(2).rstrip('.')}"
    statutes = find_statutes(flat[:2000])
    return statutes[0].cite if statutes else ""
