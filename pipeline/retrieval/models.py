"""What retrieval keeps in the database: one embedding per chunk of a page, and one index record per matter.

A chunk is a span of a page's text (``start``/``end``: character offsets into ``Page.text``), so a semantic hit
names its page and where on it. Vectors are the embedder's, unit-normalised, stored as little-endian float16
(``dims`` × 2 bytes): cosine similarity is then a dot product, and half the bytes of float32 cost nothing
measurable in ranking (docs/retrieval.md). A page with no text gets one row with an empty vector, so the sweep
knows it was seen. Rows are keyed by the embedder's model name: a new model embeds the matter again, and rows of
another model are never compared with its vectors.

Only evidence and authority pages are embedded, never LawDesk's own output (:func:`pipeline.retrieval.embedding
.pages_to_embed`). Deleting a page (re-processing, purge) deletes its rows.
"""

from django.db import models


class ChunkEmbedding(models.Model):
    matter = models.ForeignKey("matters.Matter", on_delete=models.CASCADE, related_name="+")
    page = models.ForeignKey("matters.Page", on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    chunk = models.PositiveSmallIntegerField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    # The length of the page's text when it was chunked: a page whose text changed in place is embedded again.
    page_chars = models.PositiveIntegerField()
    text_sha256 = models.CharField(max_length=64)
    dims = models.PositiveSmallIntegerField(default=0)
    vector = models.BinaryField(default=b"")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["page", "model", "chunk"], name="chunk_embedding_once")]
        indexes = [models.Index(fields=["matter", "model", "id"], name="chunk_embedding_matter"),
                   models.Index(fields=["matter", "model", "text_sha256"], name="chunk_embedding_text")]

    def __str__(self) -> str:
        return f"page {self.page_id} chunk {self.chunk} ({self.model})"


class EmbeddingIndex(models.Model):
    """The embedding sweep's claim on one matter (:mod:`matters.leases`): the worker embedding its pages holds the
    lease, so a second worker leaves the matter alone and a dead worker's matter is taken up again once its lease
    has expired. ``error`` is the last failure (the embedder down, say), shown on the job page."""

    matter = models.OneToOneField("matters.Matter", on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200, blank=True)
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"embedding index of matter {self.matter_id}"
