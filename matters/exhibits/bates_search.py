"""Bates numbers typed in a matter's search box: ``SMITH000123``, ``SMITH 000123``, ``SMITH_000123``, a range
``SMITH000003-SMITH000005`` or ``SMITH000003-005``, read by the verifier's own parser
(:func:`matters.drafts.verifier.record.find_bates`) and looked up among the numbers the matter's productions
recorded: the pages stamped by its finished productions sent (``BatesPage``) and the pages of its productions
received (``IncomingBatesPage``). A Bates number is stamped on the produced copy, never in the exhibit's own
text, so the full-text index cannot find it; this looks it up beside that search.
"""

import re
from dataclasses import dataclass

from django.urls import reverse

from matters.drafts.verifier.record import find_bates
from matters.models import BatesPage, IncomingBatesPage, IncomingProduction, Matter, Production

# A range typed in the search box shows at most this many pages, as the text search shows its best 50.
BATES_HITS_MAX = 50
_BEFORE_DIGITS = re.compile(r"\b[A-Za-z][A-Za-z&_-]*(?=[-_ ]?\d)")


@dataclass(frozen=True)
class BatesHit:
    """One page a Bates number names. ``direction``: ``sent`` or ``received``; ``production``: the production's
    name (its range, or the volume's file name) and ``production_url`` where it is listed;
    ``exhibit_id``/``exhibit_label``/``exhibit_title``/``page_number``: the exhibit page the number was stamped
    on or received with, all None for a production's cover or slip sheet, which has no exhibit page."""

    bates: str
    direction: str
    production: str
    production_url: str
    exhibit_id: int | None
    exhibit_label: str | None
    exhibit_title: str | None
    page_number: int | None


@dataclass(frozen=True)
class BatesResults:
    """What the search box shows for the Bates numbers in a query: ``numbers``, the numbers asked for as
    written (one a range); ``hits``, at most ``BATES_HITS_MAX`` pages in Bates order; ``more``, True when the
    numbers name more pages than that."""

    numbers: list[str]
    hits: list[BatesHit]
    more: bool


def matter_bates_prefixes(matter: Matter) -> set[str]:
    """The Bates prefixes ``matter``'s productions use: each production sent's prefix, and the letters before
    the digits of the numbers received (``JONES000042`` -> ``JONES``)."""
    prefixes = set(Production.objects.filter(matter=matter).values_list("prefix", flat=True))
    for received in IncomingProduction.objects.filter(matter=matter).values_list("bates_prefixes", flat=True):
        prefixes.update(received)
    return prefixes


def _numbers_asked(matter: Matter, query: str) -> tuple[list[str], list[str]]:
    """The Bates numbers or ranges in ``query`` as written, and every form of every number they name (in Bates
    order, at most ``BATES_HITS_MAX + 1`` numbers). The parser reads prefixes in capitals, as they are stamped:
    letters typed just before digits are read in capitals (``smith000003``), the words around them as typed, so
    ``through`` still joins a range."""
    if not any(character.isdigit() for character in query):
        # Every Bates number has digits: a search of words alone reads no prefixes (a query on every search).
        return [], []
    typed = _BEFORE_DIGITS.sub(lambda m: m.group(0).upper(), query)
    mentions = find_bates(typed, matter_bates_prefixes(matter))
    forms: list[str] = []
    count = 0
    for mention in mentions:
        for number in range(mention.first, mention.last + 1):
            if count > BATES_HITS_MAX:
                break
            forms += mention.forms(number)
            count += 1
    return [m.text for m in mentions], list(dict.fromkeys(forms))


def matter_bates_search(*, matter: Matter, query: str) -> BatesResults | None:
    """Return the pages of ``matter`` that the Bates numbers in ``query`` name, sent and received, or None when
    ``query`` holds no Bates number. A number of a production not finished is not shown: its pages are not
    stamped yet. A range that ends before it starts names nothing."""
    numbers, forms = _numbers_asked(matter, query)
    if not numbers:
        return None
    hits = []
    sent = (BatesPage.objects.filter(production__matter=matter, production__status=Production.Status.DONE,
                                     bates__in=forms)
            .select_related("production", "page__exhibit").order_by("bates", "production_id")[:BATES_HITS_MAX + 1])
    productions_url = reverse("matters:productions", args=[matter.pk])
    for row in sent:
        page = row.page
        hits.append(BatesHit(row.bates, "sent", str(row.production), productions_url,
                             page.exhibit_id if page else None, page.exhibit.label if page else None,
                             page.exhibit.title if page else None, page.number if page else None))
    received = (IncomingBatesPage.objects.filter(incoming__matter=matter, bates__in=forms)
                .select_related("incoming", "page__exhibit").order_by("bates", "incoming_id")[:BATES_HITS_MAX + 1])
    for row in received:
        hits.append(BatesHit(row.bates, "received", str(row.incoming),
                             reverse("matters:incoming", args=[matter.pk, row.incoming_id]), row.page.exhibit_id,
                             row.page.exhibit.label, row.page.exhibit.title, row.page.number))
    hits.sort(key=lambda hit: (hit.bates, hit.direction))
    return BatesResults(numbers, hits[:BATES_HITS_MAX], len(hits) > BATES_HITS_MAX)
