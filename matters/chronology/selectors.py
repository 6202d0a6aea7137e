"""The chronology of a matter as data: every dated fact on its evidence pages, in date order.

Which pages: those the verifier's index of dates (:class:`matters.models.PageFact`, kinds ``date`` and
``date_<order>``, filled by :mod:`matters.drafts.verifier.facts`) holds a date for, on the matter's evidence
(:func:`matters.selectors.evidence_exhibits`: never LawDesk's own output, never a digest or a draft). The index
keeps each day without its words, so those pages are read again with the same date reader
(:func:`matters.drafts.verifier.dates.find_dates`, without dates lacking a year, as the index reads them): one
entry per date as written, a range (``March 9–13, 2012``) as one entry from its first day to its last.
"""

import datetime as dt
import re
from dataclasses import asdict, dataclass

from matters.drafts.verifier.dates import DateMention, display, find_dates
from matters.drafts.verifier.facts import matter_index_facts
from matters.drafts.verifier.text import sentences
from matters.models import BatesPage, IncomingBatesPage, Matter, Page, PageFact, Production
from matters.selectors import evidence_exhibits

# Longest excerpt kept around a date, in characters: a sentence, else its line, else this window around it.
EXCERPT_CHARS = 300
_BATCH = 2000


@dataclass(frozen=True)
class DatedFact:
    """One date on an evidence page.

    ``start`` and ``end``: ISO days (``end == start`` for a single date; the last day of a range). ``written``:
    the date as the page writes it; ``qualifier``: ``on or about`` and the like, as written before it;
    ``other_reading``: for a numeric date whose day and month could swap (``03/04/2021``), the ISO day of the
    other order (``start`` is the matter's order), else ''. ``text``: the sentence around it (or its line, or
    :data:`EXCERPT_CHARS` around it), on one line. ``exhibit`` (id), ``label``, ``title``, ``page`` (number in
    the exhibit), ``page_id``, ``bates``: the page's Bates number where it has one, else ''. ``flagged``: the page
    may carry a prompt injection (never grounds a claim until an attorney clears it).
    """

    start: str
    end: str
    written: str
    qualifier: str
    other_reading: str
    text: str
    exhibit: int
    label: str
    title: str
    page: int
    page_id: int
    bates: str
    flagged: bool

    @property
    def is_range(self) -> bool:
        return self.end != self.start

    @property
    def when(self) -> str:
        """The date or range in words: ``March 9, 2012`` or ``March 9, 2012 – March 13, 2012``."""
        return display(self.start) if not self.is_range else f"{display(self.start)} – {display(self.end)}"

    def as_dict(self) -> dict:
        """The fact as JSON-ready data (the keys above)."""
        return asdict(self)


_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _excerpt(text: str, mention: DateMention, bounds) -> str:
    around = next(((s.start, s.end) for s in bounds if s.start <= mention.start < s.end), (0, len(text)))
    # A sentence ends at a blank line too (a letter's salutation, a heading): the sentence reader runs over them.
    before = [m.end() for m in _BLANK_LINE.finditer(text, around[0], mention.start)]
    after = _BLANK_LINE.search(text, mention.end, around[1])
    around = (before[-1] if before else around[0], after.start() if after else around[1])
    if around[1] - around[0] > EXCERPT_CHARS:
        line_start = text.rfind("\n", 0, mention.start) + 1
        line_end = text.find("\n", mention.end)
        around = (line_start, len(text) if line_end < 0 else line_end)
    if around[1] - around[0] > EXCERPT_CHARS:
        half = (EXCERPT_CHARS - (mention.end - mention.start)) // 2
        around = (max(0, mention.start - half), min(len(text), mention.end + half))
    return " ".join(text[around[0]:around[1]].split())


def _bates_of(page_ids: list[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for i in range(0, len(page_ids), _BATCH):
        batch = page_ids[i:i + _BATCH]
        for page_id, bates in IncomingBatesPage.objects.filter(page_id__in=batch).values_list("page_id", "bates"):
            found.setdefault(page_id, bates)
        for page_id, bates in BatesPage.objects.filter(page_id__in=batch, production__status=Production.Status.DONE
                                                       ).order_by("production_id").values_list("page_id", "bates"):
            found.setdefault(page_id, bates)
    return found


def matter_chronology(matter: Matter, *, exhibits: list[int] | None = None, start: dt.date | None = None,
                      end: dt.date | None = None) -> list[DatedFact]:
    """Every dated fact on ``matter``'s evidence pages, in date order (first day, then last day, then exhibit
    label, page and place on the page). ``exhibits``: only those exhibit ids; ``start``/``end``: only dates
    (or ranges) touching that span, both days included. Indexes first any evidence exhibit whose index of dates
    is missing or stale. Membership is the caller's to check."""
    matter_index_facts(matter)
    evidence = evidence_exhibits(matter)
    if exhibits:
        evidence = evidence.filter(pk__in=exhibits)
    facts = PageFact.objects.filter(page__exhibit__in=evidence, kind__in=["date", f"date_{matter.date_order}"])
    if start is not None:
        facts = facts.filter(value__gte=start.isoformat())
    if end is not None:
        facts = facts.filter(value__lte=end.isoformat())
    page_ids = sorted(set(facts.values_list("page_id", flat=True)))
    info = {e.pk: e for e in evidence.only("id", "label", "title", "label_seq", "origin")}
    bates = _bates_of(page_ids)
    low, high = (start.isoformat() if start else ""), (end.isoformat() if end else "9999")
    found: list[tuple[tuple, DatedFact]] = []
    for i in range(0, len(page_ids), _BATCH):
        rows = Page.objects.filter(pk__in=page_ids[i:i + _BATCH]).values_list(
            "id", "exhibit_id", "number", "text", "injection_reason", "injection_cleared_reason")
        for page_id, exhibit_id, number, text, injection, cleared in rows:
            exhibit = info[exhibit_id]
            bounds = None
            for mention in find_dates(text, matter.date_order):
                if mention.problem or not mention.readings:
                    continue
                first = mention.days[0] if mention.days else mention.readings[0]
                last = mention.days[-1] if mention.days else first
                if last < low or first > high:
                    continue
                if bounds is None:
                    bounds = sentences(text)
                other = mention.readings[1] if mention.ambiguous and not mention.days else ""
                fact = DatedFact(first, last, " ".join(mention.text.split()), mention.qualifier, other,
                                 _excerpt(text, mention, bounds), exhibit_id, exhibit.display_label,
                                 exhibit.title, number, page_id, bates.get(page_id, ""),
                                 bool(injection) and not cleared)
                found.append(((first, last, exhibit.label_seq or 0, exhibit_id, number, mention.start), fact))
    found.sort(key=lambda pair: pair[0])
    return [fact for _, fact in found]

