"""Semantic ranking: the cosine similarity of a query's embedding to every chunk of the matter, with numpy.

Why numpy over the matter's vectors rather than a vector index (measured in bench/retrieval.py, docs/retrieval.md):
at 50,000 pages (about 170,000 chunks of 384 dimensions) one matrix-vector product takes a few milliseconds on
one core, exact, the same on SQLite and PostgreSQL (which has no pgvector here); sqlite-vec would serve SQLite
alone, and its brute-force scan costs the same product.

Vectors are read from the database once per process and matter and kept (float32, 1,536 bytes a chunk: about 230
MB at 50,000 pages; numpy has no fast float16 product), keyed by a
stamp of the matter's rows (count and highest id under the model): a sweep that added rows is read from the
highest id on, a deletion reads the matter again.
"""

import threading
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Max

from .models import ChunkEmbedding


@dataclass
class _Matrix:
    stamp: tuple[int, int]
    page_ids: np.ndarray      # (n,) int64
    exhibit_ids: np.ndarray   # (n,) int64
    spans: np.ndarray         # (n, 2) int32: start, end in the page's text
    vectors: np.ndarray       # (n, dims) float32, unit length


_CACHE: dict[tuple[int, str], _Matrix] = {}
_LOCK = threading.Lock()
_FIELDS = ("id", "page_id", "page__exhibit_id", "start", "end", "vector")


def _stamp(matter_id: int, model: str) -> tuple[int, int]:
    counts = ChunkEmbedding.objects.filter(matter_id=matter_id, model=model).aggregate(n=Count("id"), top=Max("id"))
    return counts["n"] or 0, counts["top"] or 0


def _read(matter_id: int, model: str, after_id: int = 0) -> tuple[list, ...]:
    rows = (ChunkEmbedding.objects.filter(matter_id=matter_id, model=model, id__gt=after_id, dims__gt=0)
            .order_by("id").values_list(*_FIELDS))
    pages, exhibits, spans, vectors = [], [], [], []
    for _, page, exhibit, start, end, vector in rows.iterator(chunk_size=5000):
        pages.append(page)
        exhibits.append(exhibit)
        spans.append((start, end))
        vectors.append(bytes(vector))
    return pages, exhibits, spans, vectors


def _arrays(pages, exhibits, spans, vectors, dims: int | None) -> tuple[np.ndarray, ...]:
    if not vectors:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2), np.int32),
                np.zeros((0, dims or 0), np.float32))
    # float16 on disk, float32 in memory: numpy multiplies float16 without BLAS, ten times slower (320 ms against
    # 30 ms for 150,000 chunks, the product of 50,000 pages).
    matrix = np.frombuffer(b"".join(vectors), dtype="<f2").reshape(len(vectors), -1).astype(np.float32)
    return (np.asarray(pages, np.int64), np.asarray(exhibits, np.int64), np.asarray(spans, np.int32).reshape(-1, 2),
            matrix)


def matter_matrix(matter_id: int, model: str) -> _Matrix:
    """The matter's chunk vectors under ``model``, read or brought up to date."""
    stamp = _stamp(matter_id, model)
    key = (matter_id, model)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None and cached.stamp == stamp:
            return cached
        if cached is not None and stamp[1] > cached.stamp[1] and stamp[0] - cached.stamp[0] == \
                ChunkEmbedding.objects.filter(matter_id=matter_id, model=model, id__gt=cached.stamp[1]).count():
            # Only rows added since: append them.
            more = _arrays(*_read(matter_id, model, cached.stamp[1]), cached.vectors.shape[1])
            if more[3].shape[1:] == cached.vectors.shape[1:] or not len(cached.vectors):
                matrix = _Matrix(stamp, np.concatenate([cached.page_ids, more[0]]),
                                 np.concatenate([cached.exhibit_ids, more[1]]),
                                 np.concatenate([cached.spans, more[2]]),
                                 np.concatenate([cached.vectors, more[3]]) if len(cached.vectors) else more[3])
                _CACHE[key] = matrix
                return matrix
        matrix = _Matrix(stamp, *_arrays(*_read(matter_id, model), None))
        _CACHE[key] = matrix
        return matrix


@dataclass(frozen=True)
class SemanticHit:
    """A page's best chunk: ``similarity`` (cosine, -1 to 1) and the chunk's ``start``/``end`` in the page text."""

    page_id: int
    exhibit_id: int
    similarity: float
    start: int
    end: int


def semantic_pages(*, matter_id: int, model: str, query_vector: np.ndarray, exhibit_ids: set[int] | None = None,
                   limit: int = 200) -> list[SemanticHit]:
    """The ``limit`` pages most similar to ``query_vector`` (unit length), each scored by its best chunk, best
    first; only pages of ``exhibit_ids`` when given."""
    matrix = matter_matrix(matter_id, model)
    if not len(matrix.vectors) or matrix.vectors.shape[1] != query_vector.shape[0]:
        return []
    scores = matrix.vectors @ query_vector.astype(np.float32)
    if exhibit_ids is not None:
        scores = np.where(np.isin(matrix.exhibit_ids, np.fromiter(exhibit_ids, np.int64)), scores, -np.inf)
    # The best chunks first: a partial sort of a few times ``limit`` chunks is enough unless pages repeat in it.
    depth = min(len(scores), limit * 8)
    for _ in range(2):
        head = np.argpartition(-scores, depth - 1)[:depth] if depth < len(scores) else np.arange(len(scores))
        order = head[np.argsort(-scores[head], kind="stable")]
        order = order[np.isfinite(scores[order])]
        _, first = np.unique(matrix.page_ids[order], return_index=True)
        if len(first) >= limit or depth == len(scores):
            break
        depth = len(scores)
    best = order[np.sort(first)][:limit]
    return [SemanticHit(int(matrix.page_ids[i]), int(matrix.exhibit_ids[i]), float(scores[i]),
                        int(matrix.spans[i][0]), int(matrix.spans[i][1])) for i in best]


def forget(matter_id: int | None = None) -> None:
    """Drop the cached vectors (of one matter, or all): tests, and a purge."""
    with _LOCK:
        for key in [k for k in _CACHE if matter_id is None or k[0] == matter_id]:
            del _CACHE[key]
