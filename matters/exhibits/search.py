"""Full-text search over a matter's page text: SQLite FTS5 or PostgreSQL full-text search.

Both index ``Page.reading_text``, the page text in its reading form (:mod:`matters.exhibits.reading`: ligatures read as
letters, one quotation mark and dash, line-end hyphenation joined, transcript line numbers dropped), and read the
query through the same normalisation; a hyphenated word typed (``non-compete``) also finds its joined form
(``noncompete``), the form a compound broken at its own hyphen at a line end is indexed in.

The search box reads the review-platform query language of :mod:`matters.exhibits.query_language` (AND, OR, NOT,
phrases, ``w/N``, ``pre/N``, wildcards, parentheses), translated once per engine: an FTS5 ``MATCH`` expression, or a
``to_tsquery`` of quoted words. SQLite's ``NEAR`` is unordered, so a ``pre/N`` there takes FTS5's candidates and
checks the order on each page's words (:func:`matters.exhibits.query_language.page_matches`).

Both return the same :class:`SearchHit` with a snippet whose matched words are marked; the snippet is escaped here,
so templates can show it as safe HTML. On SQLite the FTS5 table (its triggers: :mod:`matters.exhibits.search_index`);
on PostgreSQL the stored generated column ``matters_page.search_vector`` with its GIN index
(:func:`matters.exhibits.search_index.store_search_vector`), so neither matching nor ``ts_rank`` parses page text
again.
"""

import json
import re
from dataclasses import dataclass

from django.db import DatabaseError, connection
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from matters.models import Matter

from .query_language import (
    Node,
    PageWords,
    QuerySyntaxError,
    first_letters,
    fts5_match,
    has_ordered_near,
    highlight_fts5,
    highlight_tsquery,
    page_matches,
    parse_query,
    plain_query,
    relaxed,
    tsquery,
)
from .reading import HYPHENATED, hyphen_forms, reading_form

_START, _STOP = "\x01", "\x02"
_WORD = re.compile(r"\w+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class SearchHit:
    exhibit_id: int
    exhibit_label: str
    exhibit_title: str
    page_number: int
    snippet_html: SafeString


# Words in capitals the former reading of the search box dropped (:func:`search_terms`, still the reading of free
# text that is no valid query, which :func:`matter_search` may be given).
OPERATOR_WORDS = frozenset({"AND", "OR", "NOT", "NEAR"})


@dataclass(frozen=True)
class SearchTerms:
    """What a query asks for, the same for both engines, every part in reading form and made of words only
    (``\\w+``): ``phrases``, each a list of words to find in order; ``compounds``, each the forms of one hyphenated
    word, each form a list of words (:func:`matters.exhibits.reading.hyphen_forms`); ``words``, the other words."""

    phrases: list[list[str]]
    compounds: list[list[list[str]]]
    words: list[str]


def search_terms(query: str) -> SearchTerms | None:
    """Read ``query`` as the search box did before its query language, and as :func:`matter_search` still reads
    free text that is no valid query: quoted phrases (an unclosed quote opens no phrase), hyphenated
    words, and other words; punctuation, wildcards and ``OPERATOR_WORDS`` outside quotes are dropped. Returns None
    when nothing is left to search for (``OR AND NOT *``, ``"--"``)."""
    query = reading_form(query)
    phrases = [words for p in _PHRASE.findall(query) if (words := _WORD.findall(p))]
    rest = _PHRASE.sub(" ", query)
    compounds = [[_WORD.findall(form) for form in hyphen_forms(m.group(0))] for m in HYPHENATED.finditer(rest)]
    words = [w for w in _WORD.findall(HYPHENATED.sub(" ", rest)) if w not in OPERATOR_WORDS]
    if not (phrases or compounds or words):
        return None
    return SearchTerms(phrases, compounds, words)


def _fts5_query(terms: SearchTerms) -> str:
    """Translate ``terms`` into an FTS5 query: phrases stay phrases, other words are ANDed, and a hyphenated word
    matches either of its forms. Every term is quoted, so nothing of it is read as an FTS5 operator."""
    return fts5_match(_plain_node(terms))


def _plain_node(terms: SearchTerms) -> Node:
    return plain_query(terms.phrases, terms.compounds, terms.words)


def _in_matter(fts_query: str, matter_id: int) -> str:
    """``fts_query`` limited inside FTS5 to the pages of matter ``matter_id``: the index's ``matter`` column holds
    each page's matter (:data:`matters.exhibits.search_index.MATTER_LAYOUT`), and the words are searched in the
    text column only, so a number typed is never taken for a matter."""
    return f'matter:"{int(matter_id)}" AND reading_text:({fts_query})'


def _snippet_html(raw: str) -> SafeString:
    return mark_safe(escape(raw).replace(_START, "<mark>").replace(_STOP, "</mark>"))


@dataclass(frozen=True)
class _Plan:
    """A query made ready for the engine: ``where``, the FROM/WHERE clause matching the matter's ready pages, with
    its ``params``; ``every_match``, the same clause for reading all the matches (counting or ranking them:
    on PostgreSQL planned without the words, see ``_POSTGRES_FROM``), ``where`` itself on SQLite; ``highlight``,
    the query that marks the snippet's words (PostgreSQL: always; SQLite: where FTS5's own snippet of the query
    fails); on SQLite ``check``, the query to check each candidate page's words against when FTS5 matches more
    than it asks (``pre/N``), else None."""

    where: str
    params: list
    every_match: str
    highlight: str = ""
    check: Node | None = None


_SQLITE_FROM = """
    FROM matters_page_fts
    JOIN matters_page p ON p.id = matters_page_fts.rowid
    JOIN matters_exhibit e ON e.id = p.exhibit_id
    WHERE matters_page_fts MATCH %s AND e.matter_id = %s AND e.status = 'ready'"""


def _plan(node: Node, matter_id: int) -> _Plan:
    """The SQL that matches ``node`` in matter ``matter_id``. On SQLite the matter is named twice: inside the FTS5
    query, so the index yields only the matter's pages, and on the exhibit, which keeps a search inside its matter
    whatever the index holds."""
    if connection.vendor == "postgresql":
        return _Plan(_POSTGRES_FROM.format(tsquery=_TSQUERY, unseen=""), [tsquery(node), matter_id],
                     every_match=_POSTGRES_FROM.format(tsquery=_TSQUERY, unseen=" OFFSET 0"),
                     highlight=highlight_tsquery(node))
    check = node if has_ordered_near(node) else None
    return _Plan(_SQLITE_FROM, [_in_matter(fts5_match(relaxed(node)), matter_id), matter_id],
                 every_match=_SQLITE_FROM, highlight=highlight_fts5(node), check=check)


def _read(query: str) -> Node | None:
    """``query`` read as free text: in the query language, or, where it is no valid query (a request in words,
    as ``bench/retrieval.py`` passes), as the search box read it before (every word required)."""
    try:
        return parse_query(query)
    except QuerySyntaxError:
        terms = search_terms(query)
        return None if terms is None else _plain_node(terms)


# The candidates a pre/N on SQLite reads at most (about 0.2 ms each): two words often near each other but rarely
# in that order could otherwise read every page of a large matter in one request.
PRE_CHECK_MAX = 5_000


def _checked_ids(cursor, plan: _Plan, *, most: int | None = None) -> tuple[list[int], bool]:
    """Ids of the pages FTS5 yields for ``plan`` that pass its check, in the order they were added, at most
    ``most``; and whether every candidate was read (False past ``PRE_CHECK_MAX`` candidates). Reads each
    candidate's text: the cost of ``pre/N`` on SQLite, in proportion to the pages where the two words are near
    each other in either order."""
    cursor.execute(f"SELECT p.id, p.reading_text {plan.where} ORDER BY matters_page_fts.rowid LIMIT %s",
                   [*plan.params, PRE_CHECK_MAX + 1])
    ids: list[int] = []
    letters = first_letters(plan.check)
    read = 0
    while rows := cursor.fetchmany(500):
        for page_id, text in rows:
            read += 1
            if read > PRE_CHECK_MAX:
                return ids, False
            if page_matches(plan.check, PageWords(text or "", letters)):
                ids.append(page_id)
                if most is not None and len(ids) >= most:
                    return ids, True
    return ids, True


def _sqlite_hits(cursor, plan: _Plan, *, ranked: bool, limit: int, ids: list[int] | None = None) -> list:
    """Rows of the ``limit`` best-ranked pages of ``plan`` (or, not ``ranked``, the first added), among ``ids``
    when given (the pages that passed the check)."""
    where, params = plan.where, list(plan.params)
    if ids is not None:
        where += " AND p.id IN (SELECT value FROM json_each(%s))"
        params.append(json.dumps(ids))
    order = f"{_SQLITE_RANK}, e.label_seq, p.number" if ranked else "matters_page_fts.rowid"
    try:
        cursor.execute(f"SELECT {_SQLITE_HIT} {where} ORDER BY {order} LIMIT %s", [*params, limit])
        return cursor.fetchall()
    except DatabaseError:  # FTS5's snippet() of this query (query_language.highlight_fts5): mark the words alone
        cursor.execute(f"SELECT e.id, e.label, e.title, p.number, p.id, p.reading_text {where} ORDER BY {order} "
                       "LIMIT %s", [*params, limit])
        return [(*row[:4], _sqlite_snippet(cursor, plan, row[4], row[5])) for row in cursor.fetchall()]


def _sqlite_snippet(cursor, plan: _Plan, page_id: int, text: str) -> str:
    """The snippet of page ``page_id`` with the words of ``plan.highlight`` marked; its first words unmarked
    should FTS5 fail on that too."""
    try:
        cursor.execute("SELECT snippet(matters_page_fts, 0, char(1), char(2), '…', 24) FROM matters_page_fts "
                       "WHERE matters_page_fts MATCH %s AND rowid = %s", [f"reading_text:{plan.highlight}", page_id])
        row = cursor.fetchone()
        if row is not None:
            return row[0]
    except DatabaseError:
        pass
    words = (text or "").split()
    return " ".join(words[:24]) + (" …" if len(words) > 24 else "")


# The matter column's weight is 0: every page of a search has the same matter, so it would add the same to each.
_SQLITE_RANK = "bm25(matters_page_fts, 1.0, 0.0)"
_SQLITE_HIT = "e.id, e.label, e.title, p.number, snippet(matters_page_fts, 0, char(1), char(2), '…', 24)"
_TSQUERY = "to_tsquery('english', %s)"
# ``unseen`` (OFFSET 0) keeps the query typed out of the planner's sight where every match is read (counted up to
# 2,001, or ranked), so that plan does not follow how common the words are. Shown a word, PostgreSQL read the
# pages in order and matched each page's vector until it had 2,001: a vector is 1.6 KB, 3 to 6 µs a page, and a
# word on 15% of 200,000 pages read 14,000 of them (40 to 120 ms for the count alone). Without the word it takes
# the GIN index for every query (5 to 22 ms for the bench's words), and still starts from the matter's exhibits
# when the matter is small. The first 50 matches in page order keep the word in sight: there reading the pages in
# order is right for a common word (50 found in the first hundred pages), and the planner knows which words
# are common.
_POSTGRES_FROM = """
    FROM matters_page p
    JOIN matters_exhibit e ON e.id = p.exhibit_id,
         (SELECT {tsquery} AS q{unseen}) AS typed
    WHERE e.matter_id = %s AND e.status = 'ready' AND p.search_vector @@ q"""
# ts_headline parses the page's text again: in an outer query it runs for the hits shown, not for every match.
# Its query is the plan's highlight (the words and phrases looked for, ORed), not the query matched: ts_headline
# tries its query on every fragment, which took seconds a page for a w/50 of alternatives.
_POSTGRES_HITS = """
    SELECT e.id, e.label, e.title, p.number,
           ts_headline('english', p.reading_text, typed.q, 'StartSel=' || chr(1) || ', StopSel=' || chr(2)
                       || ', MaxWords=30, MinWords=12, MaxFragments=2')
    FROM ({chosen}) AS chosen
    JOIN matters_page p ON p.id = chosen.id
    JOIN matters_exhibit e ON e.id = p.exhibit_id,
         (SELECT {tsquery} AS q) AS typed
    ORDER BY {order}"""
_POSTGRES_RANKED = ("SELECT p.id, ts_rank(p.search_vector, q) AS rank {where} "
                    "ORDER BY rank DESC, e.label_seq, p.number LIMIT %s")
_POSTGRES_RANK_ORDER = "chosen.rank DESC, e.label_seq, p.number"


def _hits(rows) -> list[SearchHit]:
    return [SearchHit(r[0], r[1], r[2], r[3], _snippet_html(r[4] or "")) for r in rows]


def matter_search(*, matter: Matter, query: str, limit: int = 50) -> list[SearchHit]:
    """Return up to ``limit`` pages of ``matter`` whose text matches ``query``, best first. Only ``ready``
    exhibits are searched (a failed exhibit's partial text is deleted anyway). Ranks every match: for the search
    box, where a common word matches most pages, :func:`matter_search_results` bounds that work. ``query`` is read
    in the query language; text that is no valid query (an unclosed parenthesis, a dangling ``OR``) is read as
    words, all required, so a caller passing free text never gets an error."""
    node = _read(query)
    if node is None:
        return []
    plan = _plan(node, matter.pk)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            chosen = _POSTGRES_RANKED.format(where=plan.every_match)
            sql = _POSTGRES_HITS.format(chosen=chosen, tsquery=_TSQUERY, order=_POSTGRES_RANK_ORDER)
            cursor.execute(sql, [*plan.params, limit, plan.highlight])
            return _hits(cursor.fetchall())
        ids = _checked_ids(cursor, plan)[0] if plan.check is not None else None
        if ids == []:
            return []
        return _hits(_sqlite_hits(cursor, plan, ranked=True, limit=limit, ids=ids))


# The search box ranks the matches of a query only when at most this many pages match. Ranking costs time in
# proportion to the matches (bm25 or ts_rank of each, then a sort): a word on nearly every one of 50,000 pages
# took about 150 ms on SQLite and 500 ms on PostgreSQL, and a ranking of 40,000 near-equal pages tells a reader
# little. Past it the box shows the first pages in the order they were added, which the index yields at once.
RANKED_MATCHES_MAX = 2_000


@dataclass(frozen=True)
class SearchResults:
    """What the search box shows for a query. ``hits``: at most the limit asked for. ``matches``: how many pages
    match, counted up to ``RANKED_MATCHES_MAX + 1``. ``ranked``: True when ``hits`` are the best-ranked of all the
    matches; False when more than ``RANKED_MATCHES_MAX`` pages match and ``hits`` are the first matching pages in
    the order they were added to the matter. ``searchable``: False when the query held nothing to search for
    (only operators or punctuation), so the page can say so instead of "0 pages found". ``error``: why the query
    could not be read (:class:`matters.exhibits.query_language.QuerySyntaxError`, written for the attorney), or
    empty; with an error nothing was searched. ``partial``: a ``pre/N`` on SQLite read only the first
    ``PRE_CHECK_MAX`` pages where its words are near each other, so later pages may match too."""

    hits: list[SearchHit]
    matches: int
    ranked: bool
    searchable: bool = True
    error: str = ""
    partial: bool = False

    @property
    def checked_max(self) -> str:
        """``PRE_CHECK_MAX`` as a reader sees it: how many pages a ``pre/N`` read for the order of its words."""
        return f"{PRE_CHECK_MAX:,}"

    @property
    def ranked_max(self) -> str:
        """``RANKED_MATCHES_MAX`` as a reader sees it (``2,000``)."""
        return f"{RANKED_MATCHES_MAX:,}"


def matter_search_results(*, matter: Matter, query: str, limit: int = 50) -> SearchResults:
    """Search ``matter``'s ready pages for ``query`` as the search box does: count the matches (up to
    ``RANKED_MATCHES_MAX + 1``), then return the ``limit`` best-ranked of them, or, past that many matches, the
    first ``limit`` in the order the pages were added (by page id). Two queries; neither ranks nor reads more
    than ``RANKED_MATCHES_MAX + 1`` matches; none when ``query`` holds nothing to search for or cannot be read
    (then ``error`` says why). On SQLite a ``pre/N`` also reads the text of FTS5's candidates until
    ``RANKED_MATCHES_MAX + 1`` of them pass (:func:`_checked_ids`)."""
    try:
        node = parse_query(query)
    except QuerySyntaxError as error:
        return SearchResults([], 0, True, error=str(error))
    if node is None:
        return SearchResults([], 0, True, searchable=False)
    empty = SearchResults([], 0, True)
    plan = _plan(node, matter.pk)
    with connection.cursor() as cursor:
        if plan.check is not None:
            ids, complete = _checked_ids(cursor, plan, most=RANKED_MATCHES_MAX + 1)
            matches = len(ids)
            if not matches:
                return SearchResults([], 0, True, partial=not complete)
            ranked = matches <= RANKED_MATCHES_MAX
            rows = _sqlite_hits(cursor, plan, ranked=ranked, limit=limit, ids=ids if ranked else ids[:limit])
            return SearchResults(_hits(rows), matches, ranked, partial=not complete)
        cursor.execute(f"SELECT count(*) FROM (SELECT 1 {plan.every_match} LIMIT %s) AS matched",
                       [*plan.params, RANKED_MATCHES_MAX + 1])
        matches = cursor.fetchone()[0]
        if not matches:
            return empty
        ranked = matches <= RANKED_MATCHES_MAX
        if connection.vendor != "postgresql":
            rows = _sqlite_hits(cursor, plan, ranked=ranked, limit=limit)
        else:
            if ranked:
                chosen, order = _POSTGRES_RANKED.format(where=plan.every_match), _POSTGRES_RANK_ORDER
            else:
                chosen, order = f"SELECT p.id {plan.where} ORDER BY p.id LIMIT %s", "p.id"
            cursor.execute(_POSTGRES_HITS.format(chosen=chosen, tsquery=_TSQUERY, order=order),
                           [*plan.params, limit, plan.highlight])
            rows = cursor.fetchall()
    return SearchResults(_hits(rows), matches, ranked)


def page_ids_with_phrase(*, matter: Matter, words: list[str], limit: int = 5) -> list[tuple[int, int]]:
    """``(page id, exhibit id)`` of up to ``limit`` pages of ``matter``'s ready exhibits holding ``words`` as a
    phrase (stemmed, as the full-text index stores words), in no particular order."""
    terms = [t for t in (" ".join(_WORD.findall(w)) for w in words) if t]
    if not terms:
        return []
    if connection.vendor == "postgresql":
        # Planned without the words (OFFSET 0, as the search box's count): shown a phrase of common words, the
        # planner read pages in order until it had ``limit`` of them, every page of the matter when the phrase is
        # nowhere (a quotation the draft made up): 850 ms at 200,000 pages, 31 ms through the GIN index (a common
        # phrase that is there: 0.6 ms before, 14 now).
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id,
                 (SELECT phraseto_tsquery('english', %s) AS q OFFSET 0) AS typed
            WHERE e.matter_id = %s AND e.status = 'ready' AND p.search_vector @@ typed.q
            LIMIT %s
        """
        params = [" ".join(terms), matter.pk, limit]
    else:
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page_fts JOIN matters_page p ON p.id = matters_page_fts.rowid
            JOIN matters_exhibit e ON e.id = p.exhibit_id
            WHERE matters_page_fts MATCH %s AND e.matter_id = %s AND e.status = 'ready'
            LIMIT %s
        """
        params = [_in_matter('"' + " ".join(terms) + '"', matter.pk), matter.pk, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], row[1]) for row in cursor.fetchall()]


def page_ids_with_words(*, matter: Matter, words: list[str], limit: int = 20) -> list[tuple[int, int]]:
    """``(page id, exhibit id)`` of the best-ranked pages of ``matter``'s ready exhibits holding every one of
    ``words``, at most ``limit``. ``words`` are plain words; anything else in them is dropped. Used by the
    verifier to find the few pages a quotation could come from (pages holding any of the words: the BM25 of
    :func:`matters.exhibits.lexical.bm25_pages`, which stops early where ranking them all would not)."""
    terms = [t for t in (" ".join(_WORD.findall(w)) for w in words) if t]
    if not terms:
        return []
    if connection.vendor == "postgresql":
        query = " & ".join("'" + t.replace("'", "") + "'" for t in terms)
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id,
                 to_tsquery('english', %s) q
            WHERE e.matter_id = %s AND e.status = 'ready' AND p.search_vector @@ q
            ORDER BY ts_rank(p.search_vector, q) DESC LIMIT %s
        """
    else:
        query = " ".join(f'"{t}"' for t in terms)
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page_fts JOIN matters_page p ON p.id = matters_page_fts.rowid
            JOIN matters_exhibit e ON e.id = p.exhibit_id
            WHERE matters_page_fts MATCH %s AND e.matter_id = %s AND e.status = 'ready'
            ORDER BY bm25(matters_page_fts, 1.0, 0.0) LIMIT %s
        """
        query = _in_matter(query, matter.pk)
    with connection.cursor() as cursor:
        cursor.execute(sql, [query, matter.pk, limit])
        return [(row[0], row[1]) for row in cursor.fetchall()]
