"""The evidence a verification checks against: every evidence page of the matter, looked up by value.

Evidence is what :func:`matters.selectors.evidence_exhibits` returns (origins client, opposing party, third
party, court; ready; never LawDesk's own output), all of it, not the subset a model saw. A page flagged as a
possible prompt injection grounds nothing until an attorney clears the flag; it is kept apart so a finding can
say that a claim appears only there.
"""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from rapidfuzz import fuzz

from matters.exhibits.bates_search import matter_bates_prefixes
from matters.exhibits.lexical import bm25_pages
from matters.exhibits.search import page_ids_with_phrase, page_ids_with_words
from matters.models import BatesPage, IncomingBatesPage, Matter, Page, PageFact, Production
from matters.selectors import evidence_exhibits

from .facts import matter_index_facts
from .quotes import QuoteSearch
from .text import match_words, match_words_of_reading

# OCR misreads a letter here and there; a quotation on an OCR'd page matches at this similarity (0-100,
# RapidFuzz partial ratio over the match words) and the finding reports the figure.
OCR_SIMILARITY = 90
_CANDIDATES = 20
# Pages holding the quotation's longest run of words as a phrase are checked first; a handful is enough to
# ground it and to name where it appears.
_PHRASE_CANDIDATES = 3
# Values of one IN list per query: SQLite (32,766 by default) and PostgreSQL (65,535) cap the parameters of a
# query, and a long draft can name more Bates numbers, dates and amounts than that.
_IN_BATCH = 10_000


def _batches(values) -> list[list]:
    values = list(values)
    return [values[i:i + _IN_BATCH] for i in range(0, len(values), _IN_BATCH)]


@dataclass(frozen=True)
class QuoteHit:
    page_id: int
    similarity: float  # 100 for an exact match (after the allowed alterations)


class _EvidencePages:
    """The matter's evidence pages as a set-like view (``in``, ``&``, ``-`` with a set of page ids), without
    loading every page id: a page is evidence when its exhibit is. ``grounding_only`` leaves out pages flagged
    as a possible prompt injection."""

    def __init__(self, evidence: "Evidence", grounding_only: bool):
        self.evidence, self.grounding_only = evidence, grounding_only

    def __contains__(self, page_id: int) -> bool:
        if self.grounding_only and page_id in self.evidence.flagged:
            return False
        return self.evidence.is_evidence(page_id)

    def __rand__(self, other: set[int]) -> set[int]:
        self.evidence.learn_exhibits(other)
        return {p for p in other if p in self}

    __and__ = __rand__

    def __rsub__(self, other: set[int]) -> set[int]:
        self.evidence.learn_exhibits(other)
        return {p for p in other if p not in self}


class Evidence:
    """Lookups over one matter's evidence pages. Built once per verification with a few queries whatever the
    number of pages; claims are then looked up in batches (one query for all dates and amounts, one for all
    Bates numbers, one full-text query per uncited quotation)."""

    def __init__(self, matter: Matter):
        self.matter = matter
        matter_index_facts(matter)
        exhibits = evidence_exhibits(matter)
        self.exhibit_ids: set[int] = set(exhibits.values_list("id", flat=True))
        self.flagged: set[int] = set(
            Page.objects.filter(exhibit__in=exhibits, injection_cleared_reason="").exclude(injection_reason="")
            .values_list("id", flat=True))
        self._exhibit_of: dict[int, int] = {}
        self._texts: dict[int, tuple[str, str]] = {}
        self._candidates: dict[tuple, list[int]] = {}
        self.grounding = _EvidencePages(self, grounding_only=True)
        self.all_pages = _EvidencePages(self, grounding_only=False)

    def note(self, page_id: int, exhibit_id: int) -> None:
        self._exhibit_of[page_id] = exhibit_id

    def learn_exhibits(self, page_ids) -> None:
        unknown = [p for p in page_ids if p not in self._exhibit_of]
        if not unknown:
            return
        for batch in _batches(unknown):
            self._exhibit_of.update(Page.objects.filter(pk__in=batch).values_list("id", "exhibit_id"))

    def is_evidence(self, page_id: int) -> bool:
        if page_id not in self._exhibit_of:
            self.learn_exhibits([page_id])
        return self._exhibit_of.get(page_id) in self.exhibit_ids

    def date_kinds(self) -> list[str]:
        return ["date", f"date_{self.matter.date_order}"]

    def prefetch_facts(self, pairs: set[tuple[str, str]]) -> None:
        """Load, in one query, the pages of every ``(kind, value)`` a verification will ask about."""
        kinds = {k for k, _ in pairs}
        values = {v for _, v in pairs}
        self._facts: dict[tuple[str, str], set[int]] = defaultdict(set)
        if not pairs:
            return
        for batch in _batches(values):
            rows = PageFact.objects.filter(page__exhibit__matter=self.matter, kind__in=kinds, value__in=batch)
            for page_id, exhibit_id, kind, value in rows.values_list("page_id", "page__exhibit_id", "kind", "value"):
                self.note(page_id, exhibit_id)
                if exhibit_id in self.exhibit_ids:
                    self._facts[(kind, value)].add(page_id)
        self._prefetched = pairs

    def pages_with(self, kinds: list[str], values: list[str]) -> dict[str, set[int]]:
        """For each of ``values``, the evidence pages (grounding or flagged) holding it as one of ``kinds``."""
        wanted = {(k, v) for k in kinds for v in values}
        if not wanted <= getattr(self, "_prefetched", set()):
            self.prefetch_facts(wanted | getattr(self, "_prefetched", set()))
        found: dict[str, set[int]] = defaultdict(set)
        for kind, value in wanted:
            found[value] |= self._facts.get((kind, value), set())
        return found

    def dates_near_many(self, isos: list[str], days: int = 7) -> dict[str, list[tuple[str, int]]]:
        """For each of ``isos``, the dates within ``days`` on grounding pages as ``(iso, page_id)``, nearest
        first; one query for all of them."""
        window = sorted({(dt.date.fromisoformat(iso) + dt.timedelta(days=k)).isoformat()
                         for iso in isos for k in range(-days, days + 1)})
        rows = []
        # Every day of every window as one IN list: index seeks on (kind, value), where OR-ed ranges scan.
        for batch in _batches(window):
            for page_id, exhibit_id, value in PageFact.objects.filter(
                    page__exhibit__matter=self.matter, kind__in=self.date_kinds(), value__in=batch).values_list(
                    "page_id", "page__exhibit_id", "value"):
                self.note(page_id, exhibit_id)
                rows.append((page_id, value))
        near: dict[str, list[tuple[str, int]]] = {}
        for iso in isos:
            day = dt.date.fromisoformat(iso)
            close = [(v, p) for p, v in rows if p in self.grounding and v != iso
                     and abs((dt.date.fromisoformat(v) - day).days) <= days]
            near[iso] = sorted(close, key=lambda vp: (abs((dt.date.fromisoformat(vp[0]) - day).days), vp[1]))
        return near

    def prefetch_texts(self, page_ids: set[int]) -> None:
        """Load the match words of these pages in one query (quotations are then matched in memory)."""
        self._page_text(page_ids)

    def candidates_for(self, search: QuoteSearch) -> list[int]:
        """Evidence pages a quotation could come from (full-text index): pages holding its longest segment as a
        phrase; failing that, the best-ranked pages holding all its distinctive words, then any of them (for
        OCR'd text and for naming the closest passage of a misquotation)."""
        longest = max(search.plain, key=len).split()
        words = sorted(set(search.words), key=len, reverse=True)[:8]
        # A brief quotes the same passage more than once (a fifth of the bench brief's quotations repeat one
        # before them): the index is asked once per verification for the same words.
        key = (tuple(longest), tuple(words))
        if key not in self._candidates:
            self._candidates[key] = self._search_candidates(longest, words)
        return list(self._candidates[key])

    def _search_candidates(self, longest: list[str], words: list[str]) -> list[int]:
        candidates = page_ids_with_phrase(matter=self.matter, words=longest, limit=_PHRASE_CANDIDATES)
        if not candidates:
            candidates = page_ids_with_words(matter=self.matter, words=words, limit=_CANDIDATES)
        if not candidates:
            candidates = self._holding_any(words)
        for page_id, exhibit_id in candidates:
            self.note(page_id, exhibit_id)
        return [p for p, _ in candidates if p in self.all_pages]

    def _holding_any(self, words: list[str]) -> list[tuple[int, int]]:
        """``(page id, exhibit id)`` of the ``_CANDIDATES`` pages of the matter that rank best by BM25 for any of
        ``words``, best first. BM25 reads the rarest word's pages first and stops once the common words' pages
        cannot reach the best (:func:`matters.exhibits.lexical.bm25_pages`); ranking every page holding any of a
        quotation's words, mostly common ones, took 600 to 800 ms at 200,000 pages on either database, and a
        quotation the draft made up ends here. Its evidence exhibits are not passed as a filter: at 24,000
        exhibits the filter cost more than the pages outside them, dropped by the caller."""
        ranked = [page_id for page_id, _ in bm25_pages(matter=self.matter, terms=[[w] for w in words],
                                                       limit=_CANDIDATES)]
        exhibit_of = dict(Page.objects.filter(pk__in=ranked).values_list("id", "exhibit_id"))
        return [(page_id, exhibit_of[page_id]) for page_id in ranked if page_id in exhibit_of]

    def _page_text(self, page_ids: set[int]) -> dict[int, tuple[str, str]]:
        missing = [p for p in page_ids if p not in self._texts]
        for batch in _batches(missing):
            for page_id, reading, text, source in Page.objects.filter(pk__in=batch).values_list(
                    "id", "reading_text", "text", "source"):
                # Page.reading_text is reading_form(text), stored when the page is saved; a row written around
                # save() without it is read from its text.
                words = match_words_of_reading(reading) if reading or not text else match_words(text)
                self._texts[page_id] = (words, source)
        return {p: self._texts[p] for p in page_ids if p in self._texts}

    def find_quote(self, search: QuoteSearch, within: list[int] | None = None,
                   candidates: list[int] | None = None) -> tuple[list[QuoteHit], QuoteHit | None]:
        """Pages where the quotation appears: within ``within`` (cited pages, in order; consecutive pages are
        also read as one text, for a quotation that runs over a page break) or anywhere in the evidence.
        Returns the hits (exact, or on an OCR'd page at ``OCR_SIMILARITY`` or more) and, when there is none,
        the closest passage seen as a near miss. ``candidates``: pages already found by
        :meth:`candidates_for`."""
        if within is None:
            pages = self.candidates_for(search) if candidates is None else candidates
        else:
            pages = [p for p in within if p in self.all_pages]
        texts = self._page_text(set(pages))
        hits: list[QuoteHit] = []
        best: QuoteHit | None = None
        plain = " ".join(search.plain)
        following: dict[int, int] | None = None
        for page_id in pages:
            if page_id not in texts:
                continue
            words, source = texts[page_id]
            if search.find(words) is not None:
                hits.append(QuoteHit(page_id, 100.0))
                continue
            if within is not None:
                # A quotation cited to a page may run onto the next one (cited to both, to a range, or to its
                # first page only), with the page's furniture between its halves.
                if following is None:
                    following = self.next_pages(pages)
                nxt = following.get(page_id)
                if nxt is not None:
                    nxt_words = self._page_text({nxt}).get(nxt, ("", ""))[0]
                    # It must start on the cited page: one wholly on the next page is not on the page cited.
                    joined = search.find(words + " " + nxt_words)
                    if (joined is not None and joined[0] < len(words)) or search.find_across(words, nxt_words):
                        hits.append(QuoteHit(page_id, 100.0))
                        continue
            score = fuzz.partial_ratio(plain, words) if plain else 0.0
            if source == Page.Source.OCR and score >= OCR_SIMILARITY:
                hits.append(QuoteHit(page_id, round(score, 1)))
            elif best is None or score > best.similarity:
                best = QuoteHit(page_id, round(score, 1))
        return hits, best

    def next_pages(self, page_ids: list[int]) -> dict[int, int]:
        """For each of ``page_ids``, the evidence page after it in its exhibit (one query each way)."""
        rows = list(Page.objects.filter(pk__in=page_ids).values_list("id", "exhibit_id", "number"))
        if not rows:
            return {}
        after = {(exhibit_id, number + 1): page_id for page_id, exhibit_id, number in rows}
        found: dict[int, int] = {}
        query = Page.objects.filter(exhibit_id__in={e for _, e, _ in rows},
                                    number__in={n + 1 for _, _, n in rows})
        for page_id, exhibit_id, number in query.values_list("id", "exhibit_id", "number"):
            if (exhibit_id, number) in after and exhibit_id in self.exhibit_ids:
                self.note(page_id, exhibit_id)
                found[after[(exhibit_id, number)]] = page_id
        return found

    def closest_passage(self, search: QuoteSearch, page_id: int) -> str:
        words, _ = self._page_text({page_id}).get(page_id, ("", ""))
        alignment = fuzz.partial_ratio_alignment(" ".join(search.plain), words)
        return words[alignment.dest_start:alignment.dest_end] if alignment else ""

    # -- record cites -------------------------------------------------------------------------------------------

    def known_prefixes(self) -> set[str]:
        return matter_bates_prefixes(self.matter)

    def bates_pages(self, numbers: list[str]) -> dict[str, list[tuple[int | None, str]]]:
        """For each Bates number found, its pages as ``(page_id or None for a cover sheet, document key)``; the
        document key tells one produced document from another and names its production first
        (``out:<production>:<document>``, ``in:<incoming production>:<exhibit>``)."""
        found: dict[str, list[tuple[int | None, str]]] = defaultdict(list)
        batches = _batches(dict.fromkeys(numbers))
        for batch in batches:
            for bates, page_id, document_id, exhibit_id, production_id in BatesPage.objects.filter(
                production__matter=self.matter, production__status=Production.Status.DONE, bates__in=batch
            ).values_list("bates", "page_id", "document_id", "document__exhibit_id", "production_id"):
                found[bates].append((page_id, f"out:{production_id}:{document_id}"))
                if page_id:
                    self.note(page_id, exhibit_id)
        for batch in batches:
            for bates, page_id, exhibit_id, incoming_id in IncomingBatesPage.objects.filter(
                incoming__matter=self.matter, bates__in=batch
            ).values_list("bates", "page_id", "page__exhibit_id", "incoming_id"):
                found[bates].append((page_id, f"in:{incoming_id}:{exhibit_id}"))
                self.note(page_id, exhibit_id)
        return found
