"""The evidence a verification checks against: every evidence page of the matter, looked up by value.

Evidence is what :func:`matters.selectors.evidence_exhibits` returns (origins client, opposing party, third
party, court; ready; never LawDesk's own output), all of it, not the subset a model saw. A page flagged as a
possible prompt injection grounds nothing until an attorney clears the flag; it is kept apart so a finding can
say that a claim appears only there.
"""

from collections import defaultdict
from dataclasses import dataclass

from rapidfuzz import fuzz

from ..models import BatesPage, IncomingBatesPage, Matter, Page, PageFact, Production
from ..search import page_ids_with_words
from ..selectors import evidence_exhibits
from .facts import matter_index_facts
from .quotes import QuoteSearch
from .text import match_words

# OCR misreads a letter here and there; a quotation on an OCR'd page matches at this similarity (0-100,
# RapidFuzz partial ratio over the match words) and the finding reports the figure.
OCR_SIMILARITY = 90
_CANDIDATES = 20


@dataclass(frozen=True)
class QuoteHit:
    page_id: int
    similarity: float  # 100 for an exact match (after the allowed alterations)


class Evidence:
    """Lookups over one matter's evidence pages. Built once per verification (a few queries, whatever the
    number of pages); each lookup is one indexed query."""

    def __init__(self, matter: Matter):
        self.matter = matter
        matter_index_facts(matter)
        self.grounding: set[int] = set()
        self.flagged: set[int] = set()
        for page_id, reason, cleared in Page.objects.filter(exhibit__in=evidence_exhibits(matter)).values_list(
            "id", "injection_reason", "injection_cleared_reason"
        ):
            (self.flagged if reason and not cleared else self.grounding).add(page_id)
        self._texts: dict[int, tuple[str, str]] = {}

    @property
    def all_pages(self) -> set[int]:
        return self.grounding | self.flagged

    def date_kinds(self) -> list[str]:
        return ["date", f"date_{self.matter.date_order}"]

    def pages_with(self, kinds: list[str], values: list[str], within: set[int] | None = None) -> dict[str, set[int]]:
        """For each of ``values``, the evidence pages (grounding or flagged) holding it as one of ``kinds``."""
        if not values:
            return {}
        rows = PageFact.objects.filter(page__exhibit__matter=self.matter, kind__in=kinds, value__in=values)
        if within is not None:
            rows = rows.filter(page_id__in=within)
        found: dict[str, set[int]] = defaultdict(set)
        for page_id, value in rows.values_list("page_id", "value"):
            if page_id in self.grounding or page_id in self.flagged:
                found[value].add(page_id)
        return found

    def dates_near(self, iso: str, within: set[int] | None, days: int = 7) -> list[tuple[str, int]]:
        """Dates within ``days`` of ``iso`` on evidence pages, as ``(iso, page_id)``, nearest first."""
        import datetime as dt

        day = dt.date.fromisoformat(iso)
        low, high = (day - dt.timedelta(days=days)).isoformat(), (day + dt.timedelta(days=days)).isoformat()
        rows = PageFact.objects.filter(page__exhibit__matter=self.matter, kind__in=self.date_kinds(),
                                       value__gte=low, value__lte=high)
        if within is not None:
            rows = rows.filter(page_id__in=within)
        near = [(v, p) for p, v in rows.values_list("page_id", "value") if p in self.grounding and v != iso]
        return sorted(near, key=lambda vp: abs((dt.date.fromisoformat(vp[0]) - day).days))

    def _page_text(self, page_ids: set[int]) -> dict[int, tuple[str, str]]:
        missing = [p for p in page_ids if p not in self._texts]
        for page_id, text, source in Page.objects.filter(pk__in=missing).values_list("id", "text", "source"):
            self._texts[page_id] = (match_words(text), source)
        return {p: self._texts[p] for p in page_ids if p in self._texts}

    def find_quote(self, search: QuoteSearch, within: list[int] | None = None) -> tuple[list[QuoteHit], QuoteHit | None]:
        """Pages where the quotation appears: within ``within`` (cited pages, in order; consecutive pages are
        also read as one text, for a quotation that runs over a page break) or anywhere in the evidence.
        Returns the hits (exact, or on an OCR'd page at ``OCR_SIMILARITY`` or more) and, when there is none,
        the closest passage seen as a near miss."""
        if within is None:
            words = sorted(set(search.words), key=len, reverse=True)[:8]
            candidates = page_ids_with_words(matter=self.matter, words=words, limit=_CANDIDATES)
            if not candidates:
                candidates = page_ids_with_words(matter=self.matter, words=words, any_word=True, limit=_CANDIDATES)
            pages = [p for p in candidates if p in self.all_pages]
        else:
            pages = [p for p in within if p in self.all_pages]
        texts = self._page_text(set(pages))
        hits: list[QuoteHit] = []
        best: QuoteHit | None = None
        plain = " ".join(search.plain)
        for i, page_id in enumerate(pages):
            if page_id not in texts:
                continue
            words, source = texts[page_id]
            if search.find(words) is not None:
                hits.append(QuoteHit(page_id, 100.0))
                continue
            if within is not None and i + 1 < len(pages) and pages[i + 1] in texts:
                if search.find(words + " " + texts[pages[i + 1]][0]) is not None:
                    hits.append(QuoteHit(page_id, 100.0))
                    continue
            score = fuzz.partial_ratio(plain, words) if plain else 0.0
            if source == Page.Source.OCR and score >= OCR_SIMILARITY:
                hits.append(QuoteHit(page_id, round(score, 1)))
            elif best is None or score > best.similarity:
                best = QuoteHit(page_id, round(score, 1))
        return hits, best

    def closest_passage(self, search: QuoteSearch, page_id: int) -> str:
        words, _ = self._page_text({page_id}).get(page_id, ("", ""))
        alignment = fuzz.partial_ratio_alignment(" ".join(search.plain), words)
        return words[alignment.dest_start:alignment.dest_end] if alignment else ""

    # -- record cites -------------------------------------------------------------------------------------------

    def known_prefixes(self) -> set[str]:
        prefixes = set(Production.objects.filter(matter=self.matter).values_list("prefix", flat=True))
        for bates in IncomingBatesPage.objects.filter(incoming__matter=self.matter).values_list("bates", flat=True)[:5000]:
            head = bates.rstrip("0123456789")
            if head:
                prefixes.add(head)
        return prefixes

    def bates_pages(self, numbers: list[str]) -> dict[str, list[tuple[int | None, str]]]:
        """For each Bates number found, its pages as ``(page_id or None for a cover sheet, document key)``; the
        document key tells one produced document from another."""
        found: dict[str, list[tuple[int | None, str]]] = defaultdict(list)
        for bates, page_id, document_id in BatesPage.objects.filter(
            production__matter=self.matter, production__status=Production.Status.DONE, bates__in=numbers
        ).values_list("bates", "page_id", "document_id"):
            found[bates].append((page_id, f"out:{document_id}"))
        for bates, page_id, exhibit_id in IncomingBatesPage.objects.filter(
            incoming__matter=self.matter, bates__in=numbers
        ).values_list("bates", "page_id", "page__exhibit_id"):
            found[bates].append((page_id, f"in:{exhibit_id}"))
        return found

    def production_ranges(self, prefix: str) -> list[str]:
        return [str(p) for p in Production.objects.filter(matter=self.matter, prefix__iexact=prefix.strip(),
                                                           status=Production.Status.DONE)]
