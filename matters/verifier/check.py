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
from dataclasses import dataclass, field
from typing import Any

from ..bates_overlaps import production_name
from ..models import Exhibit, Matter, Page
from .authorities import AuthorityDoc, authorities_of, match_case, match_statute, volume_conflict
from .citations import CaseMention, StatuteMention, eyecite_citations, find_case_citations, find_statutes
from .dates import DateMention, display, find_dates
from .evidence import Evidence
from .money import AmountMention, find_amounts
from .quotes import QuoteMention, find_quotations, prepare
from .record import BatesMention, ExhibitMention, find_bates, find_exhibit_cites
from .text import flatten, sentences

GROUNDED, UNGROUNDED, UNVERIFIED = "grounded", "ungrounded", "unverified_authority"
NEEDS_CITE, AMBIGUOUS = "needs_record_cite", "ambiguous"
BLOCKING = {UNGROUNDED, UNVERIFIED}
# A quotation this short and cited to nothing is a defined term or a scare quote, not a quotation of a source.
_MIN_UNCITED_QUOTE_WORDS = 4
_MAX_RANGE_PAGES = 5000
_SIGNALS = re.compile(
    r"\b(?:see|also|cf|e\.g|accord|compare|with|and|id|at|generally|supra|infra|pp?|ex|exs?|exhibits?|"
    r"citing|quoting|but|contra|n|nn|bates|hereinafter|internal|quotation|marks|omitted|emphasis|added|"
    r"alteration|original|citations?)\b",
    re.IGNORECASE,
)


@dataclass
class FindingData:
    """One claim as judged. ``sources`` are page ids until :meth:`Verification.run` turns them into
    ``{"exhibit", "label", "page", "bates"}`` dicts."""

    kind: str
    status: str
    start: int
    end: int
    text: str
    message: str
    sources: list = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def blocking(self) -> bool:
        return self.status in BLOCKING

    def as_json(self) -> dict[str, Any]:
        """The glossary's verify_draft keys."""
        return {"kind": self.kind, "status": self.status, "blocking": self.blocking, "start": self.start,
                "end": self.end, "text": self.text, "message": self.message, "sources": self.sources}


@dataclass
class _Support:
    """What a sentence cites: evidence pages (from its record cites) and authorities (None for a cited authority
    that is not in the matter, with the citation's text)."""

    record_cites: list[str] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    authorities: list[tuple[AuthorityDoc | None, str]] = field(default_factory=list)


class _Spans:
    """Sorted spans for overlap tests in O(log n): a draft has hundreds of claims and cites."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.spans = sorted(spans)
        self.starts = [s for s, _ in self.spans]
        self.longest = max((e - s for s, e in self.spans), default=0)

    def overlaps(self, start: int, end: int) -> bool:
        # Only spans starting before ``end`` and after ``start - longest`` can overlap.
        low = bisect.bisect_left(self.starts, start - self.longest)
        high = bisect.bisect_left(self.starts, end)
        return any(s < end and start < e for s, e in self.spans[low:high])


class Verification:
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

    def _finding(self, kind: str, status: str, start: int, end: int, message: str, sources=(), **detail) -> FindingData:
        finding = FindingData(kind, status, start, end, self.text[start:end], message, list(sources), detail)
        self.findings.append(finding)
        return finding

    # -- the whole run -----------------------------------------------------------------------------------------

    def run(self) -> list[FindingData]:
        flat = self.flat
        citations = eyecite_citations(flat)
        cases = find_case_citations(flat, citations)
        statutes = find_statutes(flat, citations)
        quotes = find_quotations(flat)
        # A citation inside a quotation is part of what is quoted (checked with the quotation), not the draft's.
        # Quoted words too few to be a quotation (a term in quotation marks) keep their cites as the draft's own.
        quoted = [(q.start, q.end) for q in quotes if q.word_count >= _MIN_UNCITED_QUOTE_WORDS]
        in_quotes = _Spans(quoted)
        cases = [c for c in cases if not in_quotes.overlaps(c.start, c.end)]
        statutes = [s for s in statutes if not in_quotes.overlaps(s.start, s.end)]
        authority_spans = [(c.start, c.end) for c in cases] + [(s.start, s.end) for s in statutes]
        taken = _Spans(authority_spans + quoted)
        bates = [b for b in find_bates(flat, self.evidence.known_prefixes()) if not taken.overlaps(b.start, b.end)]
        exhibits = [e for e in find_exhibit_cites(flat) if not taken.overlaps(e.start, e.end)]
        cite_spans = authority_spans + [(b.start, b.end) for b in bates] + [(e.start, e.end) for e in exhibits]
        skip = _Spans(cite_spans + [(q.start, q.end) for q in quotes])
        dates = [d for d in find_dates(flat, self.matter.date_order) if not skip.overlaps(d.start, d.end)]
        amounts = [a for a in find_amounts(flat, self.matter.number_format) if not skip.overlaps(a.start, a.end)]

        self._prefetch(bates, dates, amounts)
        spans = sentences(self.text)
        support = [_Support() for _ in spans]

        starts = [s.start for s in spans]

        def sentence_of(position: int) -> int:
            return max(0, bisect.bisect_right(starts, position) - 1)

        for mention in bates:
            pages = self._check_bates(mention)
            if spans:
                support[sentence_of(mention.start)].record_cites.append(mention.text)
                support[sentence_of(mention.start)].pages.extend(pages)
        for mention in exhibits:
            pages = self._check_exhibit(mention)
            if spans:
                support[sentence_of(mention.start)].record_cites.append(mention.text)
                support[sentence_of(mention.start)].pages.extend(pages)
        resolved = self._check_cases(cases)
        for mention, doc in resolved:
            if spans:
                support[sentence_of(mention.start)].authorities.append((doc, mention.text))
        for statute in statutes:
            doc = self._check_statute(statute)
            if spans:
                support[sentence_of(statute.start)].authorities.append((doc, statute.text))

        # A citation sentence supports the sentence before it.
        cites_in: list[list[tuple[int, int]]] = [[] for _ in spans]
        for span in cite_spans:
            if spans:
                cites_in[sentence_of(span[0])].append(span)
        for i in range(1, len(spans)):
            if cites_in[i] and self._citation_only(spans[i].start, spans[i].end, cites_in[i]):
                support[i - 1].record_cites.extend(support[i].record_cites)
                support[i - 1].pages.extend(support[i].pages)
                support[i - 1].authorities.extend(support[i].authorities)

        def support_of(mention) -> _Support:
            return support[sentence_of(mention.start)] if spans else _Support()

        self._near: list[tuple[FindingData, str, set[int]]] = []
        for mention in dates:
            self._check_date(mention, support_of(mention))
        self._suggest_near_dates()
        for mention in amounts:
            self._check_amount(mention, support_of(mention))
        searches = {id(q): prepare(q.inner) for q in quotes}
        wanted: set[int] = set()
        for mention in quotes:
            sup = support_of(mention)
            if sup.pages:
                wanted.update(sup.pages)
            elif not sup.authorities and searches[id(mention)].segments:
                self._candidates[id(mention)] = self.evidence.candidates_for(searches[id(mention)])
                wanted.update(self._candidates[id(mention)])
        self.evidence.prefetch_texts(wanted)
        for mention in quotes:
            self._check_quote(mention, support_of(mention), searches[id(mention)])

        self.findings.sort(key=lambda f: (f.start, f.end))
        self._resolve_sources()
        return self.findings

    def _prefetch(self, bates: list[BatesMention], dates: list[DateMention], amounts: list[AmountMention]) -> None:
        """One query each for every Bates number and every date and amount the draft mentions."""
        forms = [form for mention in bates if mention.last >= mention.first
                 and mention.last - mention.first < _MAX_RANGE_PAGES
                 for n in range(mention.first, mention.last + 1) for form in self._bates_forms(mention, n)]
        self._bates_found = self.evidence.bates_pages(forms) if forms else {}
        pairs: set[tuple[str, str]] = set()
        for mention in dates:
            pairs.update((kind, iso) for kind in self.evidence.date_kinds() for iso in mention.readings)
        for mention in amounts:
            pairs.add(("amount", mention.key))
            pairs.add(("number", str(mention.value)))
        self.evidence.prefetch_facts(pairs)
        self._candidates: dict[int, list[int]] = {}
        self._exhibits: dict[str, Exhibit | None] = {}
        self._exhibit_pages: dict[int, list[tuple[int, int]]] = {}
        self._prefix_productions: dict[str, tuple[list[str], list[int]]] = {}

    @staticmethod
    def _bates_forms(mention: BatesMention, n: int) -> list[str]:
        bare = mention.prefix.rstrip(" ")
        return list(dict.fromkeys([mention.bates(n), f"{bare}{n:0{mention.digits}d}", f"{bare} {n:0{mention.digits}d}"]))

    def _suggest_near_dates(self) -> None:
        near = self.evidence.dates_near_many(sorted({iso for _, iso, _ in self._near}))
        for finding, iso, within in self._near:
            close = [(v, p) for v, p in near.get(iso, []) if not within or p in within]
            if close:
                value, page_id = close[0]
                finding.message += f" The nearest date there is {display(value)} (listed as a source)."
                finding.sources = finding.sources or [page_id]
                finding.detail["nearest"] = value

    def _citation_only(self, start: int, end: int, cite_spans: list[tuple[int, int]]) -> bool:
        chars = list(self.flat[start:end])
        for s, e in cite_spans:
            for i in range(max(s, start), min(e, end)):
                chars[i - start] = " "
        rest = _SIGNALS.sub(" ", "".join(chars))
        has_cite = any(s < end and start < e for s, e in cite_spans)
        return has_cite and len(re.findall(r"[A-Za-z]{2,}", rest)) == 0

    # -- record cites -------------------------------------------------------------------------------------------

    def _check_bates(self, mention: BatesMention) -> list[int]:
        kind = "bates_cite"
        if mention.last < mention.first:
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"The range {mention.text} ends before it starts.")
            return []
        if mention.last - mention.first >= _MAX_RANGE_PAGES:
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"The range {mention.text} spans {mention.last - mention.first + 1} pages; no production "
                          "cite is that long. Check the numbers.")
            return []
        numbers = range(mention.first, mention.last + 1)
        forms = {n: self._bates_forms(mention, n) for n in numbers}
        found = self._bates_found
        pages_of: dict[int, list[tuple[int | None, str]]] = {}
        for n, candidates in forms.items():
            for form in candidates:
                if form in found:
                    pages_of[n] = found[form]
                    break
        missing = [n for n in numbers if n not in pages_of]
        if not pages_of and not mention.known_prefix:
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"{mention.text} is not a Bates number of this matter: no production, sent or received, "
                          f"uses the prefix “{mention.prefix.strip()}”. It may be invented, or another kind of "
                          "number (a product or model number) written where a record cite belongs.")
            return []
        if missing:
            ranges, last_numbers = self._productions(mention.prefix)
            where = f" Productions with this prefix: {', '.join(ranges)}." if ranges else ""
            first_missing = mention.bates(missing[0])
            past_end = ranges and all(missing[0] > last for last in last_numbers)
            what = "is past the end of every production" if past_end else "names no page of any production"
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"{first_missing} {what} in this matter"
                          + (f" ({len(missing)} of the {len(numbers)} numbers cited are missing)."
                             if len(numbers) > 1 else ".") + where,
                          [p for n in pages_of for p, _ in pages_of[n] if p])
            return [p for n in sorted(pages_of) for p, _ in pages_of[n] if p]
        page_ids = [p for n in sorted(pages_of) for p, _ in pages_of[n] if p]
        shared = {n: keys for n in sorted(pages_of)
                  if len(keys := list(dict.fromkeys(doc.rsplit(":", 1)[0] for _, doc in pages_of[n]))) > 1}
        if shared:
            n, keys = next(iter(shared.items()))
            names = " and ".join(production_name(key) for key in keys[:2])
            self._finding(kind, AMBIGUOUS, mention.start, mention.end,
                          f"{mention.bates(n)} is a number of more than one production of this matter ({names}): "
                          "the cite could mean a page of either. Check which is meant and cite it by exhibit and "
                          "page.", [p for p in page_ids if p in self.evidence.all_pages], productions=len(keys))
            return [p for p in page_ids if p in self.evidence.all_pages]
        not_evidence = [p for p in page_ids if p not in self.evidence.all_pages]
        if not_evidence:
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"{mention.text} names a page that is not evidence (LawDesk's own output, an authority, or "
                          "an exhibit not ready); it cannot support a fact.", not_evidence)
            return [p for p in page_ids if p in self.evidence.all_pages]
        documents = list(dict.fromkeys(doc for n in sorted(pages_of) for _, doc in pages_of[n]))
        if len(documents) > 1:
            self._finding(kind, AMBIGUOUS, mention.start, mention.end,
                          f"The range {mention.text} crosses from one produced document into another "
                          f"({len(documents)} documents); check that the cite means all of them.", page_ids,
                          documents=len(documents))
        else:
            self._finding(kind, GROUNDED, mention.start, mention.end,
                          f"{mention.text} names {len(page_ids)} page(s) of the matter's productions.", page_ids)
        return page_ids

    def _productions(self, prefix: str) -> tuple[list[str], list[int]]:
        """The done productions stamped with ``prefix``: their ranges as text and their last numbers; one query
        per prefix, not per cite (a long draft can cite thousands of numbers that are not there)."""
        key = prefix.strip().lower()
        if key not in self._prefix_productions:
            done = list(self.matter.productions.filter(prefix__iexact=prefix.strip(), status="done"))
            self._prefix_productions[key] = ([str(p) for p in done], [p.last_number for p in done])
        return self._prefix_productions[key]

    def _check_exhibit(self, mention: ExhibitMention) -> list[int]:
        kind = "exhibit_cite"
        label = mention.label.lower()
        if label not in self._exhibits:
            self._exhibits[label] = self.matter.exhibits.filter(label__iexact=mention.label).first()
        exhibit = self._exhibits[label]
        if exhibit is None:
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"This matter has no Exhibit {mention.label}.")
            return []
        if exhibit.pk not in self.evidence.exhibit_ids:
            why = ("is LawDesk's own output coming back" if exhibit.marked_generated else
                   "is an authority, not evidence" if exhibit.origin == "authority" else
                   f"is {exhibit.get_status_display().lower()}" if exhibit.status != Exhibit.Status.READY else
                   "is not evidence")
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"Exhibit {exhibit.label} {why}; it cannot support a fact.")
            return []
        if exhibit.pk not in self._exhibit_pages:  # one query per exhibit, not per cite of it
            self._exhibit_pages[exhibit.pk] = list(exhibit.pages.order_by("number").values_list("number", "id"))
            for _, page_id in self._exhibit_pages[exhibit.pk]:
                self.evidence.note(page_id, exhibit.pk)
        pages = self._exhibit_pages[exhibit.pk]
        by_number = dict(pages)
        if mention.first_page is None:
            page_ids = [pid for _, pid in pages]
            self._finding(kind, GROUNDED, mention.start, mention.end,
                          f"Exhibit {exhibit.label} ({len(pages)} pages); no page is given, so every page was read.",
                          page_ids[:1])
            return page_ids
        wanted = range(mention.first_page, (mention.last_page or mention.first_page) + 1)
        if not wanted:
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"The page range {mention.first_page}–{mention.last_page} of Exhibit {exhibit.label} ends "
                          "before it starts.")
            return []
        absent = [n for n in wanted if n not in by_number]
        if absent:
            self._finding(kind, UNGROUNDED, mention.start, mention.end,
                          f"Exhibit {exhibit.label} has {len(pages)} page(s); page {absent[0]} does not exist.")
            return []
        page_ids = [by_number[n] for n in wanted]
        self._finding(kind, GROUNDED, mention.start, mention.end,
                      f"Exhibit {exhibit.label}, page{'s' if len(page_ids) > 1 else ''} "
                      f"{mention.first_page}{'–' + str(mention.last_page) if len(page_ids) > 1 else ''}.", page_ids)
        return page_ids

    # -- authorities --------------------------------------------------------------------------------------------

    def _check_cases(self, cases: list[CaseMention]) -> list[tuple[CaseMention, AuthorityDoc | None]]:
        kind = "case_citation"
        matched: dict[int, AuthorityDoc | None] = {}
        problems: dict[int, str] = {}
        out = []
        for i, case in enumerate(cases):
            if case.form in ("full", "unknown_reporter"):
                if case.problem:
                    problems[i] = case.problem
                    self._finding(kind, UNGROUNDED, case.start, case.end, case.problem, year=case.year)
                    out.append((case, None))
                    continue
                hit = match_case(case, self.authorities)
                if hit is None:
                    matched[i] = None
                    name = f"{case.name}, " if case.name else ""
                    self._finding(kind, UNVERIFIED, case.start, case.end,
                                  f"No authority in this matter matches {name}{case.reporter_cite}. Add the opinion "
                                  "to the matter as an authority, or confirm this citation with a reason.")
                else:
                    doc, page_id, how = hit
                    shown = volume_conflict(case, doc) if how == "caption" else ""
                    if shown:
                        problems[i] = (f"The authority matching this caption, Exhibit {doc.label} ({doc.title}), is "
                                       f"reported in volume {shown} of {case.reporter}, not {case.volume}.")
                        self._finding(kind, UNGROUNDED, case.start, case.end, problems[i], [page_id])
                        out.append((case, None))
                        continue
                    matched[i] = doc
                    self._finding(kind, GROUNDED, case.start, case.end,
                                  f"Matches authority Exhibit {doc.label} ({doc.title}) by its {how}."
                                  + (f" Pin cite {case.pin_cite} not checked against the reporter's pages."
                                     if case.pin_cite else ""), [page_id])
                out.append((case, matched[i]))
                continue
            target = case.antecedent
            if target is None:
                self._finding(kind, UNVERIFIED, case.start, case.end,
                              f"“{case.text}” does not say which case it refers to (no earlier full citation "
                              "matches it).")
                out.append((case, None))
            elif target in problems:
                self._finding(kind, UNGROUNDED, case.start, case.end,
                              f"Refers to {cases[target].text}, which is itself wrong: {problems[target]}")
                out.append((case, None))
            elif matched.get(target) is None:
                self._finding(kind, UNVERIFIED, case.start, case.end,
                              f"Refers to {cases[target].text}, which no authority of this matter matches.")
                out.append((case, None))
            else:
                doc = matched[target]
                self._finding(kind, GROUNDED, case.start, case.end,
                              f"Refers to {cases[target].text} (authority Exhibit {doc.label}).", [doc.pages[0][0]])
                out.append((case, doc))
        return out

    def _check_statute(self, statute: StatuteMention) -> AuthorityDoc | None:
        hit = match_statute(statute, self.authorities)
        if hit is None:
            self._finding("statute_citation", UNVERIFIED, statute.start, statute.end,
                          f"No authority in this matter holds {statute.cite}. Add the statute or regulation to "
                          "the matter as an authority, or confirm this citation with a reason.")
            return None
        doc, page_id = hit
        self._finding("statute_citation", GROUNDED, statute.start, statute.end,
                      f"{statute.cite} is in authority Exhibit {doc.label} ({doc.title}).", [page_id])
        return doc

    # -- facts: dates, amounts, quotations ---------------------------------------------------------------------

    def _judge(self, what: str, found: set[int], support: _Support,
               in_authority: bool | None = None) -> tuple[str, str, list[int]]:
        """Status, message and sources for a fact found on ``found`` pages, given what its sentence cites.
        ``in_authority`` is whether a cited authority holds it (None: not looked up)."""
        grounding = self.evidence.grounding
        if support.pages:
            cited = set(support.pages)
            on_cited = found & cited & grounding
            if on_cited:
                return GROUNDED, f"{what} is on the cited page(s).", sorted(on_cited)
            flagged = found & cited - grounding
            if flagged:
                return UNGROUNDED, (f"{what} is on the cited page(s) only where a page is flagged as a possible "
                                    "prompt injection; an attorney must clear the flag before it grounds anything."
                                    ), sorted(flagged)
            elsewhere = found & grounding
            cites = ", ".join(dict.fromkeys(support.record_cites))
            if elsewhere:
                return UNGROUNDED, (f"{what} is not on the page(s) cited ({cites}); it appears on other pages of "
                                    "the evidence, listed as sources: cite those instead."), sorted(elsewhere)[:20]
            return UNGROUNDED, f"{what} is not on the page(s) cited ({cites}), nor anywhere in the evidence.", []
        # A fact keeps a fact's status: "unverified authority" belongs to the citation finding itself. A fact
        # attributed to an authority the matter lacks is judged against the evidence, and the message says the
        # authority could not be read for it.
        attributed, where = "", "the evidence"
        if support.authorities:
            if in_authority:
                return GROUNDED, f"{what} is in the cited authority.", []
            missing = [text for doc, text in support.authorities if doc is None]
            if missing and in_authority is not True:
                attributed = (f" It is attributed to {missing[0]}, which is not among the matter's authorities, "
                              "so the authority could not be checked for it.")
            else:
                where = "the cited authority or the evidence"
        ground = found & grounding
        if ground:
            return NEEDS_CITE, (f"{what} appears in the evidence but the sentence cites no record page; cite "
                                "one of the pages listed as sources." + attributed), sorted(ground)[:20]
        if found:
            return UNGROUNDED, (f"{what} appears only on page(s) flagged as a possible prompt injection; an "
                                "attorney must clear the flag before it grounds anything." + attributed), sorted(found)
        return UNGROUNDED, f"{what} is not in {where}.{attributed}", []

    def _authority_holds(self, support: _Support, test) -> bool | None:
        docs = [doc for doc, _ in support.authorities if doc is not None]
        if not docs:
            return None
        return any(test(doc) for doc in docs)

    def _facts_of(self, doc: AuthorityDoc, kind: str) -> set[str]:
        key = (doc.exhibit_id, kind)
        if key not in self._doc_facts:
            if kind == "date":
                values = {d.readings[0] for d in find_dates(doc.full, self.matter.date_order)}
            else:
                values = {a.key for a in find_amounts(doc.full, self.matter.number_format)}
            self._doc_facts[key] = values
        return self._doc_facts[key]

    def _check_date(self, mention: DateMention, support: _Support) -> None:
        kinds = self.evidence.date_kinds()
        found = self.evidence.pages_with(kinds, list(mention.readings))
        primary = mention.readings[0]

        def in_doc(iso):
            return lambda doc: iso in self._facts_of(doc, "date")

        status, message, sources = self._judge(f"{display(primary)}", found.get(primary, set()),
                                               support, self._authority_holds(support, in_doc(primary)))
        detail: dict[str, Any] = {"readings": list(mention.readings)}
        if mention.ambiguous:
            other = mention.readings[1]
            order = "month first" if self.matter.date_order == "mdy" else "day first"
            note = (f"{mention.text} could be {display(primary)} or {display(other)}; this matter reads numeric "
                    f"dates {order}, so it was read as {display(primary)}. ")
            if status in (GROUNDED, NEEDS_CITE):
                status, message = AMBIGUOUS, note + message
            else:
                alt = self._judge(display(other), found.get(other, set()), support,
                                  self._authority_holds(support, in_doc(other)))
                if alt[0] in (GROUNDED, NEEDS_CITE):
                    status, message, sources = AMBIGUOUS, note + "The other reading is supported: " + alt[1], alt[2]
                else:
                    message = note + message
        finding = self._finding("date", status, mention.start, mention.end, message, sources, **detail)
        if status == UNGROUNDED:
            self._near.append((finding, primary, set(support.pages)))

    def _check_amount(self, mention: AmountMention, support: _Support) -> None:
        what = f"{mention.currency} {mention.value:,.2f}"
        if mention.words_disagree:
            self._finding("amount", UNGROUNDED, mention.start, mention.end,
                          f"The words say {mention.currency} {mention.words_value:,.2f} and the figures "
                          f"{what}: they must agree.", words=str(mention.words_value), figures=str(mention.value))
            return
        value = f"{mention.value}"
        by_amount = self.evidence.pages_with(["amount"], [mention.key])
        by_number = self.evidence.pages_with(["number"], [value])
        found = by_amount.get(mention.key, set()) | by_number.get(value, set())

        def in_doc(doc):
            return mention.key in self._facts_of(doc, "amount")

        status, message, sources = self._judge(what, found, support,
                                               self._authority_holds(support, in_doc))
        self._finding("amount", status, mention.start, mention.end, message, sources, value=mention.key)

    def _check_quote(self, mention: QuoteMention, support: _Support, search) -> None:
        cited = bool(support.pages or support.authorities)
        if mention.word_count < (2 if cited else _MIN_UNCITED_QUOTE_WORDS):
            return
        if not search.segments:
            return
        what = "The quotation"
        detail: dict[str, Any] = {}
        if support.pages:
            hits, near = self.evidence.find_quote(search, within=list(dict.fromkeys(support.pages)))
        elif support.authorities and not any(doc is None for doc, _ in support.authorities):
            docs = [doc for doc, _ in support.authorities if doc is not None]
            for doc in docs:
                page_id = doc.find_quote(search)
                if page_id is not None:
                    self._finding("quotation", GROUNDED, mention.start, mention.end,
                                  f"{what} is in authority Exhibit {doc.label} ({doc.title}).", [page_id])
                    return
            self._finding("quotation", UNGROUNDED, mention.start, mention.end,
                          f"{what} is not in the cited authority ({', '.join(d.title for d in docs)}) as quoted.")
            return
        else:
            hits, near = self.evidence.find_quote(search, candidates=self._candidates.get(id(mention)))
        found = {h.page_id for h in hits}
        status, message, sources = self._judge(what, found, support, None)
        tolerant = [h for h in hits if h.similarity < 100 and h.page_id in sources]
        if status in (GROUNDED, NEEDS_CITE) and tolerant and not any(
                h.similarity == 100 and h.page_id in sources for h in hits):
            detail["ocr_similarity"] = min(h.similarity for h in tolerant)
            message += (f" Matched in OCR text at {detail['ocr_similarity']:.0f}% similarity (OCR misreads "
                        "letters; compare with the page image).")
        if status == UNGROUNDED and near is not None and near.similarity >= 60:
            passage = self.evidence.closest_passage(search, near.page_id)
            detail["closest_similarity"] = near.similarity
            message += f" The closest passage ({near.similarity:.0f}% similar) reads: “{passage}”."
            sources = sources or [near.page_id]
        self._finding("quotation", status, mention.start, mention.end, message, sources, **detail)

    # -- sources -------------------------------------------------------------------------------------------------

    def _resolve_sources(self) -> None:
        from ..models import BatesPage, IncomingBatesPage

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
