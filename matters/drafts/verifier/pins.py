"""Pin cites checked against the authority itself.

A pin cite (``620``, ``620–21``, ``241—242``, ``*3``, ``¶ 52``) points into the cited opinion. It is checked
against what the authority exhibit shows of its own pagination:

- reporter star pages (``*621`` markers, as Westlaw and Lexis print them): the pin must lie between the
  opinion's first page and its last star page;
- reporter page numbers printed at the head of its pages (``614``, ``615``, ...): the pin must be one of them;
- paragraph numbers of a public-domain citation (``2022-NCSC-1, ¶ 52``): the opinion's paragraphs are numbered
  ``¶ 1`` ... at the start of each paragraph, and the pin must be one of them;
- a slip opinion (``Cite as: 569 U. S. ____``) has only its own page numbers (1 to N); a pin to the reporter's
  pages cannot be checked against it, and the finding says so.

An exhibit whose printed reporter pages start at the opinion's first page may be an excerpt (the pages a brief
relied on): a pin to a page it does not hold is "cannot check", not outside the opinion, since nothing in it
says where the opinion ends. Whatever the pagination, a pin before the opinion's first page is outside it.
Where the exhibit shows no reporter pagination (a slip opinion, an opinion printed from a court's site), a pin to
the reporter's pages cannot be checked: the finding (``pin_unchecked``) says so, with the reason, and does not
block. A page span guessed from the PDF's page
count is no measure of the reporter's pages (a slip opinion of 30 pages can run 40 reporter pages, or 20).
"""

import re
from dataclasses import dataclass

from .authorities import AuthorityDoc

_STAR = re.compile(r"(?<![\w*])\*(\d{1,5})\b")
_PARAGRAPH = re.compile(r"(?m)^\s*(?:¶\s*|\[)(\d{1,4})\]?(?=\s)")
_PIN_PART = re.compile(r"(?P<para>¶¶?\s*)?\*?(?P<first>\d{1,5})(?:\s*[-–—]\s*\*?(?P<last>\d{1,5}))?")


@dataclass(frozen=True)
class PinCheck:
    """``verdict``: ``ok`` (the pin is in the authority), ``outside`` (it cannot be), ``unchecked`` (the exhibit
    shows no pagination to check it against, or does not hold the page); ``message`` says which and why, for an
    attorney."""

    verdict: str
    message: str


def pin_numbers(pin: str) -> list[tuple[str, int, int]]:
    """``620–21, 625`` -> ``[("page", 620, 621), ("page", 625, 625)]``; ``¶ 52`` -> ``[("para", 52, 52)]``.
    A short second number of a range takes the first one's leading digits (``241-42`` is 241 to 242)."""
    parts = []
    for match in _PIN_PART.finditer(pin or ""):
        first = int(match.group("first"))
        last = first
        if match.group("last"):
            written = match.group("last")
            head = match.group("first")
            last = int(head[: len(head) - len(written)] + written) if len(written) < len(head) else int(written)
        parts.append(("para" if match.group("para") else "page", first, max(first, last)))
    return parts


def _memo(doc: AuthorityDoc, key: str, make):
    """``make(doc)`` computed once per authority per verification (kept on the document)."""
    cache = doc.__dict__.setdefault("_pins", {})
    if key not in cache:
        cache[key] = make(doc)
    return cache[key]


def _paragraphs(doc: AuthorityDoc) -> frozenset[int]:
    return _memo(doc, "paragraphs", lambda d: frozenset(
        int(n) for n in _PARAGRAPH.findall("\n".join(t for _, _, t in d.pages))))


def _stars(doc: AuthorityDoc) -> frozenset[int]:
    return _memo(doc, "stars", lambda d: frozenset(int(n) for n in _STAR.findall("\n".join(t for _, _, t in d.pages))))


def _printed_numbers(doc: AuthorityDoc) -> list[int]:
    return _memo(doc, "printed", _read_printed_numbers)


def _read_printed_numbers(doc: AuthorityDoc) -> list[int]:
    """The number standing alone on the first or last non-blank line of each page, where one does."""
    numbers = []
    for _, _, text in doc.pages:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        for line in (lines[:1] + lines[-1:]):
            if re.fullmatch(r"\d{1,5}", line):
                numbers.append(int(line))
                break
    return numbers


def check_pin(pin: str, first_page: str, doc: AuthorityDoc, cite: str) -> PinCheck | None:
    """Check ``pin`` (as written after the citation) of the opinion ``cite`` that starts at reporter page
    ``first_page``, against the authority exhibit ``doc``; None when there is no pin."""
    parts = pin_numbers(pin)
    if not parts:
        return None
    where = f"Exhibit {doc.label}"
    paragraphs = [p for p in parts if p[0] == "para"]
    if paragraphs:
        numbers = _paragraphs(doc)
        if not numbers:
            return PinCheck("unchecked", f"Pin cite ¶ {paragraphs[0][1]} not checked: {where} shows no numbered "
                                         "paragraphs.")
        for _, low, high in paragraphs:
            if high > max(numbers):
                return PinCheck("outside", f"Pin cite ¶ {high} is outside the opinion: {where} has paragraphs "
                                           f"¶ 1–{max(numbers)}.")
        return PinCheck("ok", f"Pin cite ¶ {paragraphs[0][1]} is a paragraph of {where}.")
    pages = [p for p in parts if p[0] == "page"]
    count = len(doc.pages)
    if re.search(r"slip\s+op", pin, re.IGNORECASE):
        # Pinned to the slip opinion's own pages: the exhibit's page count (or its printed numbers) bound them.
        printed = set(_printed_numbers(doc))
        for _, low, high in pages:
            if high > count or (printed and high not in printed):
                return PinCheck("outside", f"Pin cite slip op. at {high} is outside the opinion: {where} has "
                                           f"{count} page(s).")
        return PinCheck("ok", f"Pin cite {pin} is a page of the slip opinion, {where}.")
    start = int(first_page) if first_page.isdigit() else None
    slip = bool(re.search(r"_{2,}|slip\s+op", doc.own, re.IGNORECASE))
    for _, low, high in pages:
        if start is not None and low < start:
            return PinCheck("outside", f"Pin cite {low} is before the opinion's first page ({cite} starts at "
                                       f"{start}).")
    shown = " ".join(f"{low}–{high}" if high != low else str(low) for _, low, high in pages)
    # Star pages are the reporter's only from the first page on: an asterisk before a smaller number is a
    # footnote mark or the like ("*8" in a slip opinion), not a page of the reporter.
    stars = frozenset(n for n in _stars(doc) if start is not None and n >= start)
    if stars and start is not None:
        last = max(stars)
        for _, low, high in pages:
            if high > last:
                return PinCheck("outside", f"Pin cite {high} is outside the opinion: {where}'s star pages run "
                                           f"{start}–{last}.")
        return PinCheck("ok", f"Pin cite {shown} is within the opinion's star pages ({start}–{last}).")
    printed = _printed_numbers(doc)
    if start is not None and printed and start in printed:
        missing = [n for _, low, high in pages for n in range(low, high + 1) if n not in printed]
        if missing:
            return PinCheck("unchecked", f"Pin cite {missing[0]} not checked: {where} holds printed pages "
                                         f"{min(printed)}–{max(printed)} only, not that page (it may be an excerpt "
                                         "of the opinion); check the pin in the reporter.")
        return PinCheck("ok", f"Pin cite {shown} is a printed page of {where}.")
    if slip:
        return PinCheck("unchecked", f"Pin cite {shown} not checked: {where} is a slip opinion, numbered 1–{count}, "
                                     "not in the reporter's pages; check the pin in the reporter.")
    return PinCheck("unchecked", f"Pin cite {shown} not checked: {where} shows neither the reporter's page "
                                 "numbers nor star pages.")
