"""Dates and amounts checked against the evidence and cited authorities, and the judgement every fact shares
(:meth:`FactChecks._judge`). Part of :class:`matters.drafts.verifier.check.Verification`."""

from typing import Any

from .authorities import AuthorityDoc
from .dates import DateMention, display, find_dates
from .finding import Kind, Status, Support
from .money import PERCENT, AmountMention, find_amounts


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
                return Status.UNGROUNDED, (f"{what} is not on the page(s) cited ({cites}); it appears on other pages "
                                    "of the evidence, listed as sources: cite those instead."
                                    ), sorted(elsewhere)[:20]
            return Status.UNGROUNDED, f"{what} is not on the page(s) cited ({cites}), nor anywhere in the evidence.", []
        # A fact keeps a fact's status: "unverified authority" belongs to the citation finding itself. A fact
        # attributed to an authority the matter lacks is judged against the evidence, and the message says the
        # authority could not be read for it.
        attributed, where = "", "the evidence"
        if support.authorities:
            if in_authority:
                return Status.GROUNDED, f"{what} is in the cited authority.", []
            missing = [text for doc, text in support.authorities if doc is None]
            if missing and in_authority is not True:
                attributed = (f" It is attributed to {missing[0]}, which is not among the matter's authorities, "
                              "so the authority could not be checked for it.")
            else:
                where = "the cited authority or the evidence"
        ground = found & grounding
        if ground:
            return Status.NEEDS_RECORD_CITE, (f"{what} appears in the evidence but the sentence cites no record "
                                              "page; cite one of the pages listed as sources." + attributed
                                              ), sorted(ground)[:20]
        if found:
            return Status.UNGROUNDED, (f"{what} appears only on page(s) flagged as a possible prompt injection; an "
                                       "attorney must clear the flag before it grounds anything." + attributed
                                       ), sorted(found)
        return Status.UNGROUNDED, f"{what} is not in {where}.{attributed}", []

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
        if mention.problem:
            self._finding(Kind.DATE, Status.UNREADABLE, mention.start, mention.end,
                          f"“{mention.text}” cannot be read as a date: {mention.problem}. Write the year, or waive "
                          "this finding with a reason.")
            return
        if mention.days:
            self._check_range(mention, support)
            return
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
                    status, message, sources = (Status.AMBIGUOUS, note + "The other reading is supported: " + alt[1],
                                                alt[2])
                else:
                    message = note + message
        notes = self._date_notes(mention)
        if notes:
            message = " ".join(notes) + " " + message
            if status in (Status.GROUNDED, Status.NEEDS_RECORD_CITE) and (mention.written_order or mention.ambiguous
                                                                        or self._mixed_orders):
                status = Status.AMBIGUOUS
        if mention.qualifier:
            detail["qualifier"] = mention.qualifier
        finding = self._finding(Kind.DATE, status, mention.start, mention.end, message, sources, **detail)
        if status == Status.UNGROUNDED:
            self._near.append((finding, primary, set(support.pages)))

    def _date_notes(self, mention: DateMention) -> list[str]:
        """What an attorney must know about how a date was read: its qualifier, a year taken from nearby, a
        numeric order other than the matter's, a draft writing numeric dates in both orders."""
        notes = []
        if mention.qualifier:
            notes.append(f"Written “{mention.qualifier}” {display(mention.readings[0])}: checked as that date.")
        if mention.year_from:
            notes.append(f"“{mention.text}” gives no year; read with the year of “{mention.year_from}” near it.")
        matter_order = self.matter.date_order
        if mention.written_order and mention.written_order != matter_order:
            written = "day first" if mention.written_order == "dmy" else "month first"
            usual = "month first" if matter_order == "mdy" else "day first"
            notes.append(f"{mention.text} can only be read {written}, but this matter writes numeric dates {usual}; "
                         "check which date is meant.")
        if self._mixed_orders and (mention.written_order or mention.ambiguous):
            notes.append(f"This draft writes numeric dates in both orders ({self._mixed_orders}); its numeric dates "
                         "cannot be read by one convention.")
        return notes

    def _check_range(self, mention: DateMention, support: Support) -> None:
        """A range is supported only when every day of it is (``March 9–13, 2012``: five days)."""
        kinds = self.evidence.date_kinds()
        found = self.evidence.pages_with(kinds, list(mention.days))
        first, last = mention.days[0], mention.days[-1]
        judged = [(day, self._judge(display(day), found.get(day, set()), support,
                                    self._authority_holds(support,
                                                          lambda doc, d=day: d in self._facts_of(doc, "date"))))
                  for day in mention.days]
        what = f"{display(first)} to {display(last)}"
        notes = self._date_notes(mention)
        prefix = (" ".join(notes) + " ") if notes else ""
        bad = [day for day, (status, _, _) in judged if status not in (Status.GROUNDED, Status.NEEDS_RECORD_CITE)]
        sources = sorted({p for _, (_, _, pages) in judged for p in pages})[:20]
        if bad and mention.joined and first not in bad and last not in bad:
            # Two full dates ("from January 4, 2021 to June 30, 2021") claim a start and an end: both on the
            # record grounds the period, though the days between are not each stated.
            ends = [judged[0], judged[-1]]
            cited = all(status == Status.GROUNDED for _, (status, _, _) in ends)
            sources = sorted({p for _, (_, _, pages) in ends for p in pages})[:20]
            status = Status.GROUNDED if cited else Status.NEEDS_RECORD_CITE
            message = (f"{display(first)} and {display(last)}, the period's start and end, "
                       + ("are on the cited page(s)." if cited else "appear in the evidence, but not both on a "
                          "cited page; cite the pages listed as sources."))
            status, message, sources = self._other_reading(mention, status, message, sources, support)
            self._finding(Kind.DATE, status, mention.start, mention.end, prefix + message, sources,
                          readings=list(mention.days), unsupported=bad)
            return
        if not bad:
            cited = all(status == Status.GROUNDED for _, (status, _, _) in judged)
            status = Status.GROUNDED if cited else Status.NEEDS_RECORD_CITE
            message = (f"Every day of {what} is on the cited page(s)." if cited else
                       f"Every day of {what} appears in the evidence, but not all on a cited page; cite the pages "
                       "listed as sources.")
        else:
            status = judged[[d for d, _ in judged].index(bad[0])][1][0]
            shown = ", ".join(display(day) for day in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
            message = (f"{len(bad)} of the {len(mention.days)} days of {what} are not supported: {shown}. "
                       + judged[[d for d, _ in judged].index(bad[0])][1][1])
        status, message, sources = self._other_reading(mention, status, message, sources, support)
        self._finding(Kind.DATE, status, mention.start, mention.end, prefix + message, sources,
                      readings=list(mention.days), unsupported=bad)

    def _other_reading(self, mention: DateMention, status: Status, message: str, sources: list,
                       support: Support) -> tuple[Status, str, list]:
        """The rule a single numeric date gets (:meth:`_check_date`), for a range of numeric dates the other order
        reads as a range too (``mention.other_days``): supported in the matter's order, it is ``ambiguous``;
        unsupported, it is ``ambiguous`` where the other reading's start and end are supported, else as judged,
        with the other reading named."""
        other = mention.other_days
        if not other:
            return status, message, sources
        order = "month first" if self.matter.date_order == "mdy" else "day first"
        note = (f"{mention.text} could be {display(mention.days[0])} to {display(mention.days[-1])} or "
                f"{display(other[0])} to {display(other[-1])}; this matter reads numeric dates {order}, so it was "
                f"read as {display(mention.days[0])} to {display(mention.days[-1])}. ")
        if status in (Status.GROUNDED, Status.NEEDS_RECORD_CITE):
            return Status.AMBIGUOUS, note + message, sources
        ends = [other[0], other[-1]]
        found = self.evidence.pages_with(self.evidence.date_kinds(), ends)
        judged = [self._judge(display(day), found.get(day, set()), support,
                              self._authority_holds(support, lambda doc, d=day: d in self._facts_of(doc, "date")))
                  for day in ends]
        if all(j[0] in (Status.GROUNDED, Status.NEEDS_RECORD_CITE) for j in judged):
            return (Status.AMBIGUOUS, note + "The other reading's start and end are supported: " + judged[0][1],
                    sorted({p for j in judged for p in j[2]})[:20])
        return status, note + message, sources

    def _check_amount(self, mention: AmountMention, support: Support) -> None:
        if mention.currency == PERCENT:
            self._check_percent(mention, support)
            return
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

    def _check_percent(self, mention: AmountMention, support: Support) -> None:
        """A percentage is grounded by the same percentage on a page (``12.5%``, ``12.50 percent``), never by a
        bare figure: ``12.50`` on a ledger is not a rate."""
        what = f"{mention.value.normalize():f}%"
        found = self.evidence.pages_with(["amount"], [mention.key]).get(mention.key, set())
        status, message, sources = self._judge(
            what, found, support,
            self._authority_holds(support, lambda doc: mention.key in self._facts_of(doc, "amount")))
        self._finding(Kind.AMOUNT, status, mention.start, mention.end, message, sources, value=mention.key)

    def _unreadable_amount(self, start: int, end: int, text: str) -> None:
        fmt = "1,250.00" if self.matter.number_format == "en" else "1.250,00"
        self._finding(Kind.AMOUNT, Status.UNREADABLE, start, end,
                      f"“{text}” cannot be read as an amount with certainty (this matter writes amounts like {fmt}, "
                      "with at most two decimal places). Write the amount plainly, or waive this finding with a "
                      "reason.")

