"""Record cites checked: Bates numbers and ranges against the matter's productions; exhibit cites, docket cites
(``ECF No. 31, PageID.412``) and record documents cited by name (``Compl. ¶ 12``) against its exhibits. Part of
:class:`matters.drafts.verifier.check.Verification`."""

import re
from dataclasses import replace

from matters.exhibits.search import page_ids_with_words
from matters.models import Exhibit, Page
from matters.productions.overlaps import production_name

from .finding import Kind, Status
from .record import BatesMention, DocketMention, ExhibitMention, PleadingMention, docket_key, pleading_key

MAX_RANGE_PAGES = 5000


_ID_PAGES = re.compile(r"\bat\s+(?P<first>\d{1,5})(?:\s*[-–—]\s*(?P<last>\d{1,5}))?")
_ID_PARAGRAPHS = re.compile(r"¶¶?\s*(?P<first>\d{1,4})(?:\s*[-–—]\s*(?P<last>\d{1,4}))?")


def _as_id(mention, id_cite):
    """The record cite ``mention`` as the ``Id.`` ``id_cite`` (a CaseMention) refers to it: its span, and its
    own pages (``Id. at 4``) or paragraphs (``Id. ¶ 14``) where it gives them."""
    span = {"start": id_cite.start, "end": id_cite.end, "text": id_cite.text}
    pages = _ID_PAGES.search(id_cite.pin_cite or id_cite.text)
    paragraphs = _ID_PARAGRAPHS.search(id_cite.pin_cite or id_cite.text)
    if isinstance(mention, PleadingMention) and paragraphs:
        first = int(paragraphs.group("first"))
        return replace(mention, first=first, last=int(paragraphs.group("last") or first), **span)
    if isinstance(mention, (ExhibitMention, DocketMention)) and pages:
        first = int(pages.group("first"))
        extra = {"first_id": None, "last_id": None} if isinstance(mention, DocketMention) else {}
        return replace(mention, first_page=first, last_page=int(pages.group("last") or first), **span, **extra)
    return replace(mention, **span)


class RecordChecks:
    """The record-cite checks of a verification (mixed into ``Verification``)."""

    def _check_record(self, mention, id_cite=None) -> list[int]:
        """Check one record cite of any form; with ``id_cite``, the ``Id.`` that refers to it, read with the
        Id.'s own pin. Returns the evidence page ids it names."""
        if id_cite is not None:
            mention = _as_id(mention, id_cite)
        if isinstance(mention, BatesMention):
            return self._check_bates(mention)
        if isinstance(mention, ExhibitMention):
            return self._check_exhibit(mention)
        if isinstance(mention, DocketMention):
            return self._check_docket(mention)
        return self._check_pleading(mention)

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
        forms = {n: mention.forms(n) for n in numbers}
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
        shared = {n: keys for n in sorted(pages_of)
                  if len(keys := list(dict.fromkeys(doc.rsplit(":", 1)[0] for _, doc in pages_of[n]))) > 1}
        if shared:
            n, keys = next(iter(shared.items()))
            names = " and ".join(production_name(key) for key in keys[:2])
            self._finding(kind, Status.AMBIGUOUS, mention.start, mention.end,
                          f"{mention.bates(n)} is a number of more than one production of this matter ({names}): "
                          "the cite could mean a page of either. Check which is meant and cite it by exhibit and "
                          "page.", [p for p in page_ids if p in self.evidence.all_pages], productions=len(keys))
            return [p for p in page_ids if p in self.evidence.all_pages]
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


    # -- docket cites and record documents cited by name ---------------------------------------------------------

    def _cited_as(self) -> dict[int, str]:
        """``{exhibit id: cites as}`` of the matter's evidence exhibits that have one (one query)."""
        if not hasattr(self, "_cites_as"):
            self._cites_as = dict(self.matter.exhibits.filter(pk__in=self.evidence.exhibit_ids).exclude(
                cites_as="").values_list("id", "cites_as"))
        return self._cites_as

    def _pages_of(self, exhibit_id: int) -> list[tuple[int, int]]:
        """``(number, page id)`` of an exhibit's pages, one query per exhibit."""
        if exhibit_id not in self._exhibit_pages:
            self._exhibit_pages[exhibit_id] = list(
                Exhibit.objects.get(pk=exhibit_id).pages.order_by("number").values_list("number", "id"))
            for _, page_id in self._exhibit_pages[exhibit_id]:
                self.evidence.note(page_id, exhibit_id)
        return self._exhibit_pages[exhibit_id]

    def _docket_exhibit(self, mention: DocketMention) -> int | None:
        """The evidence exhibit that is docket entry ``mention.key`` (looked up once per entry)."""
        found = self.__dict__.setdefault("_dockets", {})
        if mention.key not in found:
            found[mention.key] = self._find_docket_exhibit(mention)
        return found[mention.key]

    def _find_docket_exhibit(self, mention: DocketMention) -> int | None:
        """The evidence exhibit that is docket entry ``mention.key``: set so by its "cites as" value, or carrying
        the court's CM/ECF header for that entry (``Document 45-2``, ``ECF No. 31``) on a page."""
        for exhibit_id, value in self._cited_as().items():
            if docket_key(value) == mention.key:
                return exhibit_id
        number = mention.entry + (rf"-{mention.attachment}" if mention.attachment else r"(?!-\d)")
        header = re.compile(rf"\b(?:Document|Doc\.?|ECF\s+No\.?|Dkt\.?)\s*#?\s*{number}\b", re.IGNORECASE)
        # Full-text candidates, then the header itself: the two indexes split "45-2" differently (SQLite FTS5 into
        # 45 and 2, PostgreSQL into 45 and -2), so only the entry number is searched for.
        for page_id, exhibit_id in page_ids_with_words(matter=self.matter, words=["document", mention.entry],
                                                       limit=50):
            if exhibit_id in self.evidence.exhibit_ids:
                text = Page.objects.filter(pk=page_id).values_list("text", flat=True).first() or ""
                if header.search(text):
                    return exhibit_id
        return None

    def _label_of(self, exhibit_id: int) -> str:
        return self.matter.exhibits.filter(pk=exhibit_id).values_list("label", flat=True).first()

    def _check_docket(self, mention: DocketMention) -> list[int]:
        kind = Kind.EXHIBIT_CITE
        exhibit_id = self._docket_exhibit(mention)
        if exhibit_id is None:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"No exhibit of this matter is docket entry {mention.key}: none is set to cite as "
                          f"“ECF No. {mention.key}” and no evidence page carries the court's header for it. Add "
                          "the filing, or set “cites as” on its exhibit.")
            return []
        label = self._label_of(exhibit_id)
        pages = self._pages_of(exhibit_id)
        by_number = dict(pages)
        if mention.first_id is not None:
            wanted_ids = range(mention.first_id, (mention.last_id or mention.first_id) + 1)
            texts = _texts_of(pages)
            found = []
            for page_id_stamp in wanted_ids:
                stamp = re.compile(rf"Page\s?ID(?:\.|\s*#:?\s*){page_id_stamp}\b", re.IGNORECASE)
                hit = _first_page_with(stamp, pages, texts)
                if hit is None:
                    self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                                  f"No page of Exhibit {label} (docket entry {mention.key}) carries PageID "
                                  f"{page_id_stamp}.")
                    return []
                found.append(hit)
            self._finding(kind, Status.GROUNDED, mention.start, mention.end,
                          f"Exhibit {label} (docket entry {mention.key}), the page(s) stamped PageID "
                          f"{mention.first_id}" + (f"–{mention.last_id}" if mention.last_id != mention.first_id
                                                   else "") + ".", found)
            return found
        if mention.first_page is None:
            self._finding(kind, Status.GROUNDED, mention.start, mention.end,
                          f"Exhibit {label} is docket entry {mention.key} ({len(pages)} pages); no page is given, "
                          "so every page was read.", [pid for _, pid in pages][:1])
            return [pid for _, pid in pages]
        wanted = range(mention.first_page, (mention.last_page or mention.first_page) + 1)
        absent = [n for n in wanted if n not in by_number]
        if absent or not wanted:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"Exhibit {label} (docket entry {mention.key}) has {len(pages)} page(s); page "
                          f"{absent[0] if absent else mention.first_page} does not exist.")
            return []
        page_ids = [by_number[n] for n in wanted]
        self._finding(kind, Status.GROUNDED, mention.start, mention.end,
                      f"Exhibit {label} (docket entry {mention.key}), page(s) {mention.first_page}"
                      + (f"–{mention.last_page}" if mention.last_page != mention.first_page else "") + ".", page_ids)
        return page_ids

    def _check_pleading(self, mention: PleadingMention) -> list[int]:
        kind = Kind.EXHIBIT_CITE
        exhibit_id = next((e for e, value in self._cited_as().items() if pleading_key(value) == mention.key), None)
        if exhibit_id is None:
            self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                          f"No evidence exhibit of this matter is set to cite as “{mention.document}”, so "
                          f"“{mention.text}” names nothing LawDesk can check. Set “cites as” on that document's "
                          "exhibit.")
            return []
        label = self._label_of(exhibit_id)
        pages = self._pages_of(exhibit_id)
        texts = _texts_of(pages)
        found = []
        for paragraph in range(mention.first, mention.last + 1):
            marker = re.compile(rf"(?m)(?:^\s*|¶\s*){paragraph}\.?(?=\s)")
            hit = _first_page_with(marker, pages, texts)
            if hit is None:
                self._finding(kind, Status.UNGROUNDED, mention.start, mention.end,
                              f"Exhibit {label} (“{mention.document}”) has no numbered paragraph {paragraph}.")
                return []
            found.append(hit)
        found = list(dict.fromkeys(found))
        self._finding(kind, Status.GROUNDED, mention.start, mention.end,
                      f"Exhibit {label} (“{mention.document}”), the page(s) holding ¶ {mention.first}"
                      + (f"–{mention.last}" if mention.last != mention.first else "") + ".", found)
        return found


def _texts_of(pages: list[tuple[int, int]]) -> dict[int, str]:
    """The stored text of each of ``pages`` (``(number, page id)`` pairs), by page id; one query."""
    return dict(Page.objects.filter(pk__in=[pid for _, pid in pages]).values_list("id", "text"))


def _first_page_with(pattern: re.Pattern, pages: list[tuple[int, int]], texts: dict[int, str]) -> int | None:
    """The id of the first of ``pages``, in page order, whose text ``pattern`` finds, or None."""
    return next((pid for _, pid in pages if pattern.search(texts.get(pid, ""))), None)
