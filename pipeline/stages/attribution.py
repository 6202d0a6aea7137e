"""Cites a section's sentences carry by construction (docs/jobs.md, "Cites by attribution"): a record cite attached to
each sentence drawn from one excerpt of the section's packet; in a legal-standard section that cites none of its
law, quotations of the stored authorities under their own citation; and in a section stating facts that cites
nothing in the record, quotations of its evidence pages under their record cites.

A small drafter (the embedded 135M model) writes sentences copied or paraphrased from the excerpts it was given
and drops the cites; asked for them, it invents them. Which excerpt a sentence came from is read here from the
words they share, never guessed: a sentence that shares too few of its words with any one excerpt gets no cite.
Every cite and quotation added is then checked by the verifier like any other. Deterministic; no model, no
database: the excerpts are read back from the prompt the section was sent (:func:`prompt_excerpts`), so what is
cited is what the model was given.
"""

import re
from dataclasses import dataclass

from ..packet import DATA_CLOSE, DATA_OPEN, LAW_CLOSE, LAW_OPEN
from .grounding import grounding_marks

# A sentence is attributed to an excerpt when at least ATTRIBUTION_LEAST_WORDS of its content words, and at least
# ATTRIBUTION_SHARE of them, are on that excerpt, and no other excerpt holds as many (a tie names no source).
ATTRIBUTION_LEAST_WORDS = 4
ATTRIBUTION_SHARE = 0.7
# A quotation of an authority: one whole sentence of the page, of this many words.
QUOTE_WORDS = (10, 45)
AUTHORITY_QUOTES = 2
RECORD_QUOTES = 2
_STOP = frozenset(
    "the and for that this with from was were are has have had not but his her its their they them which who "
    "whom whose what when where why how all any can could would should shall will may might must been being "
    "into onto upon than then there these those such also only very more most other some each our your you "
    "out about over under after before because while one two its it's did does done said".split())
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])[\"”’)\]]*\s+(?=[\"“(\[]?[A-Z0-9])")
_EVIDENCE = re.compile(re.escape(DATA_OPEN) + r' exhibit="(?P<label>[^"]*)" page=(?P<page>\d+) cite="(?P<cite>[^"]*)"'
                       r"[^\n]*>>>\n(?P<text>.*?)\n" + re.escape(DATA_CLOSE) + ">>>", re.DOTALL)
_LAW = re.compile(re.escape(LAW_OPEN) + r' cites_as="(?P<cites_as>[^"]*)" exhibit="(?P<label>[^"]*)" '
                  r'page=(?P<page>\d+)[^\n]*>>>\n(?P<text>.*?)\n' + re.escape(LAW_CLOSE) + ">>>", re.DOTALL)
_SOFT_BREAK = re.compile(r"(?<![.!?:;\"”’)\]])[ \t]*\n[ \t]*(?=[a-z(])")
_STAR = re.compile(r"(?<![\w*])\*(\d{1,5})\b")
_PARAGRAPH = re.compile(r"(?m)^\s*(?:¶\s*|\[)(\d{1,4})\]?(?=\s)")
# A word in capitals or a part number opening it: a running head, a caption or a heading the page prints over its
# text, run into the court's sentence by the text layer.
_RUNNING_HEAD = re.compile(r"\b[A-Z]{4,}\b|^[IVX]+\s+[A-Z]\s")
_CLEAN_QUOTE = re.compile(r"^[A-Z][^\"“”<>‹*\[\]{}|_§¶]*[a-z)]\.$")


@dataclass(frozen=True)
class Excerpt:
    """An excerpt the section was sent: an evidence page (``cite`` its record cite) or an authority page
    (``cites_as`` its citation, ``cite`` empty)."""

    label: str
    page: int
    text: str
    cite: str = ""
    cites_as: str = ""


def prompt_excerpts(prompt: str) -> tuple[list[Excerpt], list[Excerpt]]:
    """The evidence pages and the authority pages of a prompt (:meth:`pipeline.packet.EvidencePacket.prompt_text`),
    in their order there."""
    evidence = [Excerpt(m["label"], int(m["page"]), m["text"], cite=m["cite"]) for m in _EVIDENCE.finditer(prompt)]
    law = [Excerpt(m["label"], int(m["page"]), m["text"], cites_as=m["cites_as"]) for m in _LAW.finditer(prompt)]
    return evidence, law


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say something: lower case, three letters or more, no common function word."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOP}


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (after ``.``, ``!`` or ``?`` and a closing mark, before a capital or a digit);
    the pieces joined with single spaces give back the text with its spacing between sentences made single."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


def cites_record(text: str) -> bool:
    """Whether ``text`` carries a record cite (a Bates number or an exhibit and page) anywhere."""
    return any(key.startswith(("bates:", "exhibit:")) for key in grounding_marks(text))


def _with_cite(sentence: str, cite: str) -> str:
    body = sentence.rstrip()
    end = len(body)
    while end and body[end - 1] in "\"”’)]":
        end -= 1
    if end and body[end - 1] in ".!?":
        # The cite goes inside the sentence, before its full stop and after a closing quotation mark.
        closing = body[end:]
        return f"{body[:end - 1]}{closing} ({cite}){body[end - 1]}"
    return f"{body} ({cite})."


def attribute(sentence: str, evidence: list[Excerpt]) -> tuple[Excerpt, float] | None:
    """The one excerpt of ``evidence`` that ``sentence`` was drawn from, with the share of its content words
    found there; None when no excerpt holds enough of them, or two hold as many."""
    words = content_words(sentence)
    if len(words) < ATTRIBUTION_LEAST_WORDS:
        return None
    scored = sorted(((len(words & content_words(e.text)), i) for i, e in enumerate(evidence)), reverse=True)
    if not scored:
        return None
    best, index = scored[0]
    if best < ATTRIBUTION_LEAST_WORDS or best / len(words) < ATTRIBUTION_SHARE:
        return None
    if len(scored) > 1 and scored[1][0] == best and evidence[scored[1][1]].cite != evidence[index].cite:
        return None
    return evidence[index], best / len(words)


def attach_record_cites(text: str, evidence: list[Excerpt]) -> tuple[str, list[dict]]:
    """``text`` with a record cite attached to each sentence that has none and was drawn from one excerpt of
    ``evidence`` (:func:`attribute`), each paragraph kept a paragraph (a line break inside a sentence, before a
    lower-case word, read as the space it stands for). Returns the text and what was attached
    (``[{"sentence": its first 80 characters, "cite", "share": of its content words on that page}]``)."""
    attached: list[dict] = []
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = []
        # A line break inside a sentence is the model wrapping its text: the sentence is read whole.
        for line in _SOFT_BREAK.sub(" ", paragraph).splitlines():
            parts = []
            for sentence in sentences(line):
                source = None if cites_record(sentence) else attribute(sentence, evidence)
                if source is None:
                    parts.append(sentence)
                    continue
                excerpt, share = source
                parts.append(_with_cite(sentence, excerpt.cite))
                attached.append({"sentence": " ".join(sentence.split())[:80], "cite": excerpt.cite,
                                 "share": round(share, 2)})
            lines.append(" ".join(parts) if parts else line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs), attached


def _pin(page_text: str, at: int) -> str:
    """The pin cite of a passage starting at ``at`` on an authority page: the reporter page (star marker) or
    paragraph (``¶``) it stands under; '' when the page marks none before it."""
    stars = [m for m in _STAR.finditer(page_text) if m.start() <= at]
    if stars:
        return stars[-1].group(1)
    paragraphs = [m for m in _PARAGRAPH.finditer(page_text) if m.start() <= at]
    return f"¶ {paragraphs[-1].group(1)}" if paragraphs else ""


def _quotable(page_text: str) -> list[tuple[int, str]]:
    """Whole sentences of an authority page that can be quoted exactly: (position, sentence), within
    :data:`QUOTE_WORDS`, with no line-end hyphenation (a hyphen or a soft hyphen at a line's end: the page's words
    would not match the quotation's), no running head, footnote marks or quotation marks of their own."""
    found = []
    for match in re.finditer(r"[A-Z][^.!?]*[.]", page_text):
        raw = match.group(0)
        if "-\n" in raw or "\xad" in raw or "\n\n" in raw or _RUNNING_HEAD.search(raw):
            continue
        sentence = " ".join(raw.split())
        count = len(sentence.split())
        if QUOTE_WORDS[0] <= count <= QUOTE_WORDS[1] and _CLEAN_QUOTE.match(sentence) \
                and not re.search(r"\b(?:v|Inc|Co|No|U\.S|Stat|Cir|Ct|App|Ed|Id|at|Mr|Ms|Dr|St|pp?)\.$", sentence):
            found.append((match.start(), sentence))
    return found


def with_pin(cites_as: str, pin: str) -> str:
    """``cites_as`` with ``pin`` after the cited page and before a closing parenthetical of court and year
    (``569 U.S. 614, 620 (2013)``, ``2022-NCSC-1, ¶ 12``), as the Bluebook places it."""
    cites_as = cites_as.strip().rstrip(" .,")
    if not pin:
        return cites_as
    match = re.match(r"(?s)(.*?)(\s*\([^()]*\d{4}\))$", cites_as)
    if match and match.group(1).strip():
        return f"{match.group(1).rstrip(' ,')}, {pin}{match.group(2)}"
    return f"{cites_as}, {pin}"


def cites_law(text: str, law: list[Excerpt]) -> bool:
    """Whether ``text`` cites one of the authorities of ``law``: its citation's reporter cite or statute section,
    or the citation as written."""
    marks = grounding_marks(text)
    flat = " ".join(text.split()).casefold()
    for excerpt in law:
        theirs = {k for k in grounding_marks(excerpt.cites_as) if k.startswith(("case:", "statute:"))}
        if theirs & set(marks) or (excerpt.cites_as and " ".join(excerpt.cites_as.split()).casefold() in flat):
            return True
    return False


def _best_quotes(excerpts: list[Excerpt], wanted: str, source, limit: int,
                 least: int = 0) -> list[tuple[Excerpt, int, str]]:
    """Up to ``limit`` quotable sentences (:func:`_quotable`) of ``excerpts``, at most one per ``source(excerpt)``
    (an authority's citation, a page's record cite): for each source the sentence sharing most content words with
    ``wanted`` (at least ``least``), the earlier excerpt on a tie; the sources sharing most first. Returns
    ``(excerpt, position on its page, sentence)`` in the excerpts' order."""
    words = content_words(wanted)
    best: dict[str, tuple[int, int, Excerpt, int, str]] = {}
    for order, excerpt in enumerate(excerpts):
        for at, sentence in _quotable(excerpt.text):
            score = len(words & content_words(sentence))
            key = source(excerpt)
            if score >= least and (key not in best or (score, -order) > (best[key][0], -best[key][1])):
                best[key] = (score, order, excerpt, at, sentence)
    chosen = sorted(best.values(), key=lambda b: (-b[0], b[1]))[:limit]
    return [(excerpt, at, sentence) for _, _, excerpt, at, sentence in sorted(chosen, key=lambda b: b[1])]


def quote_authorities(text: str, law: list[Excerpt], wanted: str) -> tuple[str, list[dict]]:
    """``text`` (a legal-standard section) followed by a quotation of each of up to :data:`AUTHORITY_QUOTES`
    stored authorities of ``law`` (one sentence of the page, the one sharing most words with ``wanted``: the
    section's heading, questions and request), each under its own citation and pin cite, when ``text`` cites
    none of them. Returns the text and the quotations (``[{"cites_as", "page", "pin", "quote"}]``)."""
    if not law or cites_law(text, law):
        return text, []
    quoted, added = [], []
    for excerpt, at, sentence in _best_quotes(law, wanted, lambda e: e.cites_as, AUTHORITY_QUOTES):
        pin = _pin(excerpt.text, at)
        citation = with_pin(excerpt.cites_as, pin)
        added.append(f"“{sentence}” {citation}.")
        quoted.append({"cites_as": excerpt.cites_as, "page": excerpt.page, "pin": pin, "quote": sentence})
    if not added:
        return text, []
    return (text.rstrip() + "\n\n" + "\n\n".join(added)).strip(), quoted


def quote_record(text: str, evidence: list[Excerpt], wanted: str) -> tuple[str, list[dict]]:
    """``text`` (a section stating facts) followed by a quotation of each of up to :data:`RECORD_QUOTES` pages of
    ``evidence`` (one whole sentence of the page as sent, the one sharing most words with ``wanted``, and at least
    one), each under the page's record cite, when ``text`` cites nothing in the record. A facts section the drafter
    wrote without a cite stands on the record only through what it quotes. Returns the text and the quotations
    (``[{"cite", "label", "page", "quote"}]``)."""
    if not evidence or cites_record(text):
        return text, []
    quoted, added = [], []
    for excerpt, _, sentence in _best_quotes(evidence, wanted, lambda e: e.cite, RECORD_QUOTES, least=1):
        added.append(f"“{sentence}” ({excerpt.cite}).")
        quoted.append({"cite": excerpt.cite, "label": excerpt.label, "page": excerpt.page, "quote": sentence})
    if not added:
        return text, []
    return (text.rstrip() + "\n\n" + "\n\n".join(added)).strip(), quoted
