"""Full-text search over a matter's page text: SQLite FTS5 or PostgreSQL full-text search.

Both return the same :class:`SearchHit` with a snippet whose matched words are marked; the snippet is escaped here,
so templates can show it as safe HTML. The FTS5 index and the PostgreSQL GIN index are created by migration 0002
(the FTS5 triggers: :mod:`matters.search_index`).
"""

import re
from dataclasses import dataclass

from django.db import connection
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from .models import Matter

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


def _fts5_query(query: str) -> str:
    """Translate what a person types into an FTS5 query: quoted phrases stay phrases, other words are ANDed.

    Every term is quoted, so FTS5 operators typed by accident (AND, NEAR, column:) are searched as words.
    """
    phrases = [" ".join(_WORD.findall(p)) for p in _PHRASE.findall(query)]
    rest = _PHRASE.sub(" ", query)
    terms = [f'"{p}"' for p in phrases if p] + [f'"{w}"' for w in _WORD.findall(rest)]
    return " ".join(terms)


def _snippet_html(raw: str) -> SafeString:
    return mark_safe(escape(raw).replace(_START, "<mark>").replace(_STOP, "</mark>"))


def matter_search(*, matter: Matter, query: str, limit: int = 50) -> list[SearchHit]:
    """Return up to ``limit`` pages of ``matter`` whose text matches ``query``, best first. Only ``ready``
    exhibits are searched (a failed exhibit's partial text is deleted anyway)."""
    query = query.strip()
    if not query:
        return []
    if connection.vendor == "postgresql":
        sql = """
            SELECT e.id, e.label, e.title, p.number,
                   ts_headline('english', p.text, q, 'StartSel=' || chr(1) || ', StopSel=' || chr(2)
                               || ', MaxWords=30, MinWords=12, MaxFragments=2')
            FROM matters_page p
            JOIN matters_exhibit e ON e.id = p.exhibit_id,
                 websearch_to_tsquery('english', %s) q
            WHERE e.matter_id = %s AND e.status = 'ready'
              AND to_tsvector('english', p.text) @@ q
            ORDER BY ts_rank(to_tsvector('english', p.text), q) DESC, e.label_seq, p.number
            LIMIT %s
        """
        params = [query, matter.pk, limit]
    else:
        fts_query = _fts5_query(query)
        if not fts_query:
            return []
        sql = """
            SELECT e.id, e.label, e.title, p.number,
                   snippet(matters_page_fts, 0, char(1), char(2), '…', 24)
            FROM matters_page_fts
            JOIN matters_page p ON p.id = matters_page_fts.rowid
            JOIN matters_exhibit e ON e.id = p.exhibit_id
            WHERE matters_page_fts MATCH %s AND e.matter_id = %s AND e.status = 'ready'
            ORDER BY bm25(matters_page_fts), e.label_seq, p.number
            LIMIT %s
        """
        params = [fts_query, matter.pk, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [SearchHit(r[0], r[1], r[2], r[3], _snippet_html(r[4] or "")) for r in rows]


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
              AND to_tsvector('english', p.text) @@ phraseto_tsquery('english', %s)
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
        params = ['"' + " ".join(terms) + '"', matter.pk, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], row[1]) for row in cursor.fetchall()]


def page_ids_with_words(*, matter: Matter, words: list[str], any_word: bool = False,
                        limit: int = 20) -> list[tuple[int, int]]:
    """``(page id, exhibit id)`` of pages of ``matter``'s ready exhibits holding every one of ``words`` (or, with ``any_word``, the
    best-ranked pages holding any of them), at most ``limit``. ``words`` are plain words; anything else in them
    is dropped. Used by the verifier to find the few pages a quotation could come from."""
    terms = [t for t in (" ".join(_WORD.findall(w)) for w in words) if t]
    if not terms:
        return []
    if connection.vendor == "postgresql":
        joiner = " | " if any_word else " & "
        query = joiner.join("'" + t.replace("'", "") + "'" for t in terms)
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id,
                 to_tsquery('english', %s) q
            WHERE e.matter_id = %s AND e.status = 'ready' AND to_tsvector('english', p.text) @@ q
            ORDER BY ts_rank(to_tsvector('english', p.text), q) DESC LIMIT %s
        """
    else:
        query = (" OR " if any_word else " ").join(f'"{t}"' for t in terms)
        sql = """
            SELECT p.id, p.exhibit_id FROM matters_page_fts JOIN matters_page p ON p.id = matters_page_fts.rowid
            JOIN matters_exhibit e ON e.id = p.exhibit_id
            WHERE matters_page_fts MATCH %s AND e.matter_id = %s AND e.status = 'ready'
            ORDER BY bm25(matters_page_fts) LIMIT %s
        """
    with connection.cursor() as cursor:
        cursor.execute(sql, [query, matter.pk, limit])
        return [(row[0], row[1]) for row in cursor.fetchall()]
