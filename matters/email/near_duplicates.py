"""Near-duplicates: messages whose text differs from another's by a little (a forward with one line added).

Similarity is the Jaccard index of the two texts' word shingles (A. Broder, "On the resemblance and containment of
documents", 1997): each text, as :func:`matters.email.inclusive.comparable_text` gives it (quotation marks and the
lines a mail program writes above a forwarded message taken off, case folded), cut into words, and every run of
``SHINGLE_WORDS`` consecutive words a shingle; similarity = |shared shingles| / |shingles of either|, 0 to 1.
Pairs at ``NEAR_DUPLICATE_MIN`` or above are linked (Relativity's textual near-duplicate analysis defaults to a
90 % minimum; a short message with one line added sits lower, so the bar here is 80 %).

The comparison is exact, not estimated (MinHash would estimate the same index), because it is made only against
candidates: the messages of the same thread or the same normalised subject, which is where a forward or a resent
message lands. A matter's messages are never compared all against all. Exact duplicates (the same Message-ID and
body) are ``duplicate`` exhibits and never compared.
"""

import re

from django.db import transaction
from django.db.models import Q

from matters.models import EmailMessage, Exhibit, NearDuplicate

from .inclusive import comparable_text

SHINGLE_WORDS = 3
NEAR_DUPLICATE_MIN = 0.8
_WORD = re.compile(r"\w+")


def shingles(text: str, size: int = SHINGLE_WORDS) -> set[tuple[str, ...]]:
    """The word shingles of ``text`` (already :func:`comparable_text`): every run of ``size`` consecutive words;
    a text of fewer words is one shingle of them all; an empty text has none."""
    words = _WORD.findall(text)
    if len(words) <= size:
        return {tuple(words)} if words else set()
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


def similarity(a: set, b: set) -> float:
    """Jaccard index of two shingle sets, 0 to 1; 0 when either is empty (an empty text resembles nothing)."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def message_near_duplicates_update(record: EmailMessage) -> list[NearDuplicate]:
    """Link ``record``'s message to every candidate (same thread or same normalised subject, not a duplicate,
    its body kept) at ``NEAR_DUPLICATE_MIN`` similarity or above, replacing its earlier links; return the links
    made. A message whose body was not kept, or has no words, is linked to nothing."""
    exhibit = record.exhibit
    with transaction.atomic():
        NearDuplicate.objects.filter(Q(exhibit=exhibit) | Q(other=exhibit)).delete()
        own = shingles(comparable_text(record.body_text)) if record.body_recorded else set()
        if not own:
            return []
        same = Q(thread_key=record.thread_key) if record.thread_key else Q(pk__in=[])
        if record.subject_normalised:
            same |= Q(subject_normalised=record.subject_normalised)
        candidates = (EmailMessage.objects.filter(same, exhibit__matter_id=exhibit.matter_id, body_recorded=True)
                      .exclude(pk=record.pk).exclude(exhibit__status=Exhibit.Status.DUPLICATE)
                      .values_list("exhibit_id", "body_text"))
        links = []
        for other_id, body in candidates:
            score = similarity(own, shingles(comparable_text(body)))
            if score >= NEAR_DUPLICATE_MIN:
                later, earlier = max(exhibit.pk, other_id), min(exhibit.pk, other_id)
                links.append(NearDuplicate(exhibit_id=later, other_id=earlier, similarity=round(score, 4)))
        return NearDuplicate.objects.bulk_create(links)


def exhibit_near_duplicates(exhibit: Exhibit) -> list[tuple[Exhibit, float]]:
    """The exhibits linked to ``exhibit`` as near-duplicates, each with its similarity (0 to 1), most similar
    first."""
    rows = NearDuplicate.objects.filter(Q(exhibit=exhibit) | Q(other=exhibit)).select_related("exhibit", "other")
    found = [(row.other if row.exhibit_id == exhibit.pk else row.exhibit, row.similarity) for row in rows]
    return sorted(found, key=lambda item: (-item[1], item[0].pk))
