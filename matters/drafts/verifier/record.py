"""Record citations in text: Bates numbers and ranges, and exhibit cites.

Bates forms: ``SMITH000123``, ``SMITH 000123``, ``SMITH_000123``, ranges ``SMITH000123-125``,
``SMITH000123–SMITH000125``, ``SMITH000123 through SMITH000125``. A token is read as a Bates number when its
prefix is one the matter's productions (outgoing or incoming) use, or, for an unknown prefix, when it is written
where a record cite goes (after ``see``, ``at``, ``cf.``, an opening parenthesis, or in a range) or has six or more
digits: so an invented number, or a graphics card's model number put where a Bates number belongs, is caught.

A Bates-shaped token standing as a citation sentence of its own (``The repairs were refused. RTX3060.``) is a
record cite too, whatever its prefix.

Exhibit cites: ``Ex. 3 at 2``, ``Exh. 3, p. 4``, ``Exhibit C, p. 4``, ``Exhibit 12 at 3-4``, ``Ex. A``,
``Pl.'s Ex. C``, ``Def.'s Ex. 4 at 2``.

Docket cites (the court's CM/ECF numbering): ``ECF No. 31``, ``Doc. 45-2 at 7`` (entry 45, attachment 2,
page 7), ``Dkt. 12 at 3``, ``ECF No. 31, PageID.412`` (the page-ID stamp of the Sixth Circuit's district courts).

Record documents cited by name and paragraph: ``Compl. ¶ 12``, ``Am. Compl. ¶¶ 3–5``, ``Smith Decl. ¶ 4``,
``Answer ¶ 7``; which exhibit is the "Compl." is set on the exhibit (its "cites as" value).
"""

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class BatesMention:
    """``prefix`` as written (``SMITH``, ``SMITH_``), ``first``/``last`` numbers (equal for one page), ``digits``
    the zero-padded width written; ``known_prefix`` whether a production of the matter uses the prefix."""

    start: int
    end: int
    text: str
    prefix: str
    first: int
    last: int
    digits: int
    known_prefix: bool

    def bates(self, number: int) -> str:
        return f"{self.prefix}{number:0{self.digits}d}"

    def forms(self, number: int) -> list[str]:
        """The Bates numbers ``number`` of this mention may be recorded as, most likely first: as written
        (``SMITH_000123``), with a space (``SMITH 000123``), and without the separator written between prefix and
        digits (``SMITH000123``). The one reading of a written Bates number that the verifier and the search box
        share."""
        digits = f"{number:0{self.digits}d}"
        bare = self.prefix.rstrip(" ")
        return list(dict.fromkeys([self.bates(number), f"{bare}{digits}", f"{bare} {digits}",
                                   f"{bare.rstrip('-_ ')}{digits}"]))


@dataclass(frozen=True)
class ExhibitMention:
    """``label`` as written (``3``, ``C``); ``first_page``/``last_page`` None when no page is given."""

    start: int
    end: int
    text: str
    label: str
    first_page: int | None
    last_page: int | None


# The lookahead names the first character, which lets the scan skip to it (``re`` cannot from a ``\b``).
_GENERIC = re.compile(r"(?=[A-Z])\b(?P<prefix>[A-Z][A-Z&]{1,14}(?:[-_][A-Z]{1,10})*[-_ ]?)(?P<num>\d{3,12})\b")
_RANGE_TAIL = r"(?:\s*[-–—]\s*|\s+(?:through|thru|to)\s+)(?:(?P<prefix2>{prefix})\s?)?(?P<num2>\d{{1,12}})\b"
_CONTEXT_BEFORE = re.compile(r"(\bsee(?:\s+also)?|\bat|\bcf\.|\bbates(?:\s+no\.?)?|\(|\[|;|\bcites?|\baccord|"
                             r"\be\.g\.,?|\bcompare|\bcontra|\bbut\s+see)\s*$", re.IGNORECASE)
# A citation sentence of its own: after the end of a sentence (or at the start of the text) ...
_SENTENCE_BEFORE = re.compile(r"(?:^|[.!?][\"”’')\]]*\s+)$")
# ... and ending where the token (or range) does.
_SENTENCE_AFTER = re.compile(r"\s*(?:[.;]|$)")


# Record cites that are not Bates numbers: docket entries, joint appendix, excerpts of record, record on appeal,
# administrative record, transcripts.
_NOT_BATES = {"ECF", "DKT", "DOC", "JA", "ER", "SER", "ROA", "AR", "CR", "TR", "RP", "CP", "APP", "PA", "SA", "RA"}


@lru_cache(maxsize=256)
def _range_tail(prefix: str) -> re.Pattern:
    """The pattern of a range's second half after a number with ``prefix``; a draft uses a handful of prefixes
    thousands of times, and building the pattern's source and looking it up in ``re``'s cache for each cost more
    than the match."""
    return re.compile(_RANGE_TAIL.format(prefix=re.escape(prefix.rstrip(" "))))


def _range_end(text: str, end: int, prefix: str) -> re.Match | None:
    return _range_tail(prefix).match(text, end)


def find_bates(text: str, known_prefixes: set[str]) -> list[BatesMention]:
    """Every Bates number or range in ``text``. ``known_prefixes`` are the prefixes the matter's productions use
    (compared without a trailing space, so ``SMITH 000123`` matches prefix ``SMITH``)."""
    known = {p.strip() for p in known_prefixes if p.strip()}
    found: list[BatesMention] = []
    for match in _GENERIC.finditer(text):
        if found and match.start() < found[-1].end:
            continue  # the second half of a range already read
        prefix, number = match.group("prefix"), match.group("num")
        is_known = prefix.strip() in known or prefix.rstrip(" ") in known
        tail = _range_end(text, match.end(), prefix)
        before = text[max(0, match.start() - 14):match.start()]
        if not is_known:
            if prefix.strip(" -_") in _NOT_BATES:
                continue
            alone = _SENTENCE_BEFORE.search(text[max(0, match.start() - 6):match.start()]) is not None and (
                _SENTENCE_AFTER.match(text, tail.end() if tail else match.end()) is not None)
            if not (len(number) >= 6 or alone or (len(number) >= 4 and (tail or _CONTEXT_BEFORE.search(before)))):
                continue
        first = int(number)
        last = first
        end = match.end()
        if tail:
            written = tail.group("num2")
            if tail.group("prefix2") or len(written) >= len(number):
                last = int(written)
            else:
                # SMITH000123-125: the written digits replace the end of the first number.
                last = int(number[: len(number) - len(written)] + written)
            end = tail.end()
        found.append(BatesMention(match.start(), end, text[match.start():end], prefix.rstrip(" "), first, last,
                                  len(number), is_known))
    return found


_EXHIBIT = re.compile(
    r"(?:\b(?:Pls?|Defs?|Resp|Pet|Gov|Govt)(?:\.|s\.)?['’]?s?\.?\s+|\b(?:Plaintiffs?|Defendants?)['’]s?\s+)?"
    r"\b(?:Exhibits?|Exhs?\.|Exs?\.)\s+(?P<label>\d{1,4}|[A-Z]{1,3})\b"
    r"(?:\s*(?:,\s*)?(?:at\s+|pp?\.\s*|pages?\s+)(?P<first>\d{1,5})(?:\s*[-–—]\s*(?P<last>\d{1,5}))?)?"
)


def find_exhibit_cites(text: str) -> list[ExhibitMention]:
    """Every exhibit cite in ``text``, with its page or page range when one is given."""
    found = []
    if "Ex" not in text:
        return found  # every form names "Exhibit", "Exh." or "Ex."
    for match in _EXHIBIT.finditer(text):
        first = int(match.group("first")) if match.group("first") else None
        last = int(match.group("last")) if match.group("last") else first
        found.append(ExhibitMention(match.start(), match.end(), match.group(0), match.group("label"), first, last))
    return found


@dataclass(frozen=True)
class DocketMention:
    """A docket cite: ``entry`` (``45``), ``attachment`` (``2``, or ''), the pages cited (``first_page``/
    ``last_page``, None when none) and the PageID stamps cited (``first_id``/``last_id``, None when none)."""

    start: int
    end: int
    text: str
    entry: str
    attachment: str
    first_page: int | None
    last_page: int | None
    first_id: int | None = None
    last_id: int | None = None

    @property
    def key(self) -> str:
        return f"{self.entry}-{self.attachment}" if self.attachment else self.entry


_DOCKET = re.compile(
    r"\b(?:ECF|Dkt\.?|Doc\.?|D\.\s?E\.)\s*(?:No\.?|#)?\s*(?P<entry>\d{1,6})(?:-(?P<att>\d{1,3}))?(?![\d/])"
    r"(?:\s*(?:,\s*)?(?:at\s+|pp?\.\s*)(?P<first>\d{1,5})(?:\s*[-–—]\s*(?P<last>\d{1,5}))?)?"
    r"(?:,?\s*Page\s?ID(?:\.|\s*#:?\s*)(?P<id>\d{1,8})(?:\s*[-–—]\s*(?P<id2>\d{1,8}))?)?"
)


# What every docket cite holds, searched first: most paragraphs cite no docket entry.
_DOCKET_WORD = re.compile(r"ECF|Dkt|Doc|D\.\s?E\.")


def docket_key(text: str) -> str | None:
    """The docket entry a "cites as" value names (``ECF No. 45-2`` -> ``45-2``), or None."""
    match = _DOCKET.search(text or "")
    if match is None:
        return None
    return f"{match.group('entry')}-{match.group('att')}" if match.group("att") else match.group("entry")


def find_docket_cites(text: str) -> list[DocketMention]:
    """Every docket cite in ``text`` with its pages and PageID stamps."""
    found = []
    if not _DOCKET_WORD.search(text):
        return found
    for match in _DOCKET.finditer(text):
        first = int(match.group("first")) if match.group("first") else None
        last = int(match.group("last")) if match.group("last") else first
        first_id = int(match.group("id")) if match.group("id") else None
        last_id = int(match.group("id2")) if match.group("id2") else first_id
        found.append(DocketMention(match.start(), match.end(), match.group(0), match.group("entry"),
                                   match.group("att") or "", first, last, first_id, last_id))
    return found


@dataclass(frozen=True)
class PleadingMention:
    """A record document cited by name and paragraph: ``document`` as written (``Am. Compl.``),
    ``first``/``last`` paragraph numbers."""

    start: int
    end: int
    text: str
    document: str
    first: int
    last: int

    @property
    def key(self) -> str:
        return pleading_key(self.document)


_PLEADING = re.compile(
    r"(?P<document>(?:\b(?:[A-Z][a-z]+\.?|[A-Z]\.|2d|3d|First|Second|Third)\s+){0,3}"
    r"\b(?:Compl|Countercl|Answer|Decl|Aff|Pet|Mot|Opp['’]n|Mem)\.?)\s*¶¶?\s*(?P<first>\d{1,4})"
    r"(?:\s*[-–—]\s*(?P<last>\d{1,4}))?"
)


def pleading_key(name: str) -> str:
    """``Am. Compl.`` -> ``amcompl``: letters of the name, lower case, without a leading "The"."""
    words = re.findall(r"[A-Za-z0-9]+", name)
    if words and words[0].lower() == "the":
        words = words[1:]
    return "".join(w.lower() for w in words)


def find_pleading_cites(text: str) -> list[PleadingMention]:
    """Every record document cited by name and paragraph (``Compl. ¶ 12``) in ``text``."""
    found = []
    if "¶" not in text:
        return found
    for match in _PLEADING.finditer(text):
        document = match.group("document")
        offset = 4 if document.startswith("The ") else 0
        first = int(match.group("first"))
        last = int(match.group("last")) if match.group("last") else first
        found.append(PleadingMention(match.start() + offset, match.end(), match.group(0)[offset:],
                                     document[offset:], first, last))
    return found
