"""What a drafted section rests on, so a revision cannot drop it unseen: its record cites (Bates numbers, exhibit
and page), its authority cites (case reporter cites, statute sections), its quotations of three words or more and
its amounts (docs/jobs.md, "The revise stage keeps what the sections grounded").

Read with the verifier's own readers (:mod:`matters.drafts.verifier`), so a mark here is a claim the verifier checks
there. Deterministic; no model, no database.
"""

from matters.drafts.verifier.citations import find_case_citations
from matters.drafts.verifier.money import find_amounts
from matters.drafts.verifier.quotes import find_quotations
from matters.drafts.verifier.record import find_bates, find_exhibit_cites
from matters.drafts.verifier.statutes import find_statutes

# A quotation shorter than this is a term in quotation marks, not a passage the section quoted.
QUOTE_MIN_WORDS = 3


def _flat(text: str) -> str:
    return " ".join(text.split())


def grounding_marks(text: str) -> dict[str, str]:
    """The marks of ``text``: ``{key: as written}``. Keys compare marks written differently but meaning the same
    (``SMITH 000123`` and ``SMITH000123``, ``$1,250`` and ``$1,250.00``, a quotation's spacing); the value is the
    mark as ``text`` writes it, for a message. A range of Bates numbers is one mark."""
    flat = _flat(text)
    marks: dict[str, str] = {}
    for bates in find_bates(flat, set()):
        marks.setdefault(f"bates:{bates.prefix.strip(' -_')}:{bates.first}-{bates.last}", bates.text)
    for cite in find_exhibit_cites(flat):
        marks.setdefault(f"exhibit:{cite.label}:{cite.first_page}-{cite.last_page}", cite.text)
    for case in find_case_citations(flat):
        if case.form == "full" and case.reporter_cite:
            marks.setdefault(f"case:{case.reporter_cite}", case.reporter_cite)
    for statute in find_statutes(flat):
        marks.setdefault(f"statute:{_flat(statute.cite).casefold()}", statute.cite)
    for quote in find_quotations(flat):
        if quote.word_count >= QUOTE_MIN_WORDS:
            marks.setdefault(f"quote:{_flat(quote.inner).casefold()}", f"“{_flat(quote.inner)}”")
    for amount in find_amounts(flat):
        marks.setdefault(f"amount:{amount.key}", amount.text)
    return marks


def dropped_marks(original: str, revised: str) -> list[str]:
    """The marks of ``original`` that ``revised`` does not hold, as ``original`` writes them, in its order."""
    kept = grounding_marks(revised)
    return [written for key, written in grounding_marks(original).items() if key not in kept]
