"""The matter's authorities (exhibits of origin ``authority``: opinions, statutes, rules) and how a citation is
matched to one.

A case citation matches an authority whose first pages carry its reporter citation (``569 U.S. 614``, also
written ``569 U. S. 614``) or its caption (a distinctive word of each party's name: ``Tarrant`` and
``Herrmann`` for *Tarrant Regional Water Dist. v. Herrmann*; a slip opinion carries no reporter cite yet).
A statute or regulation matches an authority that cites its title and section (``18 U.S.C. § 1028A``) or is
the section itself (``§ 1028A`` under a heading naming title 18 of the code).
"""

import re
from dataclasses import dataclass, field
from functools import cached_property

from ..models import Exhibit, Matter, Origin
from .citations import CaseMention, StatuteMention
from .quotes import QuoteSearch
from .text import flatten, match_words

# Words of a case name that say nothing about which case it is.
_CAPTION_STOPWORDS = {
    "the", "of", "and", "in", "re", "et", "al", "inc", "co", "corp", "llc", "ltd", "company", "corporation",
    "dist", "district", "city", "county", "state", "states", "united", "people", "commonwealth", "ex", "rel",
    "dept", "department", "bd", "board", "assn", "association", "nat", "natl", "national", "v", "vs", "matter",
}
_HEAD_PAGES = 3


@dataclass
class AuthorityDoc:
    """One authority exhibit: its pages ``(page_id, number, text)`` in order."""

    exhibit_id: int
    label: str
    title: str
    pages: list[tuple[int, int, str]] = field(default_factory=list)

    @cached_property
    def head(self) -> str:
        return flatten(self.title + "\n" + "\n".join(t for _, _, t in self.pages[:_HEAD_PAGES]))

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

    def find_quote(self, search: QuoteSearch) -> int | None:
        """The page id where the quotation appears in this authority, or None."""
        words, _ = self.words
        span = search.find(words)
        return None if span is None else self.page_at(span[0])

    def first_page_with(self, pattern: re.Pattern) -> int | None:
        for page_id, _, text in self.pages:
            if pattern.search(flatten(text)):
                return page_id
        return None


def authorities_of(matter: Matter) -> list[AuthorityDoc]:
    """Every ready authority exhibit of ``matter`` with its page text."""
    docs: dict[int, AuthorityDoc] = {}
    exhibits = matter.exhibits.filter(origin=Origin.AUTHORITY, status=Exhibit.Status.READY)
    for exhibit in exhibits.order_by("label_seq", "id"):
        docs[exhibit.pk] = AuthorityDoc(exhibit.pk, exhibit.label, exhibit.title or exhibit.original_name)
    from ..models import Page

    for page_id, exhibit_id, number, text in (
        Page.objects.filter(exhibit_id__in=docs).order_by("exhibit_id", "number")
        .values_list("id", "exhibit_id", "number", "text")
    ):
        docs[exhibit_id].pages.append((page_id, number, text))
    return list(docs.values())


def _reporter_pattern(case: CaseMention) -> re.Pattern:
    reporter = r"\s*".join(re.escape(part) for part in case.reporter.replace(".", ". ").split())
    return re.compile(rf"\b{re.escape(case.volume)}\s+{reporter}\s*{re.escape(case.page)}\b", re.IGNORECASE)


def _caption_words(party: str) -> list[str]:
    words = re.findall(r"[A-Za-z][A-Za-z'’\-]+", party)
    return [w for w in words if len(w) >= 3 and w.lower().strip("'’") not in _CAPTION_STOPWORDS]


def match_case(case: CaseMention, docs: list[AuthorityDoc]) -> tuple[AuthorityDoc, int, str] | None:
    """The authority a full case citation names, the page id that shows it, and how it matched
    (``reporter citation`` or ``caption``); None when no authority of the matter matches."""
    if case.volume and case.page:
        pattern = _reporter_pattern(case)
        for doc in docs:
            if pattern.search(doc.head):
                return doc, doc.first_page_with(pattern) or doc.pages[0][0], "reporter citation"
    plaintiff, defendant = _caption_words(case.plaintiff), _caption_words(case.defendant)
    if not (plaintiff and defendant):
        return None
    for doc in docs:
        head = doc.head
        if any(re.search(rf"\b{re.escape(w)}\b", head, re.IGNORECASE) for w in plaintiff) and any(
            re.search(rf"\b{re.escape(w)}\b", head, re.IGNORECASE) for w in defendant
        ):
            return doc, doc.pages[0][0] if doc.pages else 0, "caption"
    return None


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
    shown = {m.group(1) for m in re.finditer(own, doc.head, re.IGNORECASE)}
    if shown and case.volume not in shown:
        return sorted(shown)[0]
    return ""


def _code_pattern(code: str) -> str:
    letters = [c for c in code if c.isalpha()]
    return r"\.?\s?".join(letters) + r"\.?"


def match_statute(statute: StatuteMention, docs: list[AuthorityDoc]) -> tuple[AuthorityDoc, int] | None:
    """The authority that holds or cites this section, and the page id; None when none does."""
    section = re.escape(statute.section)
    cited = re.compile(
        rf"\b{re.escape(statute.title)}\s+{_code_pattern(statute.code)}\s*(?:§§?|sec(?:tion|s?\.)?)?\s*{section}(?![\w.\-]*\w)",
        re.IGNORECASE,
    )
    heading = re.compile(rf"(?:§§?|\bsec(?:tion|\.)?)\s*{section}(?![\w\-]*\w)", re.IGNORECASE)
    title = re.compile(rf"\b(?:title\s+{re.escape(statute.title)}\b|{re.escape(statute.title)}\s+{_code_pattern(statute.code)})",
                       re.IGNORECASE)
    for doc in docs:
        page = doc.first_page_with(cited)
        if page is not None:
            return doc, page
    for doc in docs:
        if title.search(doc.head):
            page = doc.first_page_with(heading)
            if page is not None:
                return doc, page
    return None
