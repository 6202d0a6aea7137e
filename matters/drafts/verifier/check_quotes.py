"""Quotations checked against the pages or authorities their sentence cites, or the whole evidence. Part of
:class:`matters.drafts.verifier.check.Verification`."""

from typing import Any

from .finding import Kind, Status, Support
from .quotes import QuoteMention

# A quotation this short and cited to nothing is a defined term or a scare quote, not a quotation of a source.
MIN_UNCITED_QUOTE_WORDS = 4


class QuoteChecks:
    """The quotation check of a verification (mixed into ``Verification``)."""

    def _check_quote(self, mention: QuoteMention, support: Support, search) -> None:
        cited = bool(support.pages or support.authorities)
        if mention.word_count < (2 if cited else MIN_UNCITED_QUOTE_WORDS):
            return
        if not search.segments:
            return
        what = "The quotation"
        detail: dict[str, Any] = {}
        if support.pages:
            hits, near = self.evidence.find_quote(search, within=list(dict.fromkeys(support.pages)))
            if not hits:
                # Cited to the wrong exhibit or page: say where its words do appear, if anywhere.
                elsewhere, _ = self.evidence.find_quote(search, candidates=self.evidence.candidates_for(search))
                hits = [h for h in elsewhere if h.similarity == 100]
        elif support.authorities and not any(doc is None for doc, _ in support.authorities):
            docs = [doc for doc, _ in support.authorities if doc is not None]
            for doc in docs:
                page_id = doc.find_quote(search)
                if page_id is not None:
                    self._finding(Kind.QUOTATION, Status.GROUNDED, mention.start, mention.end,
                                  f"{what} is in authority Exhibit {doc.label} ({doc.title}).", [page_id])
                    return
            where = self._quote_elsewhere(search, docs)
            self._finding(Kind.QUOTATION, Status.UNGROUNDED, mention.start, mention.end,
                          f"{what} is not in the cited authority ({', '.join(d.title for d in docs)}) as quoted."
                          + (f" Its words appear in {where[0]}; cite that instead." if where else ""),
                          where[1] if where else [])
            return
        else:
            hits, near = self.evidence.find_quote(search, candidates=self._candidates.get(id(mention)))
        found = {h.page_id for h in hits}
        status, message, sources = self._judge(what, found, support, None)
        tolerant = [h for h in hits if h.similarity < 100 and h.page_id in sources]
        if status in (Status.GROUNDED, Status.NEEDS_RECORD_CITE) and tolerant and not any(
                h.similarity == 100 and h.page_id in sources for h in hits):
            detail["ocr_similarity"] = min(h.similarity for h in tolerant)
            message += (f" Matched in OCR text at {detail['ocr_similarity']:.0f}% similarity (OCR misreads "
                        "letters; compare with the page image).")
        if status == Status.UNGROUNDED and near is not None and near.similarity >= 60:
            passage = self.evidence.closest_passage(search, near.page_id)
            detail["closest_similarity"] = near.similarity
            message += f" The closest passage ({near.similarity:.0f}% similar) reads: “{passage}”."
            sources = sources or [near.page_id]
        self._finding(Kind.QUOTATION, status, mention.start, mention.end, message, sources, **detail)


    def _quote_elsewhere(self, search, cited: list) -> tuple[str, list[int]] | None:
        """Where a quotation not in its cited authority does appear: another authority of the matter, or an
        evidence page; None when nowhere."""
        for doc in self.authorities:
            if doc in cited:
                continue
            page_id = doc.find_quote(search)
            if page_id is not None:
                return f"authority Exhibit {doc.label} ({doc.title}), p. {doc.page_number(page_id)}", [page_id]
        hits, _ = self.evidence.find_quote(search, candidates=self.evidence.candidates_for(search))
        exact = [h.page_id for h in hits if h.similarity == 100]
        if exact:
            return "the evidence (the pages listed as sources)", exact[:20]
        return None
