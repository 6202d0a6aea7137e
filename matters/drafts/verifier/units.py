"""A draft read a paragraph at a time: what each paragraph mentions, read once and kept while its text is unchanged.

A brief is edited paragraph by paragraph, and reading a paragraph (eyecite's tokenizer, the date, amount and
statute readers, the sentence splitter) is most of a verification's cost. Every claim lies inside one paragraph:
a citation, date, amount or quotation never runs across a blank line. So :func:`read_paragraph` reads one
paragraph alone, with offsets into it, and its result depends only on the paragraph's text and the matter's
reading settings (:class:`ReadingSettings`); it is kept in a bounded cache under exactly those. What depends on
other paragraphs (a short form's full citation, an ``Id.``, a citation sentence that supports the sentence before
it) is settled afterwards over the whole draft, in :class:`matters.drafts.verifier.check.Verification`.

Paragraphs are separated by a blank line (a line holding only spaces or tabs); a text without one is one
paragraph.
"""

import bisect
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from .check_quotes import MIN_UNCITED_QUOTE_WORDS
from .citations import CaseMention, eyecite_citations, read_case_citations
from .dates import DateMention, find_dates
from .money import AmountMention, find_amounts, find_unreadable_amounts
from .quotes import CURLY_QUOTATION, QuoteMention, QuoteSearch, find_quotations, prepare
from .record import find_bates, find_docket_cites, find_exhibit_cites, find_pleading_cites
from .statutes import StatuteMention, UnreadableCite, read_statutes
from .text import Sentence, Spans, sentences
from .transcripts import TranscriptMention, find_transcript_cites

_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_SIGNALS = re.compile(
    r"\b(?:see|also|cf|e\.g|accord|compare|with|and|id|at|generally|supra|infra|pp?|ex|exs?|exhibits?|"
    r"citing|quoting|but|contra|n|nn|bates|hereinafter|internal|quotation|marks|omitted|emphasis|added|"
    r"alteration|original|citations?)\b",
    re.IGNORECASE,
)


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each paragraph of ``text`` that holds more than white space, in order; the spans cover
    every non-blank character of ``text``. A blank line inside a quotation (one of several paragraphs, or a page's
    text quoted with its blank lines) does not end a paragraph: a quotation is read whole."""
    quoted = Spans(m.span() for m in CURLY_QUOTATION.finditer(text)) if "\u201c" in text else Spans()
    spans, start = [], 0
    for gap in _BLANK_LINE.finditer(text):
        if quoted.overlaps(gap.start(), gap.end()):
            continue
        if text[start:gap.start()].strip():
            spans.append((start, gap.start()))
        start = gap.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


@dataclass(frozen=True)
class ReadingSettings:
    """What reading a paragraph depends on besides its text: the matter's date order and number format
    (``Matter.date_order``, ``Matter.number_format``), its court (which rules a bare "Rule 56" is read as) and
    the Bates prefixes its productions use."""

    date_order: str
    number_format: str
    court: str
    bates_prefixes: frozenset[str]


@dataclass
class Paragraph:
    """What one paragraph mentions, offsets into the paragraph. ``cases`` are read but not resolved (a short
    form's ``antecedent`` is set over the whole draft); ``citations`` are eyecite's, for that resolution, and a
    case's ``source`` indexes them. ``records`` are Bates, exhibit, docket and pleading cites in order.
    ``citation_only``: indexes in ``sentences`` of the sentences that hold citations and nothing else (such a
    sentence supports the sentence before it). ``orders``: the numeric date orders written, with an example."""

    citations: list
    cases: list[CaseMention]
    statutes: list[StatuteMention]
    unreadable_cites: list[UnreadableCite]
    quotes: list[QuoteMention]
    records: list
    transcripts: list[TranscriptMention]
    cite_spans: list[tuple[int, int]]
    dates: list[DateMention]
    amounts: list[AmountMention]
    unreadable_amounts: list[tuple[int, int, str]]
    sentences: list[Sentence]
    citation_only: set[int] = field(default_factory=set)
    orders: dict[str, str] = field(default_factory=dict)
    searches: list[QuoteSearch] = field(default_factory=list)  # each quotation's words, as matched in page text


def read_paragraph(flat: str, settings: ReadingSettings) -> Paragraph:
    """Read one paragraph (line breaks flattened to spaces, :func:`matters.drafts.verifier.text.flatten`).

    A citation inside a quotation is part of what is quoted (checked with the quotation), not the draft's own;
    quoted words too few to be a quotation (a term in quotation marks) keep their cites as the draft's. Dates and
    amounts inside a citation or a quotation are not claims of their own."""
    citations = eyecite_citations(flat)
    quotes = find_quotations(flat)
    quoted = [(q.start, q.end) for q in quotes if q.word_count >= MIN_UNCITED_QUOTE_WORDS]
    in_quotes = Spans(quoted)
    cases = [c for c in read_case_citations(flat, citations) if not in_quotes.overlaps(c.start, c.end)]
    statutes, unreadable_cites = read_statutes(flat, citations, settings.court)
    # "Id. § 1028A(c)" after a statute is that statute's short form, not a case's.
    section_starts = sorted(s.start for s in statutes)
    for case in cases:
        if case.form != "id":
            continue
        after = case.end + len(flat[case.end:case.end + 4]) - len(flat[case.end:case.end + 4].lstrip(" ,"))
        i = bisect.bisect_left(section_starts, case.start)
        if i < len(section_starts) and section_starts[i] <= after:
            case.form = "statute_id"
    case_spans = Spans((c.start, c.end) for c in cases if c.form != "statute_id")
    statutes = [s for s in statutes if not in_quotes.overlaps(s.start, s.end)
                and not case_spans.overlaps(s.start, s.end)]
    unreadable_cites = [u for u in unreadable_cites if not in_quotes.overlaps(u.start, u.end)
                        and not case_spans.overlaps(u.start, u.end)]
    authority_spans = ([(c.start, c.end) for c in cases if c.form != "statute_id"]
                       + [(s.start, s.end) for s in statutes])
    taken = Spans(authority_spans + quoted + [(u.start, u.end) for u in unreadable_cites])
    dockets = [d for d in find_docket_cites(flat) if not taken.overlaps(d.start, d.end)]
    pleadings = [p for p in find_pleading_cites(flat) if not taken.overlaps(p.start, p.end)]
    taken = Spans(authority_spans + quoted + [(u.start, u.end) for u in unreadable_cites]
                  + [(d.start, d.end) for d in dockets] + [(p.start, p.end) for p in pleadings])
    bates = [b for b in find_bates(flat, set(settings.bates_prefixes)) if not taken.overlaps(b.start, b.end)]
    exhibits = [e for e in find_exhibit_cites(flat) if not taken.overlaps(e.start, e.end)]
    records: list = sorted(bates + exhibits + dockets + pleadings, key=lambda r: r.start)
    transcripts = [t for t in find_transcript_cites(flat) if not taken.overlaps(t.start, t.end)]
    cite_spans = (authority_spans + [(r.start, r.end) for r in records]
                  + [(u.start, u.end) for u in unreadable_cites] + [(t.start, t.end) for t in transcripts])
    skip = Spans(cite_spans + [(q.start, q.end) for q in quotes])
    dates = [d for d in find_dates(flat, settings.date_order, yearless=True) if not skip.overlaps(d.start, d.end)]
    amounts = [a for a in find_amounts(flat, settings.number_format) if not skip.overlaps(a.start, a.end)]
    unreadable_amounts = [u for u in find_unreadable_amounts(flat, amounts) if not skip.overlaps(u[0], u[1])]
    spans = sentences(flat)
    paragraph = Paragraph(citations, cases, statutes, unreadable_cites, quotes, records, transcripts, cite_spans,
                          dates, amounts, unreadable_amounts, spans)
    paragraph.searches = [prepare(q.inner) for q in quotes]
    paragraph.orders = {d.written_order: d.text for d in dates if d.written_order}
    starts = [s.start for s in spans]
    cites_in: dict[int, list[tuple[int, int]]] = {}
    for span in cite_spans:
        cites_in.setdefault(max(0, bisect.bisect_right(starts, span[0]) - 1), []).append(span)
    paragraph.citation_only = {i for i, spans_in in cites_in.items()
                               if spans and _citation_only(flat, spans[i].start, spans[i].end, spans_in)}
    return paragraph


def _citation_only(flat: str, start: int, end: int, cite_spans: list[tuple[int, int]]) -> bool:
    chars = list(flat[start:end])
    for s, e in cite_spans:
        for i in range(max(s, start), min(e, end)):
            chars[i - start] = " "
    rest = _SIGNALS.sub(" ", "".join(chars))
    has_cite = any(s < end and start < e for s, e in cite_spans)
    return has_cite and len(re.findall(r"[A-Za-z]{2,}", rest)) == 0


def shifted(mention, offset: int):
    """A copy of ``mention`` (any of the readers' mentions: dataclasses, frozen or not, without slots) moved
    ``offset`` characters on. Its fields are copied as they are, not passed through ``__init__`` again as
    ``dataclasses.replace`` does, which cost a 100-page brief a tenth of its checking time."""
    moved = object.__new__(type(mention))
    fields = moved.__dict__
    fields.update(mention.__dict__)
    fields["start"] += offset
    fields["end"] += offset
    return moved


# Paragraphs kept read: a 100-page brief has about a thousand; the office's open drafts a few times that.
_CACHE_PARAGRAPHS = 20_000


class _ParagraphCache:
    """Read paragraphs by ``(text, settings)``, least recently used dropped first. One per process, shared by
    threads (a lock around the dictionary; reading happens outside it)."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[tuple[str, ReadingSettings], Paragraph] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, flat: str, settings: ReadingSettings) -> Paragraph:
        key = (flat, settings)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        paragraph = read_paragraph(flat, settings)
        with self._lock:
            self._items[key] = paragraph
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return paragraph

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


paragraphs = _ParagraphCache(_CACHE_PARAGRAPHS)
