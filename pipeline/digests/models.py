"""The digest of an exhibit's content, one row per cache key: the exhibit's SHA-256, the prompt template and the
model. Written by the summarizer role (:mod:`pipeline.digests.services`), shown as model output, never evidence."""

from django.db import models


class ExhibitDigest(models.Model):
    """The summarizer's digest of one document's content.

    The cache key is ``(sha256, prompt_template, model)``: the same content (in any matter) digested with the same
    prompt by the same model is never digested twice. ``exhibit`` is the exhibit it was first made from (the pages
    its cites were checked against); any exhibit with that SHA-256 shows it.

    ``digest`` (when ``done``): the validated answer, ``{"document_type", "date", "author", "parties": [str],
    "summary", "key_facts": [{"fact", "pages": [int]}]}`` (:data:`pipeline.digests.schema.DIGEST_SCHEMA`).
    ``facts``: each key fact with its cite check, ``{"fact", "pages", "status", "missing": [str]}``, ``status``
    one of :data:`pipeline.digests.cites.STATUSES`. ``reason``: why a digest ``failed``, or for a ``done`` one what
    to check (facts not on their cited pages, pages not read). ``pages_read``: how many of the exhibit's first
    pages fitted the summarizer's context (``page_count`` in all). ``attempts``: requests tried, server waits
    included. Durations in ms.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    sha256 = models.CharField(max_length=64)
    prompt_template = models.CharField(max_length=100)
    model = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    reason = models.TextField(blank=True)
    exhibit = models.ForeignKey("matters.Exhibit", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    server_name = models.CharField(max_length=100, blank=True)
    digest = models.JSONField(null=True, blank=True)
    facts = models.JSONField(default=list, blank=True)
    output = models.TextField(blank=True)
    pages_read = models.PositiveIntegerField(default=0)
    page_count = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-finished_at", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["sha256", "prompt_template", "model"],
                                               name="digest_cache_key_unique")]

    def __str__(self) -> str:
        return f"digest {self.sha256[:12]} {self.prompt_template} {self.model} {self.status}"

    def as_json(self, exhibit) -> dict:
        """The digest_exhibits line for ``exhibit`` (docs/glossary.md)."""
        return {"exhibit": exhibit.pk, "label": exhibit.label, "sha256": self.sha256, "status": self.status,
                "reason": self.reason, "model": self.model, "prompt_template": self.prompt_template,
                "pages_read": self.pages_read, "facts": len(self.facts), "flagged_facts": len(self.flagged_facts),
                "duration_ms": self.duration_ms}

    @property
    def flagged_facts(self) -> list[dict]:
        """The key facts whose cite check is anything but ``on_page``."""
        return [fact for fact in self.facts if fact.get("status") != "on_page"]
