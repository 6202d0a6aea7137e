"""Each key fact of a digest checked against the pages it cites: a fact whose cited page does not hold its key
words is flagged, never shown as if the page said it.

The rule (deterministic, no model): the fact's key words are its words in the verifier's match form
(:func:`matters.drafts.verifier.text.match_words`: case, punctuation and ligatures ignored) less common function
words and words under three letters; every figure (a word with a digit: an amount, a date's day or year, a
section) must be on the cited pages, and at least :data:`WORD_SHARE` of the other key words. A model paraphrases,
so the share is under one; it invents figures, so those must all be there.
"""

import re

from matters.drafts.verifier.text import match_words

# Statuses of a fact's check: the only one shown as the page's own words is ``on_page``.
ON_PAGE = "on_page"
NOT_ON_CITED_PAGE = "not_on_cited_page"
NO_CITE = "no_cite"
PAGE_NOT_READ = "page_not_read"
STATUSES = (ON_PAGE, NOT_ON_CITED_PAGE, NO_CITE, PAGE_NOT_READ)
STATUS_WORDS = {
    ON_PAGE: "its key words are on the page it cites",
    NOT_ON_CITED_PAGE: "the page it cites does not hold its key words",
    NO_CITE: "it cites no page",
    PAGE_NOT_READ: "it cites a page the summarizer was not given",
}
WORD_SHARE = 0.6
_STOPWORDS = frozenset(
    "the and for that this with from was were are has have had not but its his her their they them then than "
    "there which who whom whose what when where will would shall should may might can could been being into onto "
    "upon about after before under over between each any all such our out also per via".split())
_DIGIT = re.compile(r"\d")


def key_words(fact: str) -> list[str]:
    """The words of ``fact`` a page must hold to bear it out, in order, without repeats."""
    words = [w for w in match_words(fact).split() if len(w) >= 3 or _DIGIT.search(w)]
    return list(dict.fromkeys(w for w in words if w not in _STOPWORDS))


def fact_check(fact: str, pages: list[int], page_words: dict[int, set[str]]) -> dict:
    """Check one fact against the pages it cites. ``page_words``: for each page number given to the model, the
    set of its words in match form. Returns ``{"status", "missing": [key words not on the cited pages]}``."""
    if not pages:
        return {"status": NO_CITE, "missing": []}
    if any(page not in page_words for page in pages):
        return {"status": PAGE_NOT_READ, "missing": []}
    words = key_words(fact)
    present = set().union(*(page_words[page] for page in pages))
    missing = [w for w in words if w not in present]
    figures_missing = [w for w in missing if _DIGIT.search(w)]
    plain = [w for w in words if not _DIGIT.search(w)]
    plain_found = sum(1 for w in plain if w in present)
    enough = not plain or plain_found / len(plain) >= WORD_SHARE
    if not words or figures_missing or not enough:
        return {"status": NOT_ON_CITED_PAGE, "missing": missing}
    return {"status": ON_PAGE, "missing": missing}


def facts_check(key_facts: list[dict], page_texts: dict[int, str]) -> list[dict]:
    """Every key fact of a digest (``{"fact", "pages"}``) with its check added (``status``, ``missing``, and
    ``why``: the status in words), in the digest's order. ``page_texts``: page number -> text, for the pages the
    summarizer was given."""
    page_words = {number: set(match_words(text).split()) for number, text in page_texts.items()}
    checked = []
    for item in key_facts:
        pages = sorted({int(p) for p in item.get("pages") or []})
        check = fact_check(item.get("fact", ""), pages, page_words)
        checked.append({"fact": item.get("fact", ""), "pages": pages, **check, "why": STATUS_WORDS[check["status"]]})
    return checked
