"""Bates numbers used by more than one production of a matter, sent or received.

Reserving numbers per matter and prefix keeps LawDesk's own productions apart, but the other side may stamp
with the same prefix (SMITH000001–37 received over SMITH000001–05 sent), and a volume may be produced twice. A
number two productions share names two pages, so a cite of it cannot be trusted to mean either: it is a
discrepancy, listed on the productions page, on the received production's page and in ``import_production``'s
report, and the verifier marks a cite of such a number ``ambiguous`` naming both productions. Numbers are
compared by :func:`matters.incoming.loadfiles.bates_key`: ``DEF 000001``, ``def000001`` and ``DEF00001`` in two
volumes are one number written two ways, and name two pages just the same.
"""

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Max

from matters.incoming.loadfiles import bates_key
from matters.models import BatesPage, IncomingBatesPage, IncomingProduction, Matter, Production


@dataclass(frozen=True)
class Overlap:
    """The numbers two productions share: ``first`` and ``last`` (in sort order of the numbers), ``count``, and
    the two productions as ``(key, name)``, key ``out:<id>`` for a production sent, ``in:<id>`` for one received."""

    first: str
    last: str
    count: int
    a: tuple[str, str]
    b: tuple[str, str]

    def message(self) -> str:
        span = self.first if self.count == 1 else f"{self.first}–{self.last} ({self.count} numbers)"
        return (f"{span} {'is a number' if self.count == 1 else 'are numbers'} of both {self.a[1]} and "
                f"{self.b[1]}: a cite of {'it' if self.count == 1 else 'them'} could mean a page of either. "
                "Ask the producing party to re-stamp, or cite by exhibit and page.")

    def involves(self, key: str) -> bool:
        return key in (self.a[0], self.b[0])


def production_name(key: str, production: Production | IncomingProduction | None = None) -> str:
    """How a message names a production: ``the production sent, SMITH000001–SMITH000005`` or ``the production
    received, VOL001.zip``."""
    kind, pk = key.split(":", 1)
    if production is None:
        model = Production if kind == "out" else IncomingProduction
        production = model.objects.filter(pk=int(pk)).first()
    return f"the production {'sent' if kind == 'out' else 'received'}, {production}"


# How long a matter's overlaps are kept for its unchanged productions (each web process keeps its own).
OVERLAPS_CACHE_S = 3600


def bates_overlaps(matter: Matter) -> list[Overlap]:
    """Every pair of the matter's productions (finished ones sent; every one received) that share a Bates
    number, with the numbers they share; in order of their first number.

    Reading and keying every number of a matter took 145 ms of CPU at 50,000 numbers received, on every view of
    the productions page; the numbers of a finished production never change, so the answer is kept under the
    state of the matter's productions (:func:`_productions_state`) and worked out again only when one is
    finished, received or removed. While a volume is being imported its numbers still grow: nothing is kept."""
    state = _productions_state(matter)
    if state is None:
        return _bates_overlaps(matter)
    key = f"lawdesk:bates-overlaps:{matter.pk}:{state}"
    found = cache.get(key)
    if found is None:
        found = _bates_overlaps(matter)
        cache.set(key, found, OVERLAPS_CACHE_S)
    return found


def _productions_state(matter: Matter) -> str | None:
    """A digest of the matter's finished productions sent and its productions received (id, status, when) and of
    their numbers (how many, the newest row), or None while one received is still importing. Four small queries:
    what the page views pay instead of reading every number."""
    sent = list(Production.objects.filter(matter=matter, status=Production.Status.DONE).order_by("pk")
                .values_list("pk", "finished_at"))
    received = list(IncomingProduction.objects.filter(matter=matter).order_by("pk")
                    .values_list("pk", "status", "created_at"))
    if any(status == IncomingProduction.Status.IMPORTING for _, status, _ in received):
        return None
    numbers = (BatesPage.objects.filter(production__matter=matter).aggregate(Count("pk"), Max("pk")),
               IncomingBatesPage.objects.filter(incoming__matter=matter).aggregate(Count("pk"), Max("pk")))
    return hashlib.sha256(repr((sent, received, numbers)).encode()).hexdigest()[:32]


def _bates_overlaps(matter: Matter) -> list[Overlap]:
    held = [(bates, f"out:{production_id}") for bates, production_id in BatesPage.objects.filter(
        production__matter=matter, production__status=Production.Status.DONE).values_list("bates", "production_id")]
    held += [(bates, f"in:{incoming_id}") for bates, incoming_id in IncomingBatesPage.objects.filter(
        incoming__matter=matter).values_list("bates", "incoming_id")]
    keys = [bates_key(bates) for bates, _ in held]
    holders: dict[tuple, set[str]] = defaultdict(set)
    for key, (_, holder) in zip(keys, held):
        holders[key].add(holder)
    twice = {key for key, owners in holders.items() if len(owners) > 1}
    written: dict[tuple, set[str]] = defaultdict(set)  # how each number held twice is written, for the message
    if twice:
        for key, (bates, _) in zip(keys, held):
            if key in twice:
                written[key].add(bates)
    shared: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key in twice:
        ordered = sorted(holders[key])
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                shared[a, b].append(" / ".join(sorted(written[key])))
    if not shared:
        return []
    names = {key: production_name(key, obj) for key, obj in _productions(matter, {k for pair in shared for k in pair})}
    overlaps = [Overlap(min(numbers), max(numbers), len(numbers), (a, names[a]), (b, names[b]))
                for (a, b), numbers in shared.items()]
    return sorted(overlaps, key=lambda o: (o.first, o.a, o.b))


def _productions(matter: Matter, keys: set[str]):
    sent = {int(k[4:]) for k in keys if k.startswith("out:")}
    received = {int(k[3:]) for k in keys if k.startswith("in:")}
    for production in matter.productions.filter(pk__in=sent):
        yield f"out:{production.pk}", production
    for incoming in matter.incoming_productions.filter(pk__in=received):
        yield f"in:{incoming.pk}", incoming
