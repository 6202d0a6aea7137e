"""Full-text search over a matter's page text: SQLite FTS5 or PostgreSQL full-text search.

Both index ``Page.reading_text``, the page text in its reading form (:mod:`matters.exhibits.reading`: ligatures read as
letters, one quotation mark and dash, line-end hyphenation joined, transcript line numbers dropped), and read the
query through the same normalisation; a hyphenated word typed (``non-compete``) also finds its joined form
(``noncompete``), the form a compound broken at its own hyphen at a line end is indexed in.

Both return the same :class:`SearchHit` with a snippet whose matched words are marked; the snippet is escaped here,
so templates can show it as safe HTML. On SQLite the FTS5 table (its triggers: :mod:`matters.exhibits.search_index`);
on PostgreSQL the stored generated column ``matters_page.search_vector`` with its GIN index
(:func:`matters.exhibits.search_index.store_search_vector`), so neither matching nor ``ts_rank`` parses page text
again.
"""

import re
from dataclasses import dataclass

from django.db import connection
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from matters.models import Matter

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


# Words in capitals that a person may type as operators. The search box has none (words are ANDed, a quoted
# phrase is a phrase), and each engine's own syntax reads them its own way (FTS5 as operators, PostgreSQL's web
# search syntax "OR" as an alternative). They are dropped, so both engines search the same words and a query of
# operators alone is empty.
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
    """Read ``query`` as the search box does: quoted phrases (an unclosed quote opens no phrase), hyphenated
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
    parts = [f'"{" ".join(p)}"' for p in terms.phrases]
    parts += ["(" + " OR ".join(f'"{" ".join(f)}"' for f in forms) + ")" for forms in terms.compounds]
    parts += [f'"{w}"' for w in terms.words]
    return " ".join(parts)


def _in_matter(fts_query: str, matter_id: int) -> str:
    """``fts_query`` limited inside FTS5 to the pages of matter ``matter_id``: the index's ``matter`` column holds
    each page's matter (:data:`matters.exhibits.search_index.MATTER_LAYOUT`), and the words are searched in the
    text column only, so a number typed is never taken for a matter."""
    return f'matter:"{int(matter_id)}" AND reading_text:({fts_query})'


def _postgres_query(terms: SearchTerms) -> tuple[str, list[str]]:
    """A PostgreSQL ``tsquery`` expression for ``terms`` and its parameters: the words ANDed
    (``plainto_tsquery``), each phrase as a phrase, each hyphenated word the OR of its forms as phrases. No part
    goes through ``websearch_to_tsquery``, whose operators (``or``, ``-``) FTS5 would not read alike."""
    parts, params = [], []
    if terms.words:
        parts.append("plainto_tsquery('english', %s)")
        params.append(" ".join(terms.words))
    for phrase in terms.phrases:
        parts.append("phraseto_tsquery('english', %s)")
        params.append(" ".join(phrase))
    for forms in terms.compounds:
        parts.append("(" + " || ".join("phraseto_tsquery('english', %s)" for _ in forms) + ")")
        params += [" ".join(f) for f in forms]
    return "(" + " && ".join(parts) + ")", params


def _snippet_html(raw: str) -> SafeString:
    return mark_safe(escape(raw).replace(_START, "<mark>").replace(_STOP, "</mark>"))


def _sqlite_sql(terms: SearchTerms, matter_id: int) -> tuple[str, str]:
    """The FTS5 query for ``terms`` in matter ``matter_id`` and the FROM/WHERE clause matching the matter's ready
    pages with it (parameters: the FTS5 query, the matter's id). The matter is named twice: inside the FTS5 query,
    so the index yields only the matter's pages, and on the exhibit, which keeps a search inside its matter
    whatever the index holds."""
    return _in_matter(_fts5_query(terms), matter_id), """
        FROM matters_page_fts
        JOIN matters_page p ON p.id = matters_page_fts.rowid
        JOIN matters_exhibit e ON e.id = p.exhibit_id
        WHERE matters_page_fts MATCH %s AND e.matter_id = %s AND e.status = 'ready'"""


# The matter column's weight is 0: every page of a search has the same matter, so it would add the same to each.
_SQLITE_RANK = "bm25(matters_page_fts, 1.0, 0.0)"
_SQLITE_HIT = "e.id, e.label, e.title, p.number, snippet(matters_page_fts, 0, char(1), char(2), '…', 24)"
_POSTGRES_FROM = """
    FROM matters_page p
    JOIN matters_exhibit e ON e.id = p.exhibit_id,
         (SELECT {tsquery} AS q) AS typed
    WHERE e.matter_id = %s AND e.status = 'ready' AND p.search_vector @@ q"""
# ts_headline parses the page's text again: in an outer query it runs for the hits shown, not for every match.
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
    box, where a common word matches most pages, :func:`matter_search_results` bounds that work."""
    terms = search_terms(query)
    if terms is None:
        return []
    if connection.vendor == "postgresql":
        tsquery, tsparams = _postgres_query(terms)
        chosen = _POSTGRES_RANKED.format(where=_POSTGRES_FROM.format(tsquery=tsquery))
        sql = _POSTGRES_HITS.format(chosen=chosen, tsquery=tsquery, order=_POSTGRES_RANK_ORDER)
        params = [*tsparams, matter.pk, limit, *tsparams]
    else:
        fts_query, where = _sqlite_sql(terms, matter.pk)
        sql = f"SELECT {_SQLITE_HIT} {where} ORDER BY {_SQLITE_RANK}, e.label_seq, p.number LIMIT %s"
        params = [fts_query, matter.pk, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return _hits(cursor.fetchall())


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
    (only operators or punctuation, :func:`search_terms`), so the page can say so instead of "0 pages found"."""

    hits: list[SearchHit]
    matches: int
    ranked: bool
    searchable: bool = True

    @property
    def ranked_max(self) -> str:
        """``RANKED_MATCHES_MAX`` as a reader sees it (``2,000``)."""
        return f"{RANKED_MATCHES_MAX:,}"


def matter_search_results(*, matter: Matter, query: str, limit: int = 50) -> SearchResults:
    """Search ``matter``'s ready pages for ``query`` as the search box does: count the matches (up to
    ``RANKED_MATCHES_MAX + 1``), then return the ``limit`` best-ranked of them, or, past that many matches, the
    first ``limit`` in the order the pages were added (by page id). Two queries; neither ranks nor reads more
    than ``RANKED_MATCHES_MAX + 1`` matches; none when ``query`` holds nothing to search for."""
    terms = search_terms(query)
    if terms is None:
        return SearchResults([], 0, True, searchable=False)
    empty = SearchResults([], 0, True)
    if connection.vendor == "postgresql":
        tsquery, tsparams = _postgres_query(terms)
        where, params = _POSTGRES_FROM.format(tsquery=tsquery), [*tsparams, matter.pk]
    else:
        fts_query, where = _sqlite_sql(terms, matter.pk)
        params = [fts_query, matter.pk]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM (SELECT 1 {where} LIMIT %s) AS matched",
                       [*params, RANKED_MATCHES_MAX + 1])
        matches = cursor.fetchone()[0]
        if not matches:
            return empty
        ranked = matches <= RANKED_MATCHES_MAX
        if connection.vendor != "postgresql":
            order = f"{_SQLITE_RANK}, e.label_seq, p.number" if ranked else "matters_page_fts.rowid"
            cursor.execute(f"SELECT {_SQLITE_HIT} {where} ORDER BY {order} LIMIT %s", [*params, limit])
            rows = cursor.fetchall()
        else:
            if ranked:
                chosen, order = _POSTGRES_RANKED.format(where=where), _POSTGRES_RANK_ORDER
            else:
                chosen, order = f"SELECT p.id {where} ORDER BY p.id LIMIT %s", "p.id"
            cursor.execute(_POSTGRES_HITS.format(chosen=chosen, tsquery=tsquery, order=order),
                           [*params, limit, *tsparams])
            rows = cursor.fetchall()
    return SearchResults(_hits(rows), matches, ranked)


def page_ids_with_phrase(*, matter: Matter, words: list[str], limit: int = 5) -> list[tuple[int, int]]:
    """``(page id, exhibit id)`` of up to ``limit`` pages of ``matter``'s ready exhibits holding ``words`` as a
    phrase (stemmed, as the full-text index stores words), in no particular order."""
    terms = [t for t in (" ".join(_WORD.findall(w)) for w in words) if t]
    if not terms:
        return []
    if connection.vendor == "postgresql":
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id
            WHERE e.matter_id = %s AND e.status = 'ready'
              AND p.search_vector @@ phraseto_tsquery('english', %s)
            LIMIT %s
        """
        params = [matter.pk, " ".join(terms), limit]
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


def page_ids_with_words(*, matter: Matter, words: list[str], any_word: bool = False,
                        limit: int = 20) -> list[tuple[int, int]]:
    """``(page id, exhibit id)`` of pages of ``matter``'s ready exhibits holding every one of ``words`` (or, with
    ``any_word``, the best-ranked pages holding any of them), at most ``limit``. ``words`` are plain words; anything
    else in them is dropped. Used by the verifier to find the few pages a quotation could come from."""
    terms = [t for t in (" ".join(_WORD.findall(w)) for w in words) if t]
    if not terms:
        return []
    if connection.vendor == "postgresql":
        joiner = " | " if any_word else " & "
        query = joiner.join("'" + t.replace("'", "") + "'" for t in terms)
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id,
                 to_tsquery('english', %s) q
            WHERE e.matter_id = %s AND e.status = 'ready' AND p.search_vector @@ q
            ORDER BY ts_rank(p.search_vector, q) DESC LIMIT %s
        """
    else:
        query = (" OR " if any_word else " ").join(f'"{t}"' for t in terms)
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
