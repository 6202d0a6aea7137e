"""Record cites checked: Bates numbers and ranges against the matter's productions, exhibit cites against its
exhibits. Part of :class:`matters.verifier.check.Verification`."""

from ..models import Exhibit
from .finding import Kind, Status
from .record import BatesMention, ExhibitMention

MAX_RANGE_PAGES = 5000


class RecordChecks:
    """The record-cite checks of a verification (mixed into ``Verification``)."""

    @staticmethod
    def _bates_forms(mention: BatesMention, n: int) -> list[str]:
        bare = mention.prefix.rstrip(" ")
        return list(dict.fromkeys([mention.bates(n), f"{bare}{n:0{mention.digits}d}", f"{bare} {n:0{mention.digits}d}"]))


    def _check_bates(self, mention: BatesMention) -> list[int]:
        kind = Kind.BATES_CITE
        if mention.last < mention.first:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"The range {mention.text} ends before it starts.")
            return []
        if mention.last - mention.first >= MAX_RANGE_PAGES:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
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
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
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
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"{first_missing} {what} in this matter"
                          + (f" ({len(missing)} of the {len(numbers)} numbers cited are missing)."
                             if len(numbers) > 1 else ".") + where,
                          [p for n in pages_of for p, _ in pages_of[n] if p])
            return [p for n in sorted(pages_of) for p, _ in pages_of[n] if p]
        page_ids = [p for n in sorted(pages_of) for p, _ in pages_of[n] if p]
        not_evidence = [p for p in page_ids if p not in self.evidence.all_pages]
        if not_evidence:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"{mention.text} names a page that is not evidence (LawDesk's own output, an authority, or "
                          "an exhibit not ready); it cannot support a fact.", not_evidence)
            return [p for p in page_ids if p in self.evidence.all_pages]
        documents = list(dict.fromkeys(doc for n in sorted(pages_of) for _, doc in pages_of[n]))
        if len(documents) > 1:
            self._finding(kind, Status.AMBIGUOUS, mention.start, mention.end,
                          f"The range {mention.text} crosses from one produced document into another "
                          f"({len(documents)} documents); check that the cite means all of them.", page_ids,
                          documents=len(documents))
        else:
            self._finding(kind, Status.GROUNDED, mention.start, mention.end,
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
        kind = Kind.EXHIBIT_CITE
        label = mention.label.lower()
        if label not in self._exhibits:
            self._exhibits[label] = self.matter.exhibits.filter(label__iexact=mention.label).first()
        exhibit = self._exhibits[label]
        if exhibit is None:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"This matter has no Exhibit {mention.label}.")
            return []
        if exhibit.pk not in self.evidence.exhibit_ids:
            why = ("is LawDesk's own output coming back" if exhibit.marked_generated else
                   "is an authority, not evidence" if exhibit.origin == "authority" else
                   f"is {exhibit.get_status_display().lower()}" if exhibit.status != Exhibit.Status.READY else
                   "is not evidence")
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
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
            self._finding(kind, Status.GROUNDED, mention.start, mention.end,
                          f"Exhibit {exhibit.label} ({len(pages)} pages); no page is given, so every page was read.",
                          page_ids[:1])
            return page_ids
        wanted = range(mention.first_page, (mention.last_page or mention.first_page) + 1)
        if not wanted:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"The page range {mention.first_page}–{mention.last_page} of Exhibit {exhibit.label} ends "
                          "before it starts.")
            return []
        absent = [n for n in wanted if n not in by_number]
        if absent:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"Exhibit {exhibit.label} has {len(pages)} page(s); page {absent[0]} does not exist.")
            return []
        page_ids = [by_number[n] for n in wanted]
        self._finding(kind, Status.GROUNDED, mention.start, mention.end,
                      f"Exhibit {exhibit.label}, page{'s' if len(page_ids) > 1 else ''} "
                      f"{mention.first_page}{'–' + str(mention.last_page) if len(page_ids) > 1 else ''}.", page_ids)
        return page_ids

