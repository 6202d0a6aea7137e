"""From an attorney's request to the terms of a lexical query. Pure Python, no Django.

A request is a sentence ("Summarize what the court said about the deadline to appeal"), not a search: no page
holds all of its words, so its terms are ORed and BM25 weighs them (:func:`matters.exhibits.lexical.bm25_pages`).
What is kept:
- content words: everything but English function words and the words of asking for a document (``draft``,
  ``please``, ``summarize``) that say what to write, not what it is about;
- kept whole, as phrases: "quoted text", citations (``569 U.S. 614``, ``2022-NCSC-1``), sections and rules
  (``§ 1983``, ``Rule 12(b)(6)``), Bates numbers (``SMITH000123``) and docket numbers (``17-2218``): split into
  words they would match every page with a 12 or a 2218 on it.
A request of only function words has no terms; the retriever then ranks semantically alone, or says so.
"""

import re

from matters.exhibits.reading import reading_form

STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once
only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up upon very was we were what when where
which while who whom why will with would you your yours yourself yourselves within without whether shall may might
must us per via s t d ll m o re ve y
""".split())
# Words of the request itself: what to write or do, not what the evidence is about.
REQUEST_WORDS = frozenset("""
please draft write prepare summarize summarise summary explain describe identify tell show find list give
provide need want help make create outline discuss analyze analyse review address set forth brief short long
document documents record file filed filing evidence exhibit exhibits page pages matter case us me our
""".split())

_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,200})[\"“”]")
_KEPT_WHOLE = re.compile(
    r"\b\d{1,4}\s+(?:[A-Z][A-Za-z.]*\s?){1,4}(?:\d[a-z]{1,2}\s)?\d{1,5}\b"   # 569 U.S. 614, 712 F.3d 1139
    r"|\b\d{4}-[A-Z]{2,6}-\d{1,6}\b|\b\d{4}\s+(?:WI|IL|ND|SD|OK|ME|VT|MT|NM|UT|WY)\s+\d{1,6}\b"  # 2022-NCSC-1
    r"|§+\s*\d[\w.\-()]*|\bRule\s+\d[\w.()]*"                                 # § 1983, Rule 12(b)(6)
    r"|\b[A-Z][A-Z_-]{1,12}\d{4,10}\b"                                        # SMITH000123
    r"|\b\d{1,2}-\d{3,6}\b")                                                  # 17-2218
_WORD = re.compile(r"\w+")


def query_terms(request: str, *, max_terms: int = 24) -> list[list[str]]:
    """The lexical terms of ``request``: each a list of words (one word, or a phrase's words in order), in reading
    form, phrases first, without repeats, at most ``max_terms``."""
    text = reading_form(request or "")
    terms: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()

    def add(words: list[str]) -> None:
        key = tuple(words)
        if words and key not in seen and len(terms) < max_terms:
            seen.add(key)
            terms.append(words)

    rest = text
    for pattern in (_QUOTED, _KEPT_WHOLE):
        for match in pattern.finditer(rest):
            words = [w.lower() for w in _WORD.findall(match.group(1) if pattern is _QUOTED else match.group(0))]
            add(words)
        rest = pattern.sub(" ", rest)
    for word in _WORD.findall(rest):
        word = word.lower()
        if word in STOP_WORDS or word in REQUEST_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        if word.isdigit() and len(word) < 3:
            continue
        add([word])
    return terms
