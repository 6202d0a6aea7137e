"""A draft read a paragraph at a time: what each paragraph mentions, read once and kept while its text is unchanged.

A brief is edited paragraph by paragraph, and reading a paragraph (eyecite's tokenizer, the date, amount and
statute readers, the sentence splitter) is most of a verification's cost. Every claim lies inside one paragraph:
a citation, date, amount or quotation never runs across a blank line (a quotation is never cut: see
:func:`paragraph_spans`). So :func:`read_paragraph` reads one paragraph, with offsets into it, and its result
depends only on the paragraph's text, the matter's reading settings (:class:`ReadingSettings`) and the little it
reads from the paragraphs before it (:class:`Before`: a set of rules, a statute, a full date's year); it is kept
in a bounded cache under exactly those. What depends on
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
from .dates import _YEARLESS, DateMention, find_dates
from .money import AmountMention, find_amounts, find_unreadable_amounts
from .quotes import CURLY_QUOTATION, STRAIGHT_QUOTATION, QuoteMention, QuoteSearch, find_quotations, prepare
from .record import find_bates, find_docket_cites, find_exhibit_cites, find_pleading_cites
from .statutes import StatuteMention, UnreadableCite, read_statutes
from .text import Sentence, Spans, flatten, sentences
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
    # Straight quotation marks pair within a line as the quotation reader reads them: on the text flattened, so a
    # straight-quoted passage over a blank line is one quotation too.
    flat = flatten(text) if '"' in text else ""
    quoted = Spans([*(m.span() for m in CURLY_QUOTATION.finditer(text) if "\u201c" in text),
                    *(m.span() for m in STRAIGHT_QUOTATION.finditer(flat))])
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
    (``Matter.date_order``, ``Matter.number_format``), its court (which rules a bare "Rule 56" is read as), the
    Bates prefixes its productions use, and the year."""

    date_order: str
    number_format: str
    court: str
    bates_prefixes: frozenset[str]
    year: int  # today's: a two-digit year is read against it (matters.drafts.verifier.dates)


@dataclass(frozen=True)
class Before:
    """What a paragraph may read from the paragraphs before it: the set of rules last named (a bare ``Rule 12(c)``
    is read as it), the last statute cited as ``(title, code, form)`` (a bare ``§ 1441(b)``, or ``Id. §
    1441(b)``, is a section of it), and the last full date of the two paragraphs before, as ``(text, ISO date)``
    (a date written without a year takes its year). :meth:`used_by` keeps only what a paragraph's text could use,
    so a paragraph is read again, and checked again, only when what it uses changes."""

    rules: str = ""
    statute: tuple[str, str, str] | None = None
    date: tuple[str, str] | None = None
    date_age: int = 0  # paragraphs since the one holding ``date``

    def used_by(self, flat: str) -> "Before":
        rules, section, yearless = paragraphs.uses(flat)
        return Before(self.rules if rules else "", self.statute if section else None,
                      self.date if yearless else None)

    def after(self, paragraph: "Paragraph") -> "Before":
        date, age = paragraph.last_date, 0
        if date is None:
            date, age = (self.date, self.date_age + 1) if self.date_age < 1 else (None, 0)
        return Before(paragraph.last_rules or self.rules, paragraph.last_statute or self.statute, date, age)


_BARE_RULE = re.compile(r"\bRules?\s+\d")
_WORD = re.compile(r"[A-Za-z]{2,}")


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
    # What the paragraphs after it may read (Before): the set of rules it names last, its last statute, its last
    # full date.
    last_rules: str = ""
    last_statute: tuple[str, str, str] | None = None
    last_date: tuple[str, str] | None = None


def read_paragraph(flat: str, settings: ReadingSettings, before: Before = Before()) -> Paragraph:
    """Read one paragraph (line breaks flattened to spaces, :func:`matters.drafts.verifier.text.flatten`).

    A citation inside a quotation is part of what is quoted (checked with the quotation), not the draft's own;
    quoted words too few to be a quotation (a term in quotation marks) keep their cites as the draft's. Dates and
    amounts inside a citation or a quotation are not claims of their own."""
    citations = eyecite_citations(flat)
    quotes = find_quotations(flat)
    quoted = [(q.start, q.end) for q in quotes if q.word_count >= MIN_UNCITED_QUOTE_WORDS]
    in_quotes = Spans(quoted)
    statutes, unreadable_cites = read_statutes(flat, citations, settings.court, before.rules, before.statute)
    # Every reader reads the whole paragraph; a case citation's name never reaches back over what another read.
    found_dockets, found_pleadings = find_docket_cites(flat), find_pleading_cites(flat)
    found_bates, found_exhibits = find_bates(flat, set(settings.bates_prefixes)), find_exhibit_cites(flat)
    found_transcripts = find_transcript_cites(flat)
    stops = Spans((m.start, m.end) for m in (*statutes, *unreadable_cites, *found_dockets, *found_pleadings,
                                             *found_bates, *found_exhibits, *found_transcripts))
    cases = [c for c in read_case_citations(flat, citations, stops) if not in_quotes.overlaps(c.start, c.end)]
    # "Id. § 1028A(c)" after a statute is that statute's short form, not a case's: an Id. with no pin of its own
    # right before a bare section. ("Id. at 622, Fed. R. Civ. P. 56." is a case's Id. and a rule cited after it.)
    section_starts = sorted(s.start for s in statutes if s.form == "short")
    for case in cases:
        if case.form != "id" or case.pin_cite:
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
    dockets = [d for d in found_dockets if not taken.overlaps(d.start, d.end)]
    pleadings = [p for p in found_pleadings if not taken.overlaps(p.start, p.end)]
    taken = Spans(authority_spans + quoted + [(u.start, u.end) for u in unreadable_cites]
                  + [(d.start, d.end) for d in dockets] + [(p.start, p.end) for p in pleadings])
    bates = [b for b in found_bates if not taken.overlaps(b.start, b.end)]
    exhibits = [e for e in found_exhibits if not taken.overlaps(e.start, e.end)]
    records: list = sorted(bates + exhibits + dockets + pleadings, key=lambda r: r.start)
    transcripts = [t for t in found_transcripts if not taken.overlaps(t.start, t.end)]
    cite_spans = (authority_spans + [(r.start, r.end) for r in records]
                  + [(u.start, u.end) for u in unreadable_cites] + [(t.start, t.end) for t in transcripts])
    skip = Spans(cite_spans + [(q.start, q.end) for q in quotes])
    every_date = find_dates(flat, settings.date_order, yearless=True, year_before=before.date)
    dates = [d for d in every_date if not skip.overlaps(d.start, d.end)]
    amounts = [a for a in find_amounts(flat, settings.number_format) if not skip.overlaps(a.start, a.end)]
    unreadable_amounts = [u for u in find_unreadable_amounts(flat, amounts) if not skip.overlaps(u[0], u[1])]
    spans = sentences(flat)
    paragraph = Paragraph(citations, cases, statutes, unreadable_cites, quotes, records, transcripts, cite_spans,
                          dates, amounts, unreadable_amounts, spans)
    paragraph.searches = [prepare(q.inner) for q in quotes]
    rules = [m for m in statutes if m.form == "rule" and not m.code.endswith("L.R.")]
    paragraph.last_rules = rules[-1].code if rules else ""
    cited = [m for m in statutes if m.form != "short"]
    paragraph.last_statute = (cited[-1].title, cited[-1].code, cited[-1].form) if cited else None
    full = [d for d in every_date if not d.year_from and not d.problem and d.readings]
    paragraph.last_date = (full[-1].text, full[-1].readings[0]) if full else None
    paragraph.orders = {d.written_order: d.text for d in dates if d.written_order}
    starts = [s.start for s in spans]
    cites_in: dict[int, list[tuple[int, int]]] = {}
    for span in cite_spans:
        cites_in.setdefault(max(0, bisect.bisect_right(starts, span[0]) - 1), []).append(span)
    paragraph.citation_only = {i for i, spans_in in cites_in.items()
                               if spans and _citation_only(flat, spans[i].start, spans[i].end, spans_in)}
    if 0 in paragraph.citation_only and not _may_cite_for_the_paragraph_before(flat, spans[0]):
        paragraph.citation_only.discard(0)
    return paragraph


# An outline heading's marker: "A.", "II.", "3.", "(b)" and a space.
_HEADING = re.compile(r"\s*(?:[IVXLC]+|[A-Z]|\d{1,2}|\([a-z0-9]{1,3}\))[.)]\s")


def _may_cite_for_the_paragraph_before(flat: str, sentence: Sentence) -> bool:
    """Whether a paragraph opening with a citation sentence gives that citation to the paragraph before it, as a
    citation set on its own line after a block quotation does ("Ex. 7 at 8."): it ends as a sentence does and is
    no heading ("A. 28 U.S.C. § 1332", which names what follows, not what went before)."""
    return flat[sentence.start:sentence.end].rstrip()[-1:] in ".?!)]”\"'’" and not _HEADING.match(flat)


def _citation_only(flat: str, start: int, end: int, cite_spans: list[tuple[int, int]]) -> bool:
    chars = list(flat[start:end])
    for s, e in cite_spans:
        for i in range(max(s, start), min(e, end)):
            chars[i - start] = " "
    rest = _SIGNALS.sub(" ", "".join(chars))
    has_cite = any(s < end and start < e for s, e in cite_spans)
    return has_cite and _WORD.search(rest) is None


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
        self._items: OrderedDict[tuple[str, ReadingSettings, Before], Paragraph] = OrderedDict()
        self._uses: dict[str, tuple[bool, bool, bool]] = {}
        self._lock = threading.Lock()

    def get(self, flat: str, settings: ReadingSettings, before: Before = Before()) -> Paragraph:
        """``flat`` read (:func:`read_paragraph`) with ``before``, which must be only what ``flat`` uses of what
        comes before it (:meth:`Before.used_by`)."""
        key = (flat, settings, before)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        paragraph = read_paragraph(flat, settings, before)
        with self._lock:
            self._items[key] = paragraph
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return paragraph

    def uses(self, flat: str) -> tuple[bool, bool, bool]:
        """Whether ``flat`` holds a bare rule number, a section sign and a date without a year: what it could
        read from the paragraphs before it. Kept by text (asked of every paragraph on every verification)."""
        found = self._uses.get(flat)
        if found is None:
            found = (bool(_BARE_RULE.search(flat)), "§" in flat, bool(_YEARLESS.search(flat)))
            with self._lock:
                if len(self._uses) >= self.size:
                    self._uses.clear()
                self._uses[flat] = found
        return found

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._uses.clear()


paragraphs = _ParagraphCache(_CACHE_PARAGRAPHS)
