"""Embedding a matter's pages: the sweep that fills :class:`~pipeline.retrieval.models.ChunkEmbedding`.

It runs on the ``documents`` queue (:func:`pipeline.tasks.embed_matter`, below ingest and previews in priority), so
pages are embedded after their text and OCR, on the documents workers, never in a request. A worker claims the
matter's :class:`~pipeline.retrieval.models.EmbeddingIndex` with a lease (:mod:`matters.leases`), embeds pages in
batches, and commits each batch: a worker killed mid-matter loses one batch at most, and whoever next claims the
matter (after the lease expires) goes on from the pages still missing. A page is (re)embedded when it has no row
for the embedder's model, or when the length of its text is not the one it was chunked at (text changed in place).

What is embedded: pages of the matter's ready evidence exhibits and authorities, never LawDesk's own output
(generated origins, or an upload recognised as generated and not overridden). A chunk whose text was already
embedded in the same matter (boilerplate, a page produced twice) reuses that vector instead of asking the server.

Who queues it: a periodic sweep (:func:`embedding_sweep_schedule`, every ``LAWDESK_EMBED_SWEEP_S``, started by
``make run``) for every open matter with pages to embed, so a page is embedded within that time of becoming ready.
"""

import hashlib
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Length
from django.utils import timezone

from matters.leases import LeaseKeeper, lease_expiry, tasks_waiting, worker_id
from matters.models import EVIDENCE_ORIGINS, Exhibit, Matter, Origin, Page

from ..llm import HostNotAllowed, ModelServerError, ServerLoading, ServerUnavailable
from ..llm.client import ModelClient
from ..models import ModelServer, Role, RoleAssignment
from .chunks import page_spans
from .models import ChunkEmbedding, EmbeddingIndex

logger = logging.getLogger(__name__)

LEASE_S = 120
BATCH_PAGES = 16
# Inputs per embeddings request: llama-server computes a batch in one pass (its -ub bounds the tokens).
REQUEST_INPUTS = 32


def retrievable_exhibits(matter: Matter, *, authorities: bool | None = None):
    """The matter's ready exhibits retrieval may read: evidence origins and authorities (``authorities`` True:
    authorities only; False: evidence only), never LawDesk's own output coming back."""
    origins = {True: [Origin.AUTHORITY], False: list(EVIDENCE_ORIGINS), None: [*EVIDENCE_ORIGINS, Origin.AUTHORITY]}
    return matter.exhibits.filter(status=Exhibit.Status.READY, origin__in=origins[authorities]).exclude(
        ~Q(generated_reason="") & Q(generated_override_reason=""))


def embedder_server() -> ModelServer | None:
    """The enabled server holding the embedder role, or None."""
    assignment = RoleAssignment.objects.select_related("server").filter(role=Role.EMBEDDER).first()
    if assignment is None or not assignment.server.enabled:
        return None
    return assignment.server


def embedder_model(server: ModelServer) -> str:
    """The name embeddings are filed under: the server's model name, else its address (one model per server)."""
    return server.model_name or server.base_url


def pages_to_embed(matter: Matter, model: str):
    """Pages of ``matter`` retrieval may read that have no current embedding under ``model``, in id order."""
    current = ChunkEmbedding.objects.filter(page=OuterRef("pk"), model=model, chunk=0,
                                            page_chars=Length(OuterRef("text")))
    return (Page.objects.filter(exhibit__in=retrievable_exhibits(matter))
            .annotate(embedded=Exists(current)).filter(embedded=False).order_by("id"))


@dataclass(frozen=True)
class EmbeddingProgress:
    """How far a matter's embedding has got: ``embedded`` of ``total`` pages under ``model`` ('' when no server
    holds the embedder role); ``error`` the sweep's last failure."""

    model: str
    embedded: int
    total: int
    error: str = ""

    @property
    def complete(self) -> bool:
        return bool(self.model) and self.embedded >= self.total


def embedding_progress(matter: Matter, server: ModelServer | None = None) -> EmbeddingProgress:
    server = server or embedder_server()
    total = Page.objects.filter(exhibit__in=retrievable_exhibits(matter)).count()
    if server is None:
        return EmbeddingProgress("", 0, total)
    model = embedder_model(server)
    missing = pages_to_embed(matter, model).count()
    index = EmbeddingIndex.objects.filter(matter=matter).first()
    return EmbeddingProgress(model, total - missing, total, index.error if index else "")


def unit_vectors(vectors: list[list[float]]) -> np.ndarray:
    """``vectors`` as rows of unit length (float32); a zero vector stays zero."""
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1, norms)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _embed_text(text: str) -> str:
    return " ".join(text.split())


def _claim(matter: Matter, owner: str, model: str) -> bool:
    EmbeddingIndex.objects.get_or_create(matter=matter)
    now = timezone.now()
    return bool(EmbeddingIndex.objects.filter(matter=matter).filter(
        Q(lease_owner="") | Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    ).update(lease_owner=owner, lease_expires_at=lease_expiry(LEASE_S), model=model))


def _release(matter: Matter, owner: str, error: str) -> None:
    EmbeddingIndex.objects.filter(matter=matter, lease_owner=owner).update(lease_owner="", lease_expires_at=None,
                                                                          error=error[:2000])


def _embed(client: ModelClient, texts: list[str]) -> list[list[float]]:
    """Vectors of ``texts``. llama-server refuses a whole request when one input is longer than a slot's context
    (HTTP 400; 900 characters of digits or OCR noise can pass 512 word pieces): then each text is sent alone, and
    one still refused is embedded from its first half, then quarter, then eighth (the chunk's start stands for
    it). A server that is down or loading is not retried here: the sweep stops and says so."""
    try:
        return client.embed(texts).vectors
    except (ServerUnavailable, ServerLoading):
        raise
    except ModelServerError:
        if len(texts) == 1 and len(texts[0]) < 100:
            raise
    vectors = []
    for text in texts:
        for cut in (len(text), len(text) // 2, len(text) // 4, len(text) // 8):
            try:
                vectors.append(client.embed([text[:cut]]).vectors[0])
                break
            except (ServerUnavailable, ServerLoading):
                raise
            except ModelServerError:
                if cut == len(text) // 8:
                    raise
    return vectors


@dataclass
class _Batch:
    """One commit's pages: ``planned`` rows as (page, chunk number, start, end, text), ``known`` vectors by text
    hash, and ``vectors``, the future of the texts sent to the embedder (hash -> vector bytes)."""

    pages: list[Page]
    planned: list[tuple]
    known: dict[str, bytes]
    vectors: Future


# Vectors this sweep embedded, kept for the next batches' repeated chunks (a production's boilerplate, pages
# produced twice) so they are neither sent again nor read back: at most this many (768 bytes each).
_SEEN_MAX = 20_000


class _Sweep:
    """The batches of one sweep over a matter, the embedder's requests one batch ahead of the database: while
    batch n's rows are written, the server is already embedding batch n + 1 (a worker thread holds the one
    request in flight; the database stays on the calling thread). A text is sent once per sweep, and never when
    the matter already holds its vector."""

    def __init__(self, matter: Matter, model: str, client: ModelClient):
        self.matter, self.model, self.client = matter, model, client
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self.seen: dict[str, bytes] = {}
        self.in_flight: set[str] = set()

    def plan(self, pages: list[Page]) -> _Batch:
        planned = []
        for page in pages:
            spans = page_spans(page.text)
            if not spans:
                planned.append((page, 0, 0, 0, ""))
            for number, span in enumerate(spans):
                planned.append((page, number, span.start, span.end, _embed_text(page.text[span.start:span.end])))
        hashes = {_sha(text) for *_, text in planned if text}
        repeated = {sha: self.seen[sha] for sha in hashes if sha in self.seen}
        hashes -= repeated.keys() | self.in_flight
        stored = ChunkEmbedding.objects.filter(matter=self.matter, model=self.model, text_sha256__in=hashes, dims__gt=0)
        known = repeated | dict(stored.values_list("text_sha256", "vector"))
        wanted = sorted({text for *_, text in planned if text and _sha(text) in hashes and _sha(text) not in known})
        self.in_flight.update(_sha(text) for text in wanted)
        return _Batch(pages, planned, known, self.pool.submit(self._vectors, wanted))

    def _vectors(self, wanted: list[str]) -> dict[str, bytes]:
        out = {}
        for first in range(0, len(wanted), REQUEST_INPUTS):
            texts = wanted[first:first + REQUEST_INPUTS]
            vectors = unit_vectors(_embed(self.client, texts)).astype("<f2")
            out.update({_sha(text): vector.tobytes() for text, vector in zip(texts, vectors, strict=True)})
        return out

    def rows(self, batch: _Batch) -> list[ChunkEmbedding]:
        """The rows of ``batch``, once its vectors are in (raises what the embedder raised)."""
        fresh = batch.vectors.result()
        rows = []
        for page, number, start, end, text in batch.planned:
            vector = b""
            if text:
                sha = _sha(text)
                vector = fresh.get(sha) or batch.known.get(sha) or self.seen.get(sha) or b""
            rows.append(ChunkEmbedding(matter=self.matter, page=page, model=self.model, chunk=number, start=start,
                                       end=end, page_chars=len(page.text), text_sha256=_sha(text) if text else "",
                                       dims=len(vector) // 2, vector=vector))
        # Only now: a text this batch took from the batch before it is read from ``seen`` above.
        self.in_flight.difference_update(fresh)
        if len(self.seen) + len(fresh) > _SEEN_MAX:
            self.seen.clear()
        self.seen.update(fresh)
        return rows

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _next_pages(matter: Matter, model: str, ids: list[int]) -> list[Page]:
    """Pages of ``ids`` (in id order) that still lack a current embedding."""
    return list(pages_to_embed(matter, model).filter(pk__in=ids).only("id", "text"))


def matter_embed(*, matter_id: int, owner: str | None = None, max_pages: int | None = None,
                 batch_pages: int = BATCH_PAGES) -> int:
    """Embed the pages of matter ``matter_id`` that lack a current embedding, batch by batch, under the matter's
    lease; return how many pages were embedded (0 when another worker holds the matter, no server holds the
    embedder role, or nothing is left); ``batch_pages`` pages are committed at a time.
    The pages to embed are listed once per pass (not once per batch, which read every page of a large matter for
    each batch) and listed again at the end, for pages that became ready meanwhile. The server embeds the next
    batch while this one is written (:class:`_Sweep`).
    A failure of the embedder is recorded on the index (shown on job pages)
    and ends the sweep; the next sweep starts again from the pages still missing. ``max_pages`` bounds the work."""
    matter = Matter.objects.get(pk=matter_id)
    server = embedder_server()
    if server is None:
        return 0
    model = embedder_model(server)
    owner = owner or worker_id()
    if not _claim(matter, owner, model):
        return 0
    done, error = 0, ""
    keeper = LeaseKeeper(model=EmbeddingIndex, pk=EmbeddingIndex.objects.get(matter=matter).pk, owner=owner,
                         lease_s=LEASE_S)
    keeper.start()
    client = ModelClient(server.client_config(), read_timeout_s=120, loading_wait_s=30)
    sweep = _Sweep(matter, model, client)
    try:
        while not keeper.lost and (max_pages is None or done < max_pages):
            missing = pages_to_embed(matter, model).values_list("id", flat=True)
            ids = list(missing if max_pages is None else missing[:max_pages - done])
            if not ids:
                # Every page has its vectors under this model: rows of an earlier model are no use any more.
                ChunkEmbedding.objects.filter(matter=matter).exclude(model=model).delete()
                break
            ahead = None
            for first in range(0, len(ids) + batch_pages, batch_pages):
                pages = _next_pages(matter, model, ids[first:first + batch_pages]) if first < len(ids) else []
                batch = sweep.plan(pages) if pages else None
                if ahead is not None:
                    rows = sweep.rows(ahead)
                    with transaction.atomic():
                        if keeper.lost:
                            break
                        ChunkEmbedding.objects.filter(page__in=ahead.pages, model=model).delete()
                        ChunkEmbedding.objects.bulk_create(rows)
                    done += len(ahead.pages)
                ahead = batch
    except (ModelServerError, HostNotAllowed) as failure:
        error = f"The embedder {server.name} failed: {failure}"
        logger.warning("embedding matter %s stopped: %s", matter_id, error)
    finally:
        sweep.close()
        keeper.stopping.set()
        keeper.join(timeout=5)
        client.close()
        _release(matter, owner, error)
    return done


def embedding_queue(matter: Matter) -> bool:
    """Queue the embedding sweep of ``matter`` unless one is already waiting; True when one was queued."""
    from pipeline.tasks import embed_matter

    waiting = tasks_waiting(embed_matter).values_list("args_kwargs", flat=True)
    if any((entry or {}).get("kwargs", {}).get("matter_id") == matter.pk for entry in waiting):
        return False
    embed_matter.enqueue(matter_id=matter.pk)
    return True


def embedding_schedule() -> int:
    """Queue the sweep of every open matter with pages to embed whose index no live worker holds; return how many
    were queued. Nothing when no server holds the embedder role."""
    server = embedder_server()
    if server is None:
        return 0
    model, queued, now = embedder_model(server), 0, timezone.now()
    for matter in Matter.objects.filter(status=Matter.Status.OPEN, purged_at__isnull=True):
        held = EmbeddingIndex.objects.filter(matter=matter, lease_expires_at__gt=now).exclude(lease_owner="")
        if held.exists() or not pages_to_embed(matter, model).exists():
            continue
        queued += embedding_queue(matter)
    return queued


def embedding_sweep_schedule(*, interval_s: int | None = None) -> bool:
    """Queue the periodic embedding sweep ``interval_s`` seconds from now (default ``LAWDESK_EMBED_SWEEP_S``)
    unless one is already waiting; it queues its own next run, so one call starts the cycle."""
    from django.conf import settings

    from matters.leases import enqueue_unless_waiting
    from pipeline.tasks import sweep_embeddings

    if interval_s is None:
        interval_s = settings.LAWDESK_EMBED_SWEEP_S
    return enqueue_unless_waiting(sweep_embeddings, after_s=interval_s, interval_s=interval_s)
