"""Ranking a matter's pages for one query: BM25 over content words (OR), the embedder's similarity, fused by
reciprocal rank fusion, and reordered by a reranker where the topology has one.

Each method may be missing: no terms (a query of function words), no server holding the embedder role, an
embedder that is down, pages not embedded yet. The ranking then rests on what is left and says why in
``warnings``, never silently.
"""

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from matters.exhibits.lexical import bm25_pages
from matters.models import Matter, Page

from ..llm import HostNotAllowed, ModelServerError
from ..llm.client import ModelClient
from ..models import ModelServer, Role, RoleAssignment
from .embedding import EmbeddingProgress, embedder_model, embedder_server, embedding_progress, unit_vectors
from .fusion import rrf
from .queries import query_terms
from .semantic import semantic_pages

logger = logging.getLogger(__name__)

LEXICAL_DEPTH = 200
SEMANTIC_DEPTH = 200
RERANK_DEPTH = 30
METHODS = ("lexical", "semantic")
# Each method's weight in the fusion (pipeline.retrieval.fusion.rrf). BM25 loses more than the embeddings as a
# matter grows (bench/retrieval.py: recall at 8 pages 0.875 to 0.718 from 114 to 50,000 pages, the embeddings
# 0.917 to 0.897), so its ranks count for less: at 50,000 pages the fusion's recall at 8 pages was 0.955 with
# the lexical weight at 0.7 (or 0.5) against 0.907 with equal weights, and 0.939 against 0.949 on the corpus alone.
WEIGHTS = {"lexical": 0.7, "semantic": 1.0}


@dataclass
class Candidate:
    """One page's place in a ranking: ``lexical_rank`` (1 = best; None when no term matched it) and BM25
    ``lexical_score``; ``similarity`` (cosine of its best chunk) with ``semantic_rank`` and that chunk's
    ``chunk`` = (start, end) in the page text; ``fused`` score; ``rerank_score`` where a reranker ran."""

    page_id: int
    exhibit_id: int
    lexical_rank: int | None = None
    lexical_score: float | None = None
    semantic_rank: int | None = None
    similarity: float | None = None
    chunk: tuple[int, int] | None = None
    fused: float = 0.0
    rerank_score: float | None = None

    def as_json(self) -> dict:
        return {"page_id": self.page_id, "lexical_rank": self.lexical_rank,
                "lexical_score": None if self.lexical_score is None else round(self.lexical_score, 3),
                "semantic_rank": self.semantic_rank,
                "similarity": None if self.similarity is None else round(self.similarity, 3),
                "rerank_score": None if self.rerank_score is None else round(self.rerank_score, 3)}


@dataclass
class Ranking:
    """``candidates`` best first; ``terms`` the lexical terms read from ``query``; ``methods`` those that ran."""

    query: str
    terms: list[list[str]]
    candidates: list[Candidate]
    methods: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _reranker() -> ModelServer | None:
    assignment = RoleAssignment.objects.select_related("server").filter(role=Role.RERANKER).first()
    return assignment.server if assignment is not None and assignment.server.enabled else None


class Retriever:
    """Ranks pages of one matter. Holds one embedder client for all its queries; ``close()`` ends it.
    ``methods``: the rankings to fuse (both by default; the bench asks for each alone). ``rerank``: use the
    topology's reranker when there is one."""

    def __init__(self, matter: Matter, *, methods: tuple[str, ...] = METHODS, rerank: bool = True):
        self.matter, self.methods = matter, methods
        self.warnings: list[str] = []
        self.embedder = embedder_server() if "semantic" in methods else None
        self.model = embedder_model(self.embedder) if self.embedder else ""
        self.progress: EmbeddingProgress | None = None
        self._client: ModelClient | None = None
        self._reranker = _reranker() if rerank else None
        self._rerank_client: ModelClient | None = None
        self._pool: ThreadPoolExecutor | None = None
        if "semantic" in methods:
            self.progress = embedding_progress(matter, self.embedder)
            if self.embedder is None:
                self.warnings.append("No server holds the embedder role: pages were ranked by their words alone.")
            elif not self.progress.complete:
                self.warnings.append(
                    f"{self.progress.embedded:,} of {self.progress.total:,} pages are embedded so far: the others "
                    "were ranked by their words alone." + (f" {self.progress.error}" if self.progress.error else ""))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        for client in (self._client, self._rerank_client):
            if client is not None:
                client.close()

    def _embedder_failed(self, failure: Exception) -> None:
        message = f"The embedder {self.embedder.name} did not answer ({failure}): pages were ranked by their " \
                  "words alone."
        if message not in self.warnings:
            self.warnings.append(message)
        logger.warning("embedding a query failed: %s", failure)
        self.embedder = None

    def _query_vector(self, query: str) -> Future | None:
        """The query's embedding, asked for now and computed in a worker thread (None without an embedder). The
        client is made here, on the calling thread: its settings come from the database, which the worker
        thread does not touch."""
        if self.embedder is None:
            return None
        try:
            if self._client is None:
                self._client = ModelClient(self.embedder.client_config(), read_timeout_s=30, loading_wait_s=5)
        except (ModelServerError, HostNotAllowed) as failure:
            self._embedder_failed(failure)
            return None
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")
        client = self._client
        return self._pool.submit(lambda: unit_vectors(client.embed([query]).vectors)[0])

    def _vector(self, pending: Future | None) -> np.ndarray | None:
        if pending is None:
            return None
        try:
            return pending.result()
        except (ModelServerError, HostNotAllowed) as failure:
            self._embedder_failed(failure)
            return None

    def rank(self, query: str, *, exhibit_ids: set[int], limit: int = 100) -> Ranking:
        """Rank the pages of ``exhibit_ids`` for ``query``; at most ``limit`` candidates, best first."""
        terms = query_terms(query)
        candidates: dict[int, Candidate] = {}
        rankings: dict[str, list[int]] = {}
        methods, warnings = [], []
        # The query's embedding is the embedder's work in another process: asked for first, it is computed while
        # BM25 runs here (at 50,000 pages each takes about as long as the other).
        pending = self._query_vector(query) if "semantic" in self.methods and exhibit_ids else None
        if "lexical" in self.methods and terms and exhibit_ids:
            hits = bm25_pages(matter=self.matter, terms=terms, exhibit_ids=sorted(exhibit_ids), limit=LEXICAL_DEPTH)
            exhibits = dict(Page.objects.filter(pk__in=[p for p, _ in hits]).values_list("pk", "exhibit_id"))
            for rank, (page_id, score) in enumerate(hits, start=1):
                candidates[page_id] = Candidate(page_id, exhibits[page_id], lexical_rank=rank, lexical_score=score)
            rankings["lexical"] = [page_id for page_id, _ in hits]
            methods.append("lexical")
        elif "lexical" in self.methods and not terms:
            warnings.append(f"“{query[:80]}” has no words to search for (only common words or operators).")
        vector = self._vector(pending)
        if vector is not None:
            hits = semantic_pages(matter_id=self.matter.pk, model=self.model, query_vector=vector,
                                  exhibit_ids=exhibit_ids, limit=SEMANTIC_DEPTH)
            for rank, hit in enumerate(hits, start=1):
                candidate = candidates.setdefault(hit.page_id, Candidate(hit.page_id, hit.exhibit_id))
                candidate.semantic_rank, candidate.similarity = rank, hit.similarity
                candidate.chunk = (hit.start, hit.end)
            rankings["semantic"] = [hit.page_id for hit in hits]
            methods.append("semantic")
        ordered = []
        for page_id, score in rrf(rankings, weights=WEIGHTS):
            candidates[page_id].fused = score
            ordered.append(candidates[page_id])
        if self._reranker is not None and ordered:
            ordered = self._rerank(query, ordered, warnings)
            if any(c.rerank_score is not None for c in ordered):
                methods.append("rerank")
        return Ranking(query, terms, ordered[:limit], methods, warnings)

    def _rerank(self, query: str, ordered: list[Candidate], warnings: list[str]) -> list[Candidate]:
        head = ordered[:RERANK_DEPTH]
        texts = dict(Page.objects.filter(pk__in=[c.page_id for c in head]).values_list("pk", "text"))
        try:
            if self._rerank_client is None:
                self._rerank_client = ModelClient(self._reranker.client_config(), read_timeout_s=60,
                                                  loading_wait_s=5)
            scores = self._rerank_client.rerank(query, [texts.get(c.page_id, "")[:2000] for c in head])
        except (ModelServerError, HostNotAllowed) as failure:
            warnings.append(f"The reranker {self._reranker.name} did not answer ({failure}); the fused ranking "
                            "was kept.")
            self._reranker = None
            return ordered
        for candidate, score in zip(head, scores, strict=True):
            candidate.rerank_score = score
        return sorted(head, key=lambda c: -c.rerank_score) + ordered[RERANK_DEPTH:]
