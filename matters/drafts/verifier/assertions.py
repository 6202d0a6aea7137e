"""Facts a model's text asserts with nothing to check them against.

A sentence of a model's version that names a person or a court, states a number or a span of years, or holds a
citation-shaped string outside the spans the verifier's readers found claims in (a date, an amount, a quotation),
and that cites no source (a record page, a case, a statute), would otherwise pass with no finding at all: "the
verifier found no claim to check". A checked claim exempts only its own span, never the whole sentence ("On March
3, 2021, Judge Harold Fakename granted the motion." still asserts a person). Each such sentence gets one finding:

- a citation-shaped string no reader knows (``346 Fictitious 12``: a volume, a name, a page) is ``unreadable``:
  it blocks until an attorney writes a citation LawDesk can check or waives it with a reason;
- any other such fact is ``needs_record_cite``: the sentence asserts it and cites nothing; the finding names
  what it asserts.

Only a model's text is read this way (:func:`matters.drafts.services.draft_verify`): an attorney's own draft
states the matter's parties and court in sentences that need no cite, and flagging them would be noise.
"""

import bisect
import re

from .finding import FindingData, Kind, Status
from .text import Spans, flatten, sentences

_ORDINAL_CIRCUIT = r"(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh|D\.C\.|Federal)"
_MONTHS = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov",
           "Dec"}
# What a sentence can assert, in the order a finding names it. Each pattern's source: the kinds a model invents
# when it has no record to cite (issue 27's planted drafts: a judge, an unknown reporter, a span of years, a
# hearing "in the next 2 days").
_ASSERTS: list[tuple[str, re.Pattern]] = [
    ("a citation-shaped string", re.compile(
        r"\b\d{1,4}\s+(?P<name>[A-Z][A-Za-z.]{2,}(?:\s[A-Z][A-Za-z.]*){0,2})\s+\d{1,5}\b")),
    ("a person", re.compile(
        r"\b(?:(?:Chief|Magistrate|District|Circuit|Bankruptcy)\s+)?(?:Judge|Justice|Hon\.|Honorable|Mr\.|Ms\.|"
        r"Mrs\.|Dr\.)\s+[A-Z][A-Za-z'’-]+")),
    ("a court", re.compile(
        r"\b(?:Supreme|Superior|District|Circuit|Bankruptcy|Appellate|Chancery|Probate|Family|Tax|County|Municipal)"
        r"\s+Court\b|\bCourt\s+of\s+(?:Appeals?|Chancery|Federal\s+Claims)\b|\b" + _ORDINAL_CIRCUIT
        + r"\s+Circuit\b|\b\d{1,2}(?:st|nd|rd|th|d)\s+Cir\b")),
    ("a span of years", re.compile(
        r"\b(?:1[6-9]|20)\d\d\s*(?:[-–—]|\bto\b|\bthrough\b|\buntil\b)\s*(?:(?:1[6-9]|20)\d\d|\d\d)\b")),
    ("a number", re.compile(
        r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
        r"fifteen|twenty|thirty|forty|fifty|sixty|hundred|thousand|million)\s+(?:days?|weeks?|months?|years?|hours?|"
        r"times|people|persons|employees|witnesses|pages)\b", re.IGNORECASE)),
]


# Findings that cite a source: a sentence holding one (or followed by a citation sentence) cites what it asserts.
_CITES = {Kind.BATES_CITE, Kind.EXHIBIT_CITE, Kind.CASE_CITATION, Kind.STATUTE_CITATION}


def _asserts(sentence: str, checked: Spans) -> tuple[str, re.Match] | None:
    """The first fact ``sentence`` asserts outside ``checked`` (spans, relative to the sentence, that a finding
    covers: a date's digits are that date's claim, not a number asserted besides it)."""
    for what, pattern in _ASSERTS:
        for match in pattern.finditer(sentence):
            if what == "a citation-shaped string" and match.group("name").split()[0].rstrip(".") in _MONTHS:
                continue  # "12 March 2021" is a date, read as one
            if checked.overlaps(match.start(), match.end()):
                continue
            return what, match
    return None


def uncited_assertions(text: str, findings: list[FindingData]) -> list[FindingData]:
    """A finding for each sentence of ``text`` that asserts a fact (see the module docstring) outside the spans
    of ``findings`` (the verifier's findings of the same text) and cites nothing: no cite finding (a record page,
    a case, a statute) in it, nor a citation sentence after it. A date or amount checked in a sentence exempts
    only its own span: "On March 3, 2021, Judge Harold Fakename granted the motion." still asserts a person.
    Offsets are into ``text``."""
    flat = flatten(text)
    spans = sentences(text)
    claimed = Spans((f.start, f.end) for f in findings)
    cited = Spans((f.start, f.end) for f in findings if f.kind in _CITES)
    # The findings in order of start, looked up per sentence by bisection (a draft can hold thousands).
    ordered = sorted((f.start, f.end) for f in findings)
    starts = [s for s, _ in ordered]
    longest = max((e - s for s, e in ordered), default=0)
    out: list[FindingData] = []
    for i, sentence in enumerate(spans):
        if cited.overlaps(sentence.start, sentence.end):
            continue
        near = ordered[bisect.bisect_left(starts, sentence.start - longest):bisect.bisect_left(starts, sentence.end)]
        checked = Spans((max(s, sentence.start) - sentence.start, min(e, sentence.end) - sentence.start)
                        for s, e in near if sentence.start < e)
        found = _asserts(flat[sentence.start:sentence.end], checked)
        if found is None:
            continue
        nxt = spans[i + 1] if i + 1 < len(spans) else None
        if nxt is not None and claimed.overlaps(nxt.start, nxt.end) and _cites_only(flat, nxt, findings):
            continue
        what, match = found
        start, end = sentence.start + match.start(), sentence.start + match.end()
        if what == "a citation-shaped string":
            out.append(FindingData(
                Kind.CASE_CITATION, Status.UNREADABLE, start, end, text[start:end],
                f"“{text[start:end]}” is shaped like a citation (volume, reporter, page), but no reporter, code or "
                "record form LawDesk knows reads it, and the sentence cites nothing else: it may be invented. Write "
                "a citation LawDesk can check, or waive this finding with a reason.", [], {"asserts": what}))
            continue
        out.append(FindingData(
            Kind.EXHIBIT_CITE, Status.NEEDS_RECORD_CITE, sentence.start, sentence.end,
            text[sentence.start:sentence.end],
            f"This sentence of the model's text asserts {what} (“{match.group(0)}”) and cites nothing, so LawDesk "
            "had nothing to check it against. Cite the record page or authority that supports it, or remove it.",
            [], {"asserts": what, "value": match.group(0)}))
    return out


def _cites_only(flat: str, sentence, findings: list[FindingData]) -> bool:
    """Whether ``sentence`` is a citation sentence: its letters are (nearly) all inside findings."""
    inside = [(max(f.start, sentence.start), min(f.end, sentence.end)) for f in findings
              if f.start < sentence.end and sentence.start < f.end]
    covered = sum(max(0, e - s) for s, e in inside)
    letters = len(re.findall(r"\w", flat[sentence.start:sentence.end]))
    return bool(letters) and covered >= 0.6 * (sentence.end - sentence.start)
