"""A lexical ranking of a matter's pages for the retriever: BM25 over the same full-text index as the search box.

:func:`bm25_pages` takes terms (a word, or a phrase's words in order), ORs them, and ranks the matter's ready pages
by Okapi BM25 (k1 = 1.2, b = 0.75): a page matching more of the terms, rarer ones, more often, in a shorter text
ranks higher. One formula on both engines, FTS5's own (``fts5_aux.c``): for each term t the page holds,
``idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf(t) = ln((N - n(t) + 0.5) /
(n(t) + 0.5))``, at least 1e-6 (a term on more than half the pages weighs next to nothing).

- SQLite: FTS5's own ``bm25()``, limited to the matter inside FTS5 as the search box is. FTS5 counts ``N`` and
  ``n(t)`` over the whole index (every matter), ``dl`` in tokens, and a phrase's ``tf`` as its occurrences.
- PostgreSQL: the same formula computed here. ``N``, ``n(t)`` and ``avgdl`` over the matter's ready pages;
  ``tf`` from the page's ``tsvector`` (the positions of the query's lexemes, cut out of it with ``setweight`` and
  ``ts_filter``, never the whole vector unnested), a phrase's ``tf`` its occurrences from those positions; ``dl``
  the number of distinct lexemes of the page (``length(search_vector)``), ``avgdl`` its mean.

Ranking every page that holds any term costs time in proportion to those pages (a word on 38,000 of 50,000 pages:
90 ms on SQLite, seconds on PostgreSQL). Both engines read the pages in tiers instead, rarest terms first
(:func:`_tiers`), each tier's pages that hold no earlier tier's term. A page holding none of the terms read so far
scores at most the sum of the other terms' bounds (``idf * (k1 + 1)``), so once that sum is below the ``limit``-th
score, the ranking is exact and the common terms' pages are never read (MaxScore, Turtle and Flood 1995). A term on
more pages than are left to read is read first where the page also holds a later term; at most ``READ_PAGES``
pages are read in all (``READ_PAGES_POSTGRES`` on PostgreSQL), past which the tail of the ranking is approximate.
A term on more than half the pages (idf at the floor) is read only when the others hold fewer than ``limit``
pages, and then ``COMMON_PAGES`` of its pages at most, in index order: among themselves they rank by next to
nothing. PostgreSQL scores each page read with every term; SQLite scores each tier by its own terms (at most the
page's score, enough for the bound) and then the pages read once with every term (:meth:`_Sqlite._score`).

The counts ``N`` and ``n(t)`` (and ``avgdl``) are kept in this process until the pages change. On PostgreSQL the
stamp is read from the matter's ready exhibits (how many, their page counts, the newest, the last ``updated_at``):
an exhibit made ready, failed, reprocessed or deleted moves it. On SQLite, whose counts are the whole index's, it
is the highest page id with FTS5's own totals and segment record, which every write to the index changes (even
where SQLite reuses a deleted rowid). The first query after a change counts its terms again (PostgreSQL: about
100 ms for a word on 38,000 of 50,000 pages, 0.5 s for a phrase of two such words; SQLite: a few ms).
"""

import json
import math
import re
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import connection, transaction

from matters.models import Matter

from .search import _in_matter

K1, B = 1.2, 0.75
_IDF_FLOOR = 1e-6  # FTS5's: a term on more than half the pages
_TOKEN = re.compile(r"[^\W_]+")  # letters and digits, as both indexes cut words
# The pages one tier of terms may bring, and the pages read in all: SQLite reads a page of the index in about
# 5 µs; PostgreSQL takes about 35 µs to read a page's vector out of TOAST and cut its terms out.
TIER_PAGES = 2_000
READ_PAGES = 6_000
READ_PAGES_POSTGRES = 2_500
# The pages read of words on more than half the pages, when the other terms hold fewer than the limit: ranked
# among themselves by next to nothing, the first of them in the index do as well as all.
COMMON_PAGES = 1_000
# Matters (and, for SQLite, the one index) whose counts stay cached in this process.
_CACHED = 64


def bm25_pages(*, matter: Matter, terms: list[list[str]], exhibit_ids: list[int] | None = None,
               limit: int = 200) -> list[tuple[int, float]]:
    """Return ``(page id, BM25 score)`` of up to ``limit`` ready pages of ``matter`` holding any of ``terms``, best
    first (ties by page id). Each term is a list of words: one word, or a phrase whose words must appear in order,
    next to each other (as the index reads them: stemmed; on PostgreSQL, common English words skipped).
    ``exhibit_ids`` limits the pages to those exhibits (``[]``: none); the counts stay the matter's."""
    cleaned = _clean(terms)
    if not cleaned or limit <= 0 or exhibit_ids == []:
        return []
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            return _Sqlite(cursor, matter.pk, exhibit_ids).rank(cleaned, limit)
        with transaction.atomic(), _bitmap_scans(cursor):
            return _Postgres(cursor, matter.pk, exhibit_ids).rank(cleaned, limit)


@contextmanager
def _bitmap_scans(cursor):
    """PostgreSQL's planner without sequential or plain index scans, for this transaction only, then as it was. For
    a word on most pages it scans the table, decompressing every page's vector to test it (500 ms for a count at
    50,000 pages); the GIN index's bitmap names the pages without reading a vector (100 ms)."""
    cursor.execute("SELECT current_setting('enable_seqscan'), current_setting('enable_indexscan'), "
                   "set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)")
    seqscan, indexscan = cursor.fetchone()[:2]
    try:
        yield
    finally:
        cursor.execute("SELECT set_config('enable_seqscan', %s, true), set_config('enable_indexscan', %s, true)",
                       [seqscan, indexscan])


def _clean(terms: list[list[str]]) -> list[tuple[str, ...]]:
    """Each term as the words the index holds (letters and digits; ``foo_bar`` is the phrase ``foo bar``), in
    lower case, without repeats or empty terms."""
    seen: dict[tuple[str, ...], None] = {}
    for term in terms:
        words = tuple(token.lower() for word in term for token in _TOKEN.findall(word))
        if words:
            seen.setdefault(words)
    return list(seen)


def _idf(pages: int, df: int) -> float:
    idf = math.log((pages - df + 0.5) / (df + 0.5)) if pages else 0.0
    return idf if idf > 0 else _IDF_FLOOR


@dataclass
class _Counts:
    """Counts that hold while the pages stay as they were (``stamp``): ``pages`` (N), ``avgdl`` (PostgreSQL),
    and ``df``, the pages holding each term asked for so far, by the term's engine query."""

    stamp: tuple
    pages: int
    avgdl: float = 1.0
    df: dict[str, int] = field(default_factory=dict)
    # PostgreSQL: the pages of each phrase, found once (the GIN index names the pages holding its words, and each
    # must be read to check their positions: 0.7 s for two words on most of 50,000 pages).
    phrase_pages: dict[str, list[int]] = field(default_factory=dict)


_COUNTS: dict[object, _Counts] = {}
_COUNTS_LOCK = threading.Lock()


def _cached(key: object, stamp: tuple, make: Callable[[], _Counts]) -> _Counts:
    with _COUNTS_LOCK:
        counts = _COUNTS.get(key)
    if counts is not None and counts.stamp == stamp:
        return counts
    counts = make()
    with _COUNTS_LOCK:
        if len(_COUNTS) >= _CACHED:
            _COUNTS.pop(next(iter(_COUNTS)))
        _COUNTS[key] = counts
    return counts


@dataclass(frozen=True)
class _Read:
    """Pages holding any of ``matching`` (and, when given, any of ``also``) but none of ``excluding``."""

    matching: tuple[str, ...]
    also: tuple[str, ...] = ()
    excluding: tuple[str, ...] = ()


# Read at most ``most`` pages of a _Read: the best ``limit`` of them as {page id: score} (PostgreSQL: the score;
# SQLite: the score of the terms of the read alone, at most the score), and how many pages were read.
Reader = Callable[[_Read, int, int], tuple[dict[int, float], int]]


def _tiers(queries: list[str], df: dict[str, int], weight: dict[str, float], limit: int, read: Reader,
           read_pages: int) -> tuple[dict[int, float], list[_Read]]:
    """Read the pages of the OR of ``queries`` (the engine's query of each term) in tiers of rarest terms first,
    while the terms left could still reach the ``limit``-th score (module docstring). Returns the best scores
    read and the reads. A term on more than half the pages (idf at its floor) adds next to nothing: its pages are
    read only when the others hold fewer than ``limit``."""
    order = sorted((q for q in queries if weight[q] > _IDF_FLOOR), key=lambda q: (df[q], q))
    common = tuple(q for q in queries if weight[q] <= _IDF_FLOOR)
    bound = [0.0] * (len(order) + 1)  # bound[i]: the most the terms from i on can add to a page
    for i in range(len(order) - 1, -1, -1):
        bound[i] = bound[i + 1] + weight[order[i]] * (K1 + 1)
    scores: dict[int, float] = {}
    reads: list[_Read] = []
    left, done = read_pages, 0

    def take(what: _Read) -> int:
        nonlocal left
        found, seen = read(what, left, limit)
        scores.update(found)
        reads.append(what)
        left -= seen
        return seen

    while done < len(order) and left > 0:
        tier, pages = [], 0
        for query in order[done:]:
            if tier and pages + df[query] > TIER_PAGES:
                break
            tier.append(query)
            pages += df[query]
        earlier, later = tuple(order[:done]), tuple(order[done + len(tier):])
        if pages > left and later:  # one term on more pages than are left: first those with a later term too
            seen = take(_Read(tuple(tier), later, earlier))
            if seen < pages and left > 0 and bound[done] - bound[done + 1] >= _kth(scores, limit):
                take(_Read(tuple(tier), (), earlier + later))  # and alone, while they could still rank
        else:
            take(_Read(tuple(tier), (), earlier))
        done += len(tier)
        scores = dict(_best(scores, limit))
        if bound[done] < _kth(scores, limit):
            break
    if common and len(scores) < limit and left > 0:  # only words on most pages left: a few pages of them
        left = min(left, COMMON_PAGES)
        take(_Read(common, (), tuple(order)))
    return scores, reads


def _kth(scores: dict[int, float], limit: int) -> float:
    """The ``limit``-th best score so far, 0 while fewer pages are scored."""
    return _best(scores, limit)[-1][1] if len(scores) >= limit else 0.0


def _best(scores: dict[int, float], limit: int) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


# ---- SQLite ----------------------------------------------------------------------------------------------------

# FTS5's bm25() sums over every phrase of the MATCH expression, and first counts each phrase's pages over the whole
# index (a common word: 2 ms; a phrase of common words: 9 ms). The tiers are read with the MATCH of their own terms:
# a score of those terms alone, at most the page's score, enough for the bound. Then the pages read are scored
# once with every term, each phrase in the expression once: ``(the pages read) AND ((every other term) OR
# matter:"N")`` names the pages by their own terms, and the OR holds on every page of the matter while adding the
# other terms' scores (the matter column weighs 0): exactly bm25() of the OR of every term, on those pages.
_SQLITE_READ = """
    WITH own AS (SELECT rowid AS id, bm25(matters_page_fts, 1.0, 0.0) AS s FROM matters_page_fts
                 WHERE matters_page_fts MATCH %s AND rowid BETWEEN %s AND %s LIMIT %s)
    SELECT own.id, -own.s, (SELECT count(*) FROM own) AS seen, (SELECT max(id) FROM own) AS last
    FROM own JOIN matters_page p ON p.id = own.id JOIN matters_exhibit e ON e.id = p.exhibit_id
    WHERE e.matter_id = %s AND e.status = 'ready'{exhibits}
    ORDER BY own.s, own.id LIMIT %s"""
_SQLITE_ONCE = """
    WITH scored AS (SELECT rowid AS id, bm25(matters_page_fts, 1.0, 0.0) AS s FROM matters_page_fts
                    WHERE matters_page_fts MATCH %s AND rowid BETWEEN %s AND %s LIMIT %s)
    SELECT scored.id, -scored.s AS score
    FROM scored JOIN matters_page p ON p.id = scored.id JOIN matters_exhibit e ON e.id = p.exhibit_id
    WHERE e.matter_id = %s AND e.status = 'ready'{exhibits}
    ORDER BY scored.s, scored.id LIMIT %s"""
# FTS5's record of its totals (rows, then tokens per column) and of its segments (with a write counter): with the
# highest page id, a stamp that moves on every write to the index, even where SQLite reuses a deleted rowid.
_SQLITE_STAMP = """SELECT coalesce((SELECT max(id) FROM matters_page), 0),
    (SELECT block FROM matters_page_fts_data WHERE id = 1), (SELECT block FROM matters_page_fts_data WHERE id = 10)"""


def _varint(data: bytes) -> int:
    """The first SQLite varint of ``data`` (FTS5 writes its totals so)."""
    value = 0
    for i, byte in enumerate(data[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value


class _Sqlite:
    """FTS5's bm25() read in tiers. The bounds use FTS5's own counts: every page of the index. With exhibits
    asked for, the index is read only between their first and last page ids (FTS5 seeks to a rowid range), so
    a few exhibits uploaded together cost their own pages, not the matter's."""

    def __init__(self, cursor, matter_id: int, exhibit_ids: list[int] | None):
        self.cursor, self.matter_id, self.exhibit_ids = cursor, matter_id, exhibit_ids
        self.exhibits, self.filter_params, self.span = "", [], (0, 2**62)
        self.last: dict[_Read, int | None] = {}  # the last rowid of each read that stopped short
        if exhibit_ids is not None:
            self.exhibits = " AND p.exhibit_id IN (SELECT value FROM json_each(%s))"
            self.filter_params = [json.dumps([int(i) for i in exhibit_ids])]

    def rank(self, terms: list[tuple[str, ...]], limit: int) -> list[tuple[int, float]]:
        if self.exhibit_ids is not None:
            self.cursor.execute("SELECT min(p.id), max(p.id) FROM matters_page p WHERE 1" + self.exhibits,
                                self.filter_params)
            self.span = self.cursor.fetchone()
            if self.span[0] is None:
                return []
        queries = ['"' + " ".join(words) + '"' for words in terms]
        self.cursor.execute(_SQLITE_STAMP)
        stamp = tuple(self.cursor.fetchone())
        counts = _cached("sqlite", stamp, lambda: _Counts(stamp, _varint(stamp[1] or b"")))
        for query in queries:
            if query not in counts.df:
                self.cursor.execute("SELECT count(*) FROM matters_page_fts WHERE matters_page_fts MATCH %s", [query])
                counts.df[query] = self.cursor.fetchone()[0]
        queries = [q for q in queries if counts.df[q]]
        if not queries:
            return []
        weight = {q: _idf(counts.pages, counts.df[q]) for q in queries}
        scores, reads = _tiers(queries, counts.df, weight, limit, self.read, READ_PAGES)
        if not reads:
            return []
        every = {q for q in queries if weight[q] > _IDF_FLOOR} | {q for r in reads for q in r.matching}
        if len(reads) == 1 and not reads[0].also and set(reads[0].matching) == every:
            return _best(scores, limit)  # one read of every term: its scores are the scores
        return self._score(reads, every, limit)

    def _score(self, reads: list[_Read], every: set[str], limit: int) -> list[tuple[int, float]]:
        """bm25() of the OR of ``every`` term on the pages ``reads`` read, best ``limit`` first: one query naming
        those pages by their terms, each once; or, where a read stopped short of its pages (or a term would be
        named twice), a query per read, on its pages up to the last one it read."""
        whole = {q for r in reads if not r.also for q in r.matching}
        named, parts = sorted(whole), []
        for r in reads:
            rest = [q for q in r.also if q not in whole]
            for term in r.matching if rest else ():
                if term not in whole:
                    parts.append(f"({term} AND ({' OR '.join(rest)}))")
                    named += [term, *rest]
        union = "(" + " OR ".join(sorted(whole) + parts) + ")"
        if len(named) == len(set(named)) and not any(self.last.values()):
            return self._once(union, every - set(named), self.span, READ_PAGES, limit)
        # A read stopped short (or a term would appear twice): each read's own pages, up to where it stopped.
        scores: dict[int, float] = {}
        for r in reads:
            span = (self.span[0], self.last.get(r) or self.span[1])
            scores.update(self._once(self._expression(r), every - {*r.matching, *r.also, *r.excluding}, span,
                                     READ_PAGES, limit))
        return _best(scores, limit)

    def _once(self, named: str, others: set[str], span: tuple, most: int, limit: int) -> list[tuple[int, float]]:
        """bm25() of every term on the pages of ``named`` (each term in it once), ``others`` the terms not in it."""
        matter = f'matter:"{int(self.matter_id)}"'
        match = f"{matter} AND reading_text:{named}"
        if others:
            match += f" AND (reading_text:({' OR '.join(sorted(others))}) OR {matter})"
        self.cursor.execute(_SQLITE_ONCE.format(exhibits=self.exhibits),
                            [match, *span, most, self.matter_id, *self.filter_params, limit])
        return [(row[0], float(row[1])) for row in self.cursor.fetchall()]

    @staticmethod
    def _expression(what: _Read) -> str:
        expression = "(" + " OR ".join(what.matching) + ")"
        if what.also:
            expression = f"({expression} AND ({' OR '.join(what.also)}))"
        if what.excluding:
            expression = f"({expression} NOT ({' OR '.join(what.excluding)}))"
        return expression

    def read(self, what: _Read, most: int, limit: int) -> tuple[dict[int, float], int]:
        own = _in_matter(self._expression(what), self.matter_id)
        self.cursor.execute(_SQLITE_READ.format(exhibits=self.exhibits),
                            [own, *self.span, most, self.matter_id, *self.filter_params, limit])
        rows = self.cursor.fetchall()
        if rows:
            seen, last = rows[0][2], rows[0][3]
        else:  # none passed the filters (exhibits, status): how many the index yielded
            self.cursor.execute("SELECT count(*), max(rowid) FROM (SELECT rowid FROM matters_page_fts WHERE "
                                "matters_page_fts MATCH %s AND rowid BETWEEN %s AND %s LIMIT %s)",
                                [own, *self.span, most])
            seen, last = self.cursor.fetchone()
        self.last[what] = last if seen >= most else None  # read up to there only
        return {row[0]: float(row[1]) for row in rows}, seen


# ---- PostgreSQL ------------------------------------------------------------------------------------------------

_READY_PAGES = """
    FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id
    WHERE e.matter_id = %s AND e.status = 'ready'"""
# The matter's ready exhibits: how many, their pages, the newest, the last change to any (every write that
# changes an exhibit's row moves updated_at, queryset updates included). Counting the pages themselves took 45 ms
# at 50,000.
_PG_STAMP = """SELECT count(*), coalesce(sum(page_count), 0), coalesce(max(id), 0), max(updated_at)
    FROM matters_exhibit WHERE matter_id = %s AND status = 'ready'"""
# One row a candidate page: the BM25 of its single-lexeme terms summed here from the tf of each (the positions of
# the lexeme, cut out of the vector with setweight and ts_filter, never the whole vector unnested), and the
# positions of the phrases' lexemes, for Python to count the phrases. 6,000 pages as one row a lexeme took half a
# second in Python alone. The vector is read out of TOAST once a page (``|| ''``, in a subquery kept apart by
# OFFSET 0): each use of the column would decompress it again.
_PG_TIER = """
    WITH c AS (SELECT x.id, length(x.v) AS dl, ts_filter(setweight(x.v, 'A', %s::text[]), '{{a}}') AS v
               FROM (SELECT p.id, p.search_vector || ''::tsvector AS v {ready}{exhibits}
                       AND {matching}{also} OFFSET 0) AS x{exclude}
               LIMIT %s)
    SELECT c.id,
           coalesce((SELECT sum(w.weights[array_position(w.lexemes, f.lexeme)] * f.tf * %s / (f.tf + %s + %s * c.dl))
                     FROM (SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf FROM unnest(c.v)) AS f,
                          (SELECT %s::text[] AS lexemes, %s::float8[] AS weights) AS w), 0),
           c.dl{phrases}
    FROM c"""
_PG_PHRASES = """,
           (SELECT string_agg(f.lexeme || chr(1) || array_to_string(f.positions, ','), chr(2))
            FROM unnest(c.v) f WHERE f.lexeme = ANY(%s::text[]))"""


@dataclass(frozen=True)
class _Term:
    """A term as the ``english`` configuration reads it: its lexemes at their offsets from the first
    (``breach of contract`` -> ``((0, 'breach'), (2, 'contract'))``)."""

    pattern: tuple[tuple[int, str], ...]

    @property
    def tsquery(self) -> str:
        """The ``tsquery`` of the term, its lexemes quoted as they are (no stemming again)."""
        parts = []
        for i, (offset, lexeme) in enumerate(self.pattern):
            if i:
                parts.append(f"<{offset - self.pattern[i - 1][0]}>")
            parts.append("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'")
        return " ".join(parts)

    def tf(self, positions: dict[str, set[int]]) -> int:
        """Occurrences of the term on a page, from the positions of its lexemes there."""
        (first, lexeme), rest = self.pattern[0], self.pattern[1:]
        starts = positions.get(lexeme, set())
        if not rest:
            return len(starts)
        return sum(1 for s in starts if all(s + offset - first in positions.get(lx, ()) for offset, lx in rest))


class _Postgres:
    """BM25 computed here over the matter's counts, read in tiers."""

    def __init__(self, cursor, matter_id: int, exhibit_ids: list[int] | None):
        self.cursor, self.matter_id, self.exhibit_ids = cursor, matter_id, exhibit_ids

    def rank(self, terms: list[tuple[str, ...]], limit: int) -> list[tuple[int, float]]:
        self.terms = {t.tsquery: t for t in self._read_terms(terms)}
        if not self.terms:
            return []
        self.cursor.execute(_PG_STAMP, [self.matter_id])
        stamp = tuple(self.cursor.fetchone())
        counts = _cached(self.matter_id, stamp, lambda: self._counts(stamp))
        for query, term in self.terms.items():
            if query in counts.df:
                continue
            if len(term.pattern) == 1:
                self.cursor.execute(f"SELECT count(*) {_READY_PAGES} AND p.search_vector @@ %s::tsquery",
                                    [self.matter_id, query])
                counts.df[query] = self.cursor.fetchone()[0]
            else:
                self.cursor.execute(f"SELECT coalesce(array_agg(p.id ORDER BY p.id), '{{}}') {_READY_PAGES} "
                                    "AND p.search_vector @@ %s::tsquery", [self.matter_id, query])
                pages = self.cursor.fetchone()[0]
                counts.phrase_pages[query], counts.df[query] = pages, len(pages)
        self.phrase_pages = counts.phrase_pages
        self.terms = {q: t for q, t in self.terms.items() if counts.df[q]}
        if not self.terms:
            return []
        self.avgdl = counts.avgdl
        self.weight = {q: _idf(counts.pages, counts.df[q]) for q in self.terms}
        self.lexemes = sorted({lexeme for t in self.terms.values() for _, lexeme in t.pattern})
        scores, _ = _tiers(list(self.terms), counts.df, self.weight, limit, self.read, READ_PAGES_POSTGRES)
        return _best(scores, limit)

    def _counts(self, stamp: tuple) -> _Counts:
        self.cursor.execute(f"SELECT count(*), coalesce(avg(length(p.search_vector)), 0) {_READY_PAGES}",
                            [self.matter_id])
        pages, avgdl = self.cursor.fetchone()
        return _Counts(stamp, pages, float(avgdl) or 1.0)

    def _read_terms(self, terms: list[tuple[str, ...]]) -> list[_Term]:
        """``terms`` read by ``to_tsvector('english', …)``; a term of common words only has no lexeme: dropped."""
        self.cursor.execute("""
            SELECT t.i, v.lexeme, v.positions
            FROM unnest(%s::text[]) WITH ORDINALITY AS t(words, i), unnest(to_tsvector('english', t.words)) AS v""",
                            [[" ".join(words) for words in terms]])
        found: dict[int, list[tuple[int, str]]] = {}
        for i, lexeme, positions in self.cursor.fetchall():
            found.setdefault(i, []).extend((position, lexeme) for position in positions or [1])
        read = []
        for _, pattern in sorted(found.items()):
            pattern.sort()
            read.append(_Term(tuple((position - pattern[0][0], lexeme) for position, lexeme in pattern)))
        return read

    def _holds(self, vector: str, page: str, queries: tuple[str, ...]) -> tuple[str, list]:
        """The condition that a page holds any of ``queries``, and its parameters: words through the GIN index,
        phrases by the pages found for them."""
        words = [q for q in queries if q not in self.phrase_pages]
        pages = sorted({p for q in queries if q in self.phrase_pages for p in self.phrase_pages[q]})
        parts, params = [], []
        if words:
            parts.append(f"{vector} @@ %s::tsquery")
            params.append(" | ".join(f"({q})" for q in words))
        if pages:
            parts.append(f"{page} = ANY(%s)")
            params.append(pages)
        return "(" + " OR ".join(parts or ["false"]) + ")", params

    def read(self, what: _Read, most: int, limit: int) -> tuple[dict[int, float], int]:
        params: list = [self.matter_id]
        exhibits = also_sql = exclude = ""
        if self.exhibit_ids is not None:
            exhibits = " AND p.exhibit_id = ANY(%s)"
            params.append([int(i) for i in self.exhibit_ids])
        matching, matching_params = self._holds("p.search_vector", "p.id", what.matching)
        params += matching_params
        if what.also:
            also_sql, also_params = self._holds("p.search_vector", "p.id", what.also)
            also_sql = f" AND {also_sql}"
            params += also_params
        if what.excluding:
            exclude, exclude_params = self._holds("x.v", "x.id", what.excluding)
            exclude = f" WHERE NOT {exclude}"
            params += exclude_params
        words = {q: t.pattern[0][1] for q, t in self.terms.items() if len(t.pattern) == 1}
        phrases = {q: t for q, t in self.terms.items() if len(t.pattern) > 1}
        phrase_lexemes = sorted({lexeme for t in phrases.values() for _, lexeme in t.pattern})
        sql = _PG_TIER.format(ready=_READY_PAGES, exhibits=exhibits, matching=matching, also=also_sql, exclude=exclude,
                              phrases=_PG_PHRASES if phrases else "")
        self.cursor.execute(sql, [self.lexemes, *params, most, K1 + 1, K1 * (1 - B), K1 * B / self.avgdl,
                                  list(words.values()), [self.weight[q] for q in words],
                                  *([phrase_lexemes] if phrases else [])])
        rows = self.cursor.fetchall()
        scores = {}
        for page_id, score, dl, *positions in rows:
            positions = positions[0] if positions else None
            if positions:
                found: dict[str, set[int]] = {}
                for item in positions.split("\x02"):
                    lexeme, _, places = item.partition("\x01")
                    found[lexeme] = {int(p) for p in places.split(",") if p}
                norm = K1 * (1 - B + B * dl / self.avgdl)
                for query, term in phrases.items():
                    if tf := term.tf(found):
                        score += self.weight[query] * tf * (K1 + 1) / (tf + norm)
            if score > 0:
                scores[page_id] = float(score)
        return dict(_best(scores, limit)), len(rows)
