"""BM25 over a matter's pages with OR semantics: the lexical ranking of retrieval (pipeline.retrieval).

SQLite: FTS5's own ``bm25()`` (k1 1.2, b 0.75) over the OR of the terms, limited to the matter inside the full-text
query (:mod:`matters.exhibits.search_index`). PostgreSQL: candidates from the GIN index by the OR of the terms, then
scored by ``ts_rank`` weighted by each term's inverse document frequency in the matter.
"""

import math
import re

from django.db import connection

from matters.models import Matter

_WORD = re.compile(r"\w+")


def _clean(terms: list[list[str]]) -> list[list[str]]:
    out = []
    for term in terms:
        words = [w for part in term for w in _WORD.findall(part)]
        if words:
            out.append(words)
    return out


def bm25_pages(*, matter: Matter, terms: list[list[str]], exhibit_ids: list[int] | None = None,
               limit: int = 200) -> list[tuple[int, float]]:
    """(page id, score) of the ``limit`` best pages of ``matter``'s ready exhibits (only ``exhibit_ids`` when
    given) for the OR of ``terms`` (each a word, or a phrase as its words), best first; higher is better."""
    terms = _clean(terms)
    if not terms or exhibit_ids == []:
        return []
    if connection.vendor == "postgresql":
        return _postgres(matter, terms, exhibit_ids, limit)
    fts = " OR ".join('"' + " ".join(t) + '"' for t in terms)
    where_exhibits = ""
    params: list = [f'matter:"{int(matter.pk)}" AND reading_text:({fts})', matter.pk]
    if exhibit_ids is not None:
        where_exhibits = f" AND e.id IN ({', '.join('%s' for _ in exhibit_ids)})"
        params += list(exhibit_ids)
    sql = f"""SELECT p.id, bm25(matters_page_fts, 1.0, 0.0) AS score FROM matters_page_fts
              JOIN matters_page p ON p.id = matters_page_fts.rowid JOIN matters_exhibit e ON e.id = p.exhibit_id
              WHERE matters_page_fts MATCH %s AND e.matter_id = %s AND e.status = 'ready'{where_exhibits}
              ORDER BY score, p.id LIMIT %s"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit])
        # FTS5's bm25() is lower for better matches: negated, so higher is better on both databases.
        return [(row[0], -row[1]) for row in cursor.fetchall()]


def _postgres(matter: Matter, terms: list[list[str]], exhibit_ids, limit: int) -> list[tuple[int, float]]:
    where_exhibits, extra = "", []
    if exhibit_ids is not None:
        where_exhibits = " AND e.id = ANY(%s)"
        extra = [list(exhibit_ids)]
    queries = ["phraseto_tsquery('english', %s)" for _ in terms]
    texts = [" ".join(t) for t in terms]
    base = f"""FROM matters_page p JOIN matters_exhibit e ON e.id = p.exhibit_id
               WHERE e.matter_id = %s AND e.status = 'ready'{where_exhibits}"""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) {base}", [matter.pk, *extra])
        pages = cursor.fetchone()[0] or 1
        counts = ", ".join(f"count(*) FILTER (WHERE p.search_vector @@ {q})" for q in queries)
        cursor.execute(f"SELECT {counts} {base} AND p.search_vector @@ ({' || '.join(queries)})",
                       [*texts, matter.pk, *extra, *texts])
        df = cursor.fetchone()
        weights = [max(0.0, math.log(1 + (pages - n + 0.5) / (n + 0.5))) for n in df]
        score = " + ".join(f"%s * ts_rank(p.search_vector, {q}, 1)" for q in queries)
        params = [x for w, t in zip(weights, texts, strict=True) for x in (w, t)]
        cursor.execute(f"""SELECT p.id, ({score}) AS score {base} AND p.search_vector @@ ({' || '.join(queries)})
                           ORDER BY score DESC, p.id LIMIT %s""", [*params, matter.pk, *extra, *texts, limit])
        return [(row[0], float(row[1])) for row in cursor.fetchall()]
