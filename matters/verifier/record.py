"""Record citations in text: Bates numbers and ranges, and exhibit cites.

Bates forms: ``SMITH000123``, ``SMITH 000123``, ``SMITH_000123``, ranges ``SMITH000123-125``,
``SMITH000123–SMITH000125``, ``SMITH000123 through SMITH000125``. A token is read as a Bates number when its
prefix is one the matter's productions (outgoing or incoming) use, or, for an unknown prefix, when it is written
where a record cite goes (after ``see``, ``at``, ``cf.``, an opening parenthesis, or in a range) or has six or more
digits: so an invented number, or a graphics card's model number put where a Bates number belongs, is caught.

Exhibit cites: ``Ex. 3 at 2``, ``Exh. 3, p. 4``, ``Exhibit C, p. 4``, ``Exhibit 12 at 3-4``, ``Ex. A``.
"""

import re
from dataclasses import dataclass


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


@dataclass(frozen=True)
class ExhibitMention:
    """``label`` as written (``3``, ``C``); ``first_page``/``last_page`` None when no page is given."""

    start: int
    end: int
    text: str
    label: str
    first_page: int | None
    last_page: int | None


_GENERIC = re.compile(r"\b(?P<prefix>[A-Z][A-Z&]{1,14}(?:[-_][A-Z]{1,10})*[-_ ]?)(?P<num>\d{3,12})\b")
_RANGE_TAIL = r"(?:\s*[-–—]\s*|\s+(?:through|thru|to)\s+)(?:(?P<prefix2>{prefix})\s?)?(?P<num2>\d{{1,12}})\b"
_CONTEXT_BEFORE = re.compile(r"(\bsee(?:\s+also)?|\bat|\bcf\.|\bbates(?:\s+no\.?)?|\(|\[|;|\bcites?)\s*$",
                             re.IGNORECASE)


# Record cites that are not Bates numbers: docket entries, joint appendix, excerpts of record, record on appeal,
# administrative record, transcripts.
_NOT_BATES = {"ECF", "DKT", "DOC", "JA", "ER", "SER", "ROA", "AR", "CR", "TR", "RP", "CP", "APP", "PA", "SA", "RA"}


def _range_end(text: str, end: int, prefix: str) -> re.Match | None:
    pattern = re.compile(_RANGE_TAIL.format(prefix=re.escape(prefix.rstrip(" "))))
    return pattern.match(text, end)


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
            if not (len(number) >= 6 or (len(number) >= 4 and (tail or _CONTEXT_BEFORE.search(before)))):
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
    r"\b(?:Exhibits?|Exhs?\.|Exs?\.)\s+(?P<label>\d{1,4}|[A-Z]{1,3})\b"
    r"(?:\s*(?:,\s*)?(?:at\s+|pp?\.\s*|pages?\s+)(?P<first>\d{1,5})(?:\s*[-–]\s*(?P<last>\d{1,5}))?)?"
)


def find_exhibit_cites(text: str) -> list[ExhibitMention]:
    """Every exhibit cite in ``text``, with its page or page range when one is given."""
    found = []
    for match in _EXHIBIT.finditer(text):
        first = int(match.group("first")) if match.group("first") else None
        last = int(match.group("last")) if match.group("last") else first
        found.append(ExhibitMention(match.start(), match.end(), match.group(0), match.group("label"), first, last))
    return found
