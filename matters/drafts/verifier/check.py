"""The verifier: every citation, record cite, date, amount and quotation of a draft, checked against the matter.

Deterministic (no model). :func:`verify_text` returns one :class:`FindingData` per claim, ``grounded`` ones
included, so a report shows what was checked and not only what failed. Statuses as in docs/glossary.md:

- a record cite (Bates number or exhibit and page) must name a page of the matter's evidence; the dates, amounts
  and quotations of the sentence it supports must be on the page(s) it names;
- a date, amount or quotation with no record cite is ``ungrounded`` when it is nowhere in the evidence and
  ``needs_record_cite`` (naming the pages) when it is somewhere;
- a case or statute citation must match an authority of the matter, and a quotation attributed to it must be in
  that authority; otherwise ``unverified_authority``;
- a record cite in a citation sentence of its own (``Fact. SMITH000123.`` or ``Fact. (Ex. 3 at 2.)``) supports
  the sentence before it, as legal writing places it.
"""

import bisect
import re

from matters.models import BatesPage, Exhibit, IncomingBatesPage, Matter, Page

from .authorities import AuthorityDoc, authorities_of
from .check_authorities import AuthorityChecks
from .check_facts import FactChecks
from .check_quotes import MIN_UNCITED_QUOTE_WORDS, QuoteChecks
from .check_records import MAX_RANGE_PAGES, RecordChecks
from .citations import eyecite_citations, find_case_citations
from .dates import DateMention, find_dates
from .evidence import Evidence
from .finding import FindingData, Kind, Status, Support
from .money import AmountMention, find_amounts, find_unreadable_amounts
from .quotes import find_quotations, prepare
from .reading_notes import add_reading_notes
from .record import BatesMention, find_bates, find_docket_cites, find_exhibit_cites, find_pleading_cites
from .statutes import read_statutes
from .text import Spans, flatten, sentences
from .transcripts import check_transcript_cite, find_transcript_cites, narrow_to_lines, supported_facts

__all__ = ["FindingData", "Verification", "verify_text"]
_SIGNALS = re.compile(
    r"\b(?:see|also|cf|e\.g|accord|compare|with|and|id|at|generally|supra|infra|pp?|ex|exs?|exhibits?|"
    r"citing|quoting|but|contra|n|nn|bates|hereinafter|internal|quotation|marks|omitted|emphasis|added|"
    r"alteration|original|citations?)\b",
    re.IGNORECASE,
)


class Verification(RecordChecks, AuthorityChecks, FactChecks, QuoteChecks):
    """One verification of one text against one matter. Use :func:`verify_text`."""

    def __init__(self, matter: Matter, text: str):
        self.matter = matter
        self.text = text
        self.flat = flatten(text)
        self.evidence = Evidence(matter)
        self._authorities: list[AuthorityDoc] | None = None
        self._doc_facts: dict[tuple[int, str], set[str]] = {}
        self.findings: list[FindingData] = []

    @property
    def authorities(self) -> list[AuthorityDoc]:
        if self._authorities is None:
            self._authorities = authorities_of(self.matter)
        return self._authorities

    def _finding(self, kind: Kind, status: Status, start: int, end: int, message: str, sources=(),
                 **detail) -> FindingData:
        finding = FindingData(kind, status, start, end, self.text[start:end], message, list(sources), detail)
        self.findings.append(finding)
        return finding

    # -- the whole run -----------------------------------------------------------------------------------------

    def run(self) -> list[FindingData]:
        flat = self.flat
        citations = eyecite_citations(flat)
        cases = find_case_citations(flat, citations)
        statutes, unreadable_cites = read_statutes(flat, citations, self.matter.court)
        quotes = find_quotations(flat)
        # A citation inside a quotation is part of what is quoted (checked with the quotation), not the draft's.
        # Quoted words too few to be a quotation (a term in quotation marks) keep their cites as the draft's own.
        quoted = [(q.start, q.end) for q in quotes if q.word_count >= MIN_UNCITED_QUOTE_WORDS]
        in_quotes = Spans(quoted)
        cases = [c for c in cases if not in_quotes.overlaps(c.start, c.end)]
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
        bates = [b for b in find_bates(flat, self.evidence.known_prefixes()) if not taken.overlaps(b.start, b.end)]
        exhibits = [e for e in find_exhibit_cites(flat) if not taken.overlaps(e.start, e.end)]
        records: list = sorted(bates + exhibits + dockets + pleadings, key=lambda r: r.start)
        transcripts = [t for t in find_transcript_cites(flat) if not taken.overlaps(t.start, t.end)]
        cite_spans = (authority_spans + [(r.start, r.end) for r in records]
                      + [(u.start, u.end) for u in unreadable_cites] + [(t.start, t.end) for t in transcripts])
        skip = Spans(cite_spans + [(q.start, q.end) for q in quotes])
        dates = [d for d in find_dates(flat, self.matter.date_order, yearless=True)
                 if not skip.overlaps(d.start, d.end)]
        amounts = [a for a in find_amounts(flat, self.matter.number_format) if not skip.overlaps(a.start, a.end)]
        unreadable_amounts = [u for u in find_unreadable_amounts(flat, amounts) if not skip.overlaps(u[0], u[1])]
        orders = sorted({d.written_order: d.text for d in dates if d.written_order}.items())
        self._mixed_orders = " and ".join(text for _, text in orders) if len(orders) > 1 else ""

        self._prefetch(bates, dates, amounts)
        spans = sentences(self.text)
        support = [Support() for _ in spans]

        starts = [s.start for s in spans]

        def sentence_of(position: int) -> int:
            return max(0, bisect.bisect_right(starts, position) - 1)

        def cites_record(mention, pages: list[int]) -> None:
            if spans:
                support[sentence_of(mention.start)].record_cites.append(mention.text)
                support[sentence_of(mention.start)].pages.extend(pages)

        for mention in records:
            cites_record(mention, self._check_record(mention))
        # "Id." after a record cite refers to that record document (Compl. ¶ 12 ... Id. ¶ 14), not to a case.
        record_starts = [r.start for r in records]
        statute_starts = [st.start for st in statutes]
        last_case = -1
        for case in cases:
            if case.form == "id":
                k = bisect.bisect_right(record_starts, case.start) - 1
                j = bisect.bisect_right(statute_starts, case.start) - 1
                last_authority = max(last_case, statute_starts[j] if j >= 0 else -1)
                if k >= 0 and records[k].start > last_authority:
                    case.form = "record_id"
                    cites_record(case, self._check_record(records[k], case))
                    continue
            if not case.in_parenthetical:
                last_case = case.start
        cache: dict = {}
        checks = [check_transcript_cite(t, self.matter, self.evidence.exhibit_ids, cache) for t in transcripts]
        for check in checks:  # transcript cites (matters.drafts.verifier.transcripts)
            self._finding(Kind.EXHIBIT_CITE, Status(check.status), check.mention.start, check.mention.end,
                          check.message, check.page_ids, transcript=check.mention.name)
            if spans:
                support[sentence_of(check.mention.start)].record_cites.append(check.mention.text)
                support[sentence_of(check.mention.start)].pages.extend(check.page_ids)
        resolved = self._check_cases(cases)
        for mention, doc in resolved:
            if spans:
                support[sentence_of(mention.start)].authorities.append((doc, mention.text))
        for statute in statutes:
            doc = self._check_statute(statute)
            if spans:
                support[sentence_of(statute.start)].authorities.append((doc, statute.text))
        for cite in unreadable_cites:
            self._unreadable_statute(cite)
            if spans:
                support[sentence_of(cite.start)].authorities.append((None, cite.text))
        for start, end, text in unreadable_amounts:
            self._unreadable_amount(start, end, text)

        # A citation sentence supports the sentence before it.
        cites_in: list[list[tuple[int, int]]] = [[] for _ in spans]
        for span in cite_spans:
            if spans:
                cites_in[sentence_of(span[0])].append(span)
        merged: set[int] = set()
        for i in range(1, len(spans)):
            if cites_in[i] and self._citation_only(spans[i].start, spans[i].end, cites_in[i]):
                merged.add(i)
                support[i - 1].record_cites.extend(support[i].record_cites)
                support[i - 1].pages.extend(support[i].pages)
                support[i - 1].authorities.extend(support[i].authorities)

        def support_of(mention) -> Support:
            return support[sentence_of(mention.start)] if spans else Support()

        def quote_support(mention) -> Support:
            """What a quotation's sentences cite: a quotation of several sentences is followed by its cite,
            which stands in the sentence where the quotation ends, not where it starts."""
            if not spans:
                return Support()
            first, last = sentence_of(mention.start), sentence_of(max(mention.start, mention.end - 1))
            if first == last:
                return support[first]
            merged_support = Support()
            for k in range(first, last + 1):
                merged_support.record_cites.extend(support[k].record_cites)
                merged_support.pages.extend(support[k].pages)
                merged_support.authorities.extend(support[k].authorities)
            return merged_support

        self._near: list[tuple[FindingData, str, set[int]]] = []
        for mention in dates:
            self._check_date(mention, support_of(mention))
        self._suggest_near_dates()
        for mention in amounts:
            self._check_amount(mention, support_of(mention))
        searches = {id(q): prepare(q.inner) for q in quotes}
        wanted: set[int] = set()
        for mention in quotes:
            sup = quote_support(mention)
            if sup.pages:
                wanted.update(sup.pages)
            elif not sup.authorities and searches[id(mention)].segments:
                self._candidates[id(mention)] = self.evidence.candidates_for(searches[id(mention)])
                wanted.update(self._candidates[id(mention)])
        self.evidence.prefetch_texts(wanted)
        for mention in quotes:
            self._check_quote(mention, quote_support(mention), searches[id(mention)])

        if checks and spans:
            narrow_to_lines(self.findings, checks, supported_facts(self.findings, checks, sentence_of, merged),
                            self.matter)
        self.findings.sort(key=lambda f: (f.start, f.end))
        add_reading_notes(self.findings, self.matter, self.evidence)
        self._resolve_sources()
        return self.findings

    def _prefetch(self, bates: list[BatesMention], dates: list[DateMention], amounts: list[AmountMention]) -> None:
        """One query each for every Bates number and every date and amount the draft mentions."""
        forms = [form for mention in bates if mention.last >= mention.first
                 and mention.last - mention.first < MAX_RANGE_PAGES
                 for n in range(mention.first, mention.last + 1) for form in mention.forms(n)]
        self._bates_found = self.evidence.bates_pages(forms) if forms else {}
        pairs: set[tuple[str, str]] = set()
        for mention in dates:
            pairs.update((kind, iso) for kind in self.evidence.date_kinds()
                         for iso in mention.readings + mention.days)
        for mention in amounts:
            pairs.add(("amount", mention.key))
            pairs.add(("number", str(mention.value)))
        self.evidence.prefetch_facts(pairs)
        self._candidates: dict[int, list[int]] = {}
        self._exhibits: dict[str, Exhibit | None] = {}
        self._exhibit_pages: dict[int, list[tuple[int, int]]] = {}
        self._prefix_productions: dict[str, tuple[list[str], list[int]]] = {}

    def _citation_only(self, start: int, end: int, cite_spans: list[tuple[int, int]]) -> bool:
        chars = list(self.flat[start:end])
        for s, e in cite_spans:
            for i in range(max(s, start), min(e, end)):
                chars[i - start] = " "
        rest = _SIGNALS.sub(" ", "".join(chars))
        has_cite = any(s < end and start < e for s, e in cite_spans)
        return has_cite and len(re.findall(r"[A-Za-z]{2,}", rest)) == 0

    # -- sources -------------------------------------------------------------------------------------------------

    def _resolve_sources(self) -> None:
        page_ids = {p for f in self.findings for p in f.sources if isinstance(p, int)}
        bates: dict[int, str] = {}
        for page_id, number in IncomingBatesPage.objects.filter(page_id__in=page_ids).values_list("page_id", "bates"):
            bates.setdefault(page_id, number)
        for page_id, number in BatesPage.objects.filter(page_id__in=page_ids, production__status="done").order_by(
                "production_id", "number").values_list("page_id", "bates"):
            bates[page_id] = number  # our own production's number first, as the packet cites it
        info = {
            page_id: {"exhibit": exhibit_id, "label": label, "page": number, "bates": bates.get(page_id, "")}
            for page_id, number, exhibit_id, label in Page.objects.filter(pk__in=page_ids).values_list(
                "id", "number", "exhibit_id", "exhibit__label")
        }
        for finding in self.findings:
            finding.sources = [info[p] for p in finding.sources if p in info]


def verify_text(*, matter: Matter, text: str) -> list[FindingData]:
    """Check every claim of ``text`` against ``matter``; return the findings in order of position.

    Offsets are into ``text``. Reads the database (evidence pages, their indexed facts, productions,
    authorities); writes only the facts index of exhibits not yet indexed.
    """
    return Verification(matter, text).run()
