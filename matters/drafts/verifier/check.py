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
import copy
import datetime as dt
import gc
from collections import defaultdict

from matters.models import BatesPage, Exhibit, IncomingBatesPage, Matter, Page

from . import memo as memos
from .authorities import AuthorityDoc, authorities_of
from .check_authorities import AuthorityChecks
from .check_deadlines import DeadlineChecks
from .check_facts import FactChecks
from .check_quotes import QuoteChecks
from .check_records import MAX_RANGE_PAGES, RecordChecks
from .citations import CaseMention, resolve_case_citations
from .dates import DateMention
from .deadlines import find_periods, names_court_papers, states_deadline
from .evidence import Evidence
from .finding import FindingData, Kind, Status, Support
from .memo import Memo, evidence_state, paragraph_key
from .money import AmountMention
from .reading_notes import add_reading_notes
from .record import BatesMention
from .statutes import StatuteMention, UnreadableCite
from .text import flatten
from .transcripts import check_transcript_cite, narrow_to_lines, supported_facts
from .units import Before, ReadingSettings, paragraph_spans, paragraphs, shifted

__all__ = ["FindingData", "Verification", "verify_text"]
class Verification(RecordChecks, AuthorityChecks, FactChecks, QuoteChecks, DeadlineChecks):
    """One verification of one text against one matter. Use :func:`verify_text`.

    The draft is read a paragraph at a time (:mod:`matters.drafts.verifier.units`) and judged a paragraph at a
    time: each paragraph's findings depend on its own text, the evidence, and a few things outside it that are
    named in its key (:meth:`_paragraph_key`). With a ``memo`` (:class:`matters.drafts.verifier.memo.Memo`), a
    paragraph whose key the memo holds takes its findings from there and only the others are checked: after an
    edit, the paragraph edited and those whose meaning depends on it (an ``Id.`` or ``supra`` after it, the
    paragraph a citation sentence of it supports). The result is the same either way."""

    def __init__(self, matter: Matter, text: str, memo: Memo | None = None):
        self.matter = matter
        self.text = text
        self.flat = flatten(text)
        self.memo = memo
        self.evidence = Evidence(matter)
        # Taken with the evidence, not after the draft is read: a change in between must not be kept under it.
        self._state = evidence_state(matter, self.evidence) if memo is not None else b""
        self._authorities: list[AuthorityDoc] | None = None
        self._doc_facts: dict[tuple[int, str], set[int]] = {}
        self.findings: list[FindingData] = []
        self.checked_paragraphs = 0  # how many paragraphs this run judged (the others came from the memo)
        # Every authority citation judged, as read, with the authority that grounds it (None: none does), in order
        # of judging; every case mention of the draft (``CaseMention.antecedent`` indexes it) and eyecite's
        # citations they were read from (``CaseMention.source``). The table of authorities (matters.drafts.toa)
        # is built from these, never from a reading of its own.
        self.cited: list[tuple[CaseMention | StatuteMention | UnreadableCite, AuthorityDoc | None]] = []
        self.cases: list[CaseMention] = []
        self.eyecite_citations: list = []

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
        units = paragraph_spans(self.text)
        settings = ReadingSettings(self.matter.date_order, self.matter.number_format, self.matter.court,
                                   frozenset(self.evidence.known_prefixes()), dt.date.today().year)
        # A paragraph may read what those before it named: a set of rules, a statute, a full date's year.
        parts, before, used = [], Before(), []
        for s, e in units:
            used.append(before.used_by(flat[s:e]))
            parts.append(paragraphs.get(flat[s:e], settings, used[-1]))
            before = before.after(parts[-1])
        unit_starts = [s for s, _ in units]

        def unit_of(position: int) -> int:
            return max(0, bisect.bisect_right(unit_starts, position) - 1)

        # Sentences of the whole draft, in order, and the first of each paragraph.
        starts: list[int] = []
        first_sentence: list[int] = []
        for (s, _), part in zip(units, parts):
            first_sentence.append(len(starts))
            starts.extend(sentence.start + s for sentence in part.sentences)
        first_sentence.append(len(starts))

        def sentence_of(position: int) -> int:
            return max(0, bisect.bisect_right(starts, position) - 1)

        # A citation sentence supports the sentence before it, in its paragraph or at the end of the one before.
        merged = {first_sentence[u] + k for u, part in enumerate(parts) for k in part.citation_only
                  if first_sentence[u] + k >= 1}

        # Case citations are resolved over the whole draft: a short form, "supra" or "Id." refers back.
        citations: list = []
        cases: list[CaseMention] = []
        seen: set[int] = set()
        for (s, _), part in zip(units, parts):
            base = len(citations)
            for citation in part.citations:
                # The same paragraph twice is one cached reading: its citations are told apart by identity.
                citations.append(copy.copy(citation) if id(citation) in seen else citation)
                seen.add(id(citation))
            for mention in part.cases:
                cases.append(shifted(mention, s))
                cases[-1].source = None if mention.source is None else base + mention.source
        resolve_case_citations(cases, citations)
        self.cases, self.eyecite_citations = cases, citations
        # "Id." after a record cite refers to that record document (Compl. ¶ 12 ... Id. ¶ 14), not to a case.
        record_starts: list[int] = []
        record_at: list[tuple[int, int]] = []
        statute_starts: list[int] = []
        for u, ((s, _), part) in enumerate(zip(units, parts)):
            record_starts.extend(r.start + s for r in part.records)
            record_at.extend((u, k) for k in range(len(part.records)))
            statute_starts.extend(st.start + s for st in part.statutes)
        record_of_id: dict[int, int] = {}  # index in cases -> index in the draft's records
        last_case = -1
        for i, case in enumerate(cases):
            if case.form == "id":
                k = bisect.bisect_right(record_starts, case.start) - 1
                j = bisect.bisect_right(statute_starts, case.start) - 1
                last_authority = max(last_case, statute_starts[j] if j >= 0 else -1)
                if k >= 0 and record_starts[k] > last_authority:
                    case.form = "record_id"
                    record_of_id[i] = k
                    continue
            if not case.in_parenthetical:
                last_case = case.start

        def record(k: int):
            u, index = record_at[k]
            return shifted(parts[u].records[index], units[u][0])

        orders: dict[str, str] = {}
        for part in parts:
            orders.update(part.orders)
        self._mixed_orders = " and ".join(text for _, text in sorted(orders.items())) if len(orders) > 1 else ""

        # Which paragraphs to judge: all, or those whose key the memo lacks.
        case_units = [unit_of(c.start) for c in cases]
        keys = self._paragraph_keys(units, parts, cases, case_units, record_of_id, record, first_sentence, merged,
                                   used)
        remembered = self.memo.recall(keys, unit_starts) if self.memo is not None else {}
        dirty = {u for u in range(len(units)) if u not in remembered}
        self.checked_paragraphs = len(dirty)
        # Sentences whose support a judged paragraph reads: its own, and a citation sentence opening the next.
        needed_units = sorted(dirty | {u + 1 for u in dirty if u + 1 < len(units) and first_sentence[u + 1] in merged})
        needed = {i for u in dirty for i in range(first_sentence[u], first_sentence[u + 1])}
        needed.update(first_sentence[u + 1] for u in dirty if u + 1 < len(units) and first_sentence[u + 1] in merged)

        def mentions(kind: str, units_to_read) -> list:
            return [shifted(m, units[u][0]) for u in units_to_read for m in getattr(parts[u], kind)]

        records = [r for r in mentions("records", needed_units) if sentence_of(r.start) in needed]
        transcripts = [t for t in mentions("transcripts", needed_units) if sentence_of(t.start) in needed]
        statutes = [st for st in mentions("statutes", needed_units) if sentence_of(st.start) in needed]
        unreadable_cites = [c for c in mentions("unreadable_cites", needed_units) if sentence_of(c.start) in needed]
        dates = mentions("dates", sorted(dirty))
        amounts = mentions("amounts", sorted(dirty))
        quotes, searches = [], {}
        for u in sorted(dirty):
            for quote, search in zip(parts[u].quotes, parts[u].searches):
                quotes.append(shifted(quote, units[u][0]))
                searches[id(quotes[-1])] = search
        unreadable_amounts = [(a + units[u][0], b + units[u][0], t) for u in sorted(dirty)
                              for a, b, t in parts[u].unreadable_amounts]
        wanted_cases: set[int] = set()
        for i, case in enumerate(cases):
            if case_units[i] in dirty or sentence_of(case.start) in needed:
                wanted_cases.add(i)
                if case.antecedent is not None:
                    wanted_cases.add(case.antecedent)
                outer = self._outer_case(cases, i)
                if outer is not None:
                    wanted_cases.add(outer)
        bates = [r for r in records if isinstance(r, BatesMention)]
        bates += [record(k) for i, k in record_of_id.items() if i in wanted_cases
                  and isinstance(parts[record_at[k][0]].records[record_at[k][1]], BatesMention)]
        self._prefetch(bates, dates, amounts)
        support: dict[int, Support] = defaultdict(Support)

        def cites_record(mention, pages: list[int]) -> None:
            if starts:
                support[sentence_of(mention.start)].record_cites.append(mention.text)
                support[sentence_of(mention.start)].pages.extend(pages)

        for mention in records:
            cites_record(mention, self._check_record(mention))
        for i, k in record_of_id.items():
            if i in wanted_cases:
                cites_record(cases[i], self._check_record(record(k), cases[i]))
        cache: dict = {}
        checks = [check_transcript_cite(t, self.matter, self.evidence.exhibit_ids, cache) for t in transcripts]
        for check in checks:  # transcript cites (matters.drafts.verifier.transcripts)
            self._finding(Kind.EXHIBIT_CITE, Status(check.status), check.mention.start, check.mention.end,
                          check.message, check.page_ids, transcript=check.mention.name)
            if starts:
                support[sentence_of(check.mention.start)].record_cites.append(check.mention.text)
                support[sentence_of(check.mention.start)].pages.extend(check.page_ids)
        resolved = self._check_cases(cases, wanted_cases)
        self.cited.extend(resolved)
        for mention, doc in resolved:
            if starts and sentence_of(mention.start) in needed:
                support[sentence_of(mention.start)].authorities.append((doc, mention.text))
        for statute in statutes:
            doc = self._check_statute(statute)
            self.cited.append((statute, doc))
            if starts:
                support[sentence_of(statute.start)].authorities.append((doc, statute.text))
        for cite in unreadable_cites:
            self._unreadable_statute(cite)
            self.cited.append((cite, None))
            if starts:
                support[sentence_of(cite.start)].authorities.append((None, cite.text))
        for start, end, text in unreadable_amounts:
            self._unreadable_amount(start, end, text)

        for i in sorted(merged & needed):
            support[i - 1].record_cites.extend(support[i].record_cites)
            support[i - 1].pages.extend(support[i].pages)
            support[i - 1].authorities.extend(support[i].authorities)

        def support_of(mention) -> Support:
            return support[sentence_of(mention.start)] if starts else Support()

        def quote_support(mention) -> Support:
            """What a quotation's sentences cite: a quotation of several sentences is followed by its cite,
            which stands in the sentence where the quotation ends, not where it starts."""
            if not starts:
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

        def sentence_text(position: int) -> tuple[int, str]:
            """The sentence ``position`` is in: its start and text, within its paragraph."""
            s, e = units[unit_of(position)]
            if starts:
                i = sentence_of(position)
                s = max(s, starts[i])
                e = min(e, starts[i + 1]) if i + 1 < len(starts) else e
            return s, flat[s:e]

        self._near: list[tuple[FindingData, str, set[int]]] = []
        for mention in dates:
            # A date the draft states as a deadline is checked against the matter's saved deadlines, not the record.
            # The cue just before the date is looked for first: most dates have none, and their sentence is not read.
            if not mention.problem and not mention.days and states_deadline(flat[max(0, mention.start - 120):
                                                                                 mention.start]):
                begins, sentence = sentence_text(mention.start)
                if names_court_papers(sentence) and states_deadline(flat[begins:mention.start]):
                    self._check_stated_deadline_date(mention, sentence)
                    continue
            self._check_date(mention, support_of(mention))
        for u in sorted(dirty):
            s, e = units[u]
            for period in find_periods(flat[s:e]):
                period = shifted(period, s)
                if names_court_papers(sentence_text(period.start)[1]):
                    self._check_stated_period(period, sentence_text(period.start)[1])
        self._suggest_near_dates()
        for mention in amounts:
            self._check_amount(mention, support_of(mention))
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

        if checks and starts:
            narrow_to_lines(self.findings, checks, supported_facts(self.findings, checks, sentence_of, merged),
                            self.matter)
        # Findings of paragraphs read only for what they lend a judged one (a full citation, a citation sentence)
        # are that paragraph's own, judged or remembered with it.
        self.findings = [f for f in self.findings if unit_of(f.start) in dirty]
        self.findings.sort(key=lambda f: (f.start, f.end))
        add_reading_notes(self.findings, self.matter, self.evidence)
        self._resolve_sources()
        judged: dict[int, list[FindingData]] = {u: [] for u in dirty}
        for finding in self.findings:
            judged[unit_of(finding.start)].append(finding)
        if self.memo is not None:
            self.memo.keep({keys[u]: (units[u][0], judged[u]) for u in dirty})
        out: list[FindingData] = []
        for u in range(len(units)):
            out.extend(judged[u] if u in dirty else remembered[u])
        self.findings = out
        return out

    @staticmethod
    def _outer_case(cases: list[CaseMention], i: int) -> int | None:
        """For a full citation inside a ``(quoting ...)`` parenthetical, the full citation it follows (the
        authority said to quote it); None otherwise."""
        if cases[i].form != "full" or not cases[i].in_parenthetical:
            return None
        return next((j for j in range(i - 1, -1, -1)
                     if cases[j].form == "full" and not cases[j].in_parenthetical), None)

    def _paragraph_keys(self, units, parts, cases, case_units, record_of_id, record, first_sentence,
                        merged, used) -> list[bytes]:
        """Each paragraph's key: everything its findings depend on. Its text; the evidence and the matter's
        reading (:func:`matters.drafts.verifier.memo.evidence_state`); whether the draft mixes numeric date
        orders; for each case citation of it that refers elsewhere, what it refers to (the full citation of a
        short form, ``supra`` or ``Id.``, the record cite of a record ``Id.``, the authority a parenthetical
        follows); and a citation sentence opening the next paragraph, which supports its last sentence."""
        if self.memo is None:
            return [b""] * len(units)
        state = self._state
        outside: list[list] = [[] for _ in units]
        for i, case in enumerate(cases):
            u = case_units[i]
            if case.antecedent is not None and case.form in ("short", "supra", "id"):
                outside[u].append(("refers", _described(cases[case.antecedent])))
            if i in record_of_id:
                outside[u].append(("record", record(record_of_id[i]).text))
            outer = self._outer_case(cases, i)
            if outer is not None:
                outside[u].append(("outer", _described(cases[outer])))
        for u in range(len(units) - 1):
            if first_sentence[u + 1] in merged:
                sentence = parts[u + 1].sentences[0]
                s = units[u + 1][0]
                # What that sentence cites may itself refer back (an Id., a supra): what the next paragraph
                # refers to is read too.
                outside[u].append(("next", self.text[s + sentence.start:s + sentence.end], tuple(outside[u + 1])))
        for u in range(len(units)):
            outside[u].append(("before", used[u]))
        return [paragraph_key(state, self._mixed_orders, self.text[s:e], outside[u])
                for u, (s, e) in enumerate(units)]

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


def _described(case: CaseMention) -> tuple:
    """What a citation's findings read of a full citation another refers to."""
    return (case.text, case.form, case.volume, case.reporter, case.page, case.pin_cite, case.year, case.plaintiff,
            case.defendant, case.problem, case.name, case.in_parenthetical)


def verify_text(*, matter: Matter, text: str, incremental: bool = True,
                counts: dict | None = None) -> list[FindingData]:
    """Check every claim of ``text`` against ``matter``; return the findings in order of position.

    Offsets are into ``text``. Reads the database (evidence pages, their indexed facts, productions,
    authorities); writes only the facts index of exhibits not yet indexed. ``incremental``: take the findings of
    paragraphs checked before, against the same evidence, from the process's memo
    (:mod:`matters.drafts.verifier.memo`) and keep this run's there; the result is the same as with
    ``incremental=False``, which checks every paragraph and keeps nothing. ``counts``, when given, receives
    ``paragraphs`` (how many the text has) and ``checked_paragraphs`` (how many were judged, not remembered).
    """
    # The cyclic collector is paused while a draft is checked: its findings and mentions are tens of thousands of
    # young objects and no cycles, and every collection they set off walked the process's kept paragraphs and
    # findings too (a third of a 100-page brief's time). Reference counting frees them as before.
    paused = gc.isenabled()
    gc.disable()
    try:
        verification = Verification(matter, text, memo=memos.shared if incremental else None)
        findings = verification.run()
        if counts is not None:
            counts.update(paragraphs=len(paragraph_spans(text)), checked_paragraphs=verification.checked_paragraphs)
        return findings
    finally:
        if paused:
            gc.enable()
