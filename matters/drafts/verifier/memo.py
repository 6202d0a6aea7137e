"""Findings kept per paragraph, so an edit re-checks only what it changed (issue 27: under 100 ms for a
one-paragraph edit of a 100-page brief, the result the same as verifying the whole text).

A paragraph's findings are kept under its key (:func:`paragraph_key`): the paragraph's text, the state of the
evidence and of the matter's reading it was checked against (:func:`evidence_state`), and what outside the
paragraph its findings read (:meth:`matters.drafts.verifier.check.Verification._paragraph_keys`). Anything that
could change a finding changes the key, so a kept finding is never served for evidence it was not checked against:
an exhibit added, changed or made ready, a production finished or served, an incoming production loaded, a page's
prompt-injection flag set or cleared, the matter's court, date order or number format changed, a deadline saved on
the matter or deleted.

One :class:`Memo` per process (:data:`shared`), bounded; a paragraph it lacks is simply checked again.
"""

import datetime as dt
import hashlib
import threading
from collections import OrderedDict

from django.conf import settings

from matters.models import Deadline, Exhibit, IncomingProduction, Matter, Production

from .finding import FindingData

# Bumped when what a finding says changes, so findings kept by an older reading are not served.
FORMAT = 3
# Paragraphs kept: a 100-page brief has about a thousand; a few dozen briefs in progress fit.
_KEEP = 50_000


def evidence_state(matter: Matter, evidence) -> bytes:
    """A digest of everything outside the draft a finding depends on: every exhibit of ``matter`` (id, label,
    title, origin, status, kind, when it last changed, how it and a transcript of it are cited, whether it is marked
    generated), the exhibits the verification counts as evidence (``evidence.exhibit_ids``), its
    productions and incoming productions (status, when finished and served), the pages flagged as a possible
    prompt injection (``evidence.flagged``), the matter's court, date order and number format, the OCR confidence
    under which a finding warns, the year (two-digit years are read against it), and the matter's saved deadlines
    (a deadline the draft states is checked against them: :mod:`matters.drafts.verifier.check_deadlines`). Four
    queries."""
    parts = [
        FORMAT, matter.pk, matter.court, matter.date_order, matter.number_format,
        settings.LAWDESK_OCR_LOW_CONFIDENCE, dt.date.today().year,
        list(Exhibit.objects.filter(matter=matter).order_by("id").values_list(
            "id", "label", "title", "original_name", "origin", "status", "kind", "updated_at", "facts_index",
            "cites_as", "transcript_cite", "generated_reason", "generated_override_reason")),
        list(Production.objects.filter(matter=matter).order_by("id").values_list(
            "id", "status", "prefix", "first_number", "last_number", "finished_at", "served_at")),
        list(IncomingProduction.objects.filter(matter=matter).order_by("id").values_list(
            "id", "status", "bates_prefixes")),
        sorted(evidence.flagged),
        sorted(evidence.exhibit_ids),
        list(Deadline.objects.filter(matter=matter).order_by("id").values_list(
            "id", "title", "event_date", "period", "unit", "before", "rules", "due_date", "due_at")),
    ]
    return hashlib.blake2b(repr(parts).encode(), digest_size=20).digest()


def paragraph_key(state: bytes, mixed_orders: str, text: str, outside: list) -> bytes:
    """The key a paragraph's findings are kept under (see the module's docstring)."""
    digest = hashlib.blake2b(state, digest_size=20)
    digest.update(repr((mixed_orders, outside)).encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.digest()


class Memo:
    """Paragraph key -> the paragraph's findings, offsets from its start, least recently used dropped first.

    A recalled finding is a new :class:`FindingData` whose ``sources`` and ``detail`` are the memo's own: nothing
    changes a finding once a verification has returned it (it is stored, shown or dropped), and copying ten
    thousand of them per edit cost more than the edit's checks."""

    def __init__(self, size: int = _KEEP):
        self.size = size
        self._items: OrderedDict[bytes, tuple[tuple, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def recall(self, keys: list[bytes], starts: list[int]) -> dict[int, list[FindingData]]:
        """For each index ``u`` of ``keys`` the memo holds, the findings kept under ``keys[u]``, moved to a
        paragraph starting at ``starts[u]``."""
        entries = {}
        with self._lock:
            for u, key in enumerate(keys):
                entry = self._items.get(key)
                if entry is not None:
                    self._items.move_to_end(key)
                    entries[u] = entry
        return {u: [FindingData(kind, status, start + starts[u], end + starts[u], text, message, sources, detail)
                    for kind, status, start, end, text, message, sources, detail in entry]
                for u, entry in entries.items()}

    def keep(self, judged: dict[bytes, tuple[int, list[FindingData]]]) -> None:
        """Keep each paragraph's findings (``key -> (paragraph start, findings)``), offsets made relative."""
        rows = {key: tuple((f.kind, f.status, f.start - start, f.end - start, f.text, f.message, f.sources,
                            f.detail) for f in findings)
                for key, (start, findings) in judged.items()}
        with self._lock:
            for key, row in rows.items():
                self._items[key] = row
                self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


shared = Memo()
