"""Dates and amounts checked against the evidence and cited authorities, and the judgement every fact shares
(:meth:`FactChecks._judge`). Part of :class:`matters.verifier.check.Verification`."""

from typing import Any

from .authorities import AuthorityDoc
from .dates import DateMention, display, find_dates
from .finding import Kind, Status, Support
from .money import AmountMention, find_amounts


class FactChecks:
    """The date and amount checks of a verification (mixed into ``Verification``)."""

    def _suggest_near_dates(self) -> None:
        near = self.evidence.dates_near_many(sorted({iso for _, iso, _ in self._near}))
        for finding, iso, within in self._near:
            close = [(v, p) for v, p in near.get(iso, []) if not within or p in within]
            if close:
                value, page_id = close[0]
                finding.message += f" The nearest date there is {display(value)} (listed as a source)."
                finding.sources = finding.sources or [page_id]
                finding.detail["nearest"] = value


    def _judge(self, what: str, found: set[int], support: Support,
               in_authority: bool | None = None) -> tuple[str, str, list[int]]:
        """Status, message and sources for a fact found on ``found`` pages, given what its sentence cites.
        ``in_authority`` is whether a cited authority holds it (None: not looked up)."""
        grounding = self.evidence.grounding
        if support.pages:
            cited = set(support.pages)
            on_cited = found & cited & grounding
            if on_cited:
                return Status.GROUNDED, f"{what} is on the cited page(s).", sorted(on_cited)
            flagged = found & cited - grounding
            if flagged:
                return Status.UNGROUNDED, (f"{what} is on the cited page(s) only where a page is flagged as a possible "
                                    "prompt injection; an attorney must clear the flag before it grounds anything."
                                    ), sorted(flagged)
            elsewhere = found & grounding
            cites = ", ".join(dict.fromkeys(support.record_cites))
            if elsewhere:
                return Status.UNGROUNDED, (f"{what} is not on the page(s) cited ({cites}); it appears on other pages of "
                                    "the evidence, listed as sources: cite those instead."), sorted(elsewhere)[:20]
            return Status.UNGROUNDED, f"{what} is not on the page(s) cited ({cites}), nor anywhere in the evidence.", []
        if support.authorities:
            if in_authority:
                return Status.GROUNDED, f"{what} is in the cited authority.", []
            missing = [text for doc, text in support.authorities if doc is None]
            if missing and in_authority is not True:
                return Status.UNVERIFIED_AUTHORITY, (f"{what} is attributed to {missing[0]}, which is not among the matter's "
                                    "authorities, so it cannot be checked. Add the authority or confirm it."), []
        ground = found & grounding
        if ground:
            return Status.NEEDS_RECORD_CITE, (f"{what} appears in the evidence but the sentence cites no record page; cite "
                                "one of the pages listed as sources."), sorted(ground)[:20]
        if found:
            return Status.UNGROUNDED, (f"{what} appears only on page(s) flagged as a possible prompt injection; an "
                                "attorney must clear the flag before it grounds anything."), sorted(found)
        where = "the cited authority or the evidence" if support.authorities else "the evidence"
        return Status.UNGROUNDED, f"{what} is not in {where}.", []

    def _authority_holds(self, support: Support, test) -> bool | None:
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

    def _check_date(self, mention: DateMention, support: Support) -> None:
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
            if status in (Status.GROUNDED, Status.NEEDS_RECORD_CITE):
                status, message = Status.AMBIGUOUS, note + message
            else:
                alt = self._judge(display(other), found.get(other, set()), support,
                                  self._authority_holds(support, in_doc(other)))
                if alt[0] in (Status.GROUNDED, Status.NEEDS_RECORD_CITE):
                    status, message, sources = Status.AMBIGUOUS, note + "The other reading is supported: " + alt[1], alt[2]
                else:
                    message = note + message
        finding = self._finding(Kind.DATE, status, mention.start, mention.end, message, sources, **detail)
        if status == Status.UNGROUNDED:
            self._near.append((finding, primary, set(support.pages)))

    def _check_amount(self, mention: AmountMention, support: Support) -> None:
        what = f"{mention.currency} {mention.value:,.2f}"
        if mention.words_disagree:
            self._finding(Kind.AMOUNT, Status.UNGROUNDED, mention.start, mention.end,
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
        self._finding(Kind.AMOUNT, status, mention.start, mention.end, message, sources, value=mention.key)

