"""Cutting a page's text into the spans that are embedded. Pure Python, no Django.

all-MiniLM-L6-v2 reads at most 256 word pieces of an input (sentence-transformers' ``max_seq_length``; llama.cpp
truncates nothing for us but the model was trained at that length), about 1,000 characters of English court
text. A chunk is therefore at most ``CHUNK_CHARS`` characters, cut at a paragraph, sentence or word boundary, and
overlaps the previous one by about ``OVERLAP_CHARS`` so a sentence cut at a chunk boundary is whole in one of
them.
"""

import re
from dataclasses import dataclass

CHUNK_CHARS = 900
OVERLAP_CHARS = 150
# A chunk shorter than this at the end of a page is merged into the chunk before it.
MIN_TAIL_CHARS = 200
_BOUNDARIES = (re.compile(r"\n\s*\n"), re.compile(r"[.!?;:][\"'”’)\]]*\s"), re.compile(r"\s"))


@dataclass(frozen=True)
class Span:
    """Characters ``start`` to ``end`` (exclusive) of the page's text."""

    start: int
    end: int


def _cut(text: str, start: int, limit: int) -> int:
    """The end of a chunk starting at ``start``: the last boundary before ``start + limit``, preferring a
    paragraph break, then a sentence end, then a space, in the chunk's second half; else ``start + limit``."""
    hard = min(len(text), start + limit)
    if hard == len(text):
        return hard
    half = start + limit // 2
    for boundary in _BOUNDARIES:
        ends = [m.end() for m in boundary.finditer(text, half, hard)]
        if ends:
            return ends[-1]
    return hard


def page_spans(text: str, *, chunk_chars: int = CHUNK_CHARS, overlap_chars: int = OVERLAP_CHARS) -> list[Span]:
    """The chunks of ``text`` in order, covering every character; [] for text with nothing but white space."""
    if not text.strip():
        return []
    spans: list[Span] = []
    start = len(text) - len(text.lstrip())
    while start < len(text):
        end = _cut(text, start, chunk_chars)
        if len(text) - end < MIN_TAIL_CHARS and end - start + len(text) - end <= chunk_chars + MIN_TAIL_CHARS:
            end = len(text)
        spans.append(Span(start, end))
        if end >= len(text):
            break
        # Step back by the overlap, to the start of a word.
        back = max(start + 1, end - overlap_chars)
        space = text.find(" ", back, end)
        start = space + 1 if space != -1 else back
    return spans
