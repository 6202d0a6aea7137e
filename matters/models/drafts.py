"""Drafts, their versions, and the verifier's findings on each version; the verifier's index of page facts.

A draft is generated material (origin ``draft``), never evidence: every version is also recorded as a
``GeneratedDocument`` so the same text coming back as an upload is recognised. Statuses and kinds are the ones
in docs/glossary.md.
"""

from django.conf import settings
from django.db import models


class Draft(models.Model):
    """A document being prepared in a matter (a motion, a summary ...), as a series of versions."""

    matter = models.ForeignKey("matters.Matter", on_delete=models.PROTECT, related_name="drafts")
    title = models.CharField(max_length=300)
    kind = models.CharField(max_length=20, blank=True, help_text="the job kind that made it, or blank")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title

    @property
    def latest_version(self) -> "DraftVersion | None":
        return self.versions.order_by("-number").first()


class DraftVersion(models.Model):
    """One immutable text of a draft. ``author_kind`` says whether a model (``model_name`` on ``server_name``)
    or a person (``author``) wrote it; ``provenance`` holds the job and stage records of a model's version.
    ``sha256`` is over the UTF-8 text. Approval is recorded here and in the
    audit log; an approved version is never changed (an edit makes a new version)."""

    class AuthorKind(models.TextChoices):
        MODEL = "model", "Model"
        PERSON = "person", "Person"

    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    text = models.TextField()
    sha256 = models.CharField(max_length=64)
    author_kind = models.CharField(max_length=10, choices=AuthorKind.choices)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    model_name = models.CharField(max_length=200, blank=True)
    server_name = models.CharField(max_length=100, blank=True)
    generated = models.ForeignKey("matters.GeneratedDocument", null=True, on_delete=models.PROTECT, related_name="+")
    provenance = models.JSONField(
        default=dict, blank=True,
        help_text="how a model wrote it: job, stages (server, model, board, packet SHA-256); set by the pipeline",
    )
    word = models.JSONField(
        default=dict, blank=True,
        help_text="a version made from a Word file: its SHA-256, name and size, the version it was exported from, "
                  "what became of each paragraph, its tracked changes, and its comments beside their paragraphs",
    )
    verified_at = models.DateTimeField(null=True, blank=True)
    verified_under = models.JSONField(
        default=dict, blank=True,
        help_text="how the matter read the version when it was last verified: its court, the order of numeric "
                  "dates and the number format (a change of any makes the version stale)",
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["draft", "number"]
        constraints = [models.UniqueConstraint(fields=["draft", "number"], name="draft_version_number_unique")]

    def __str__(self) -> str:
        return f"{self.draft} v{self.number}"

    def open_blocking(self) -> models.QuerySet["Finding"]:
        return self.findings.filter(status__in=Finding.BLOCKING_STATUSES)


class Finding(models.Model):
    """One claim of a draft version as the verifier judged it.

    ``start``/``end`` are character offsets into the version's text; ``sources`` is a list of
    ``{"exhibit": id, "label": str, "page": n, "bates": str}`` the verifier used; ``detail`` holds what the
    explanation needs (readings of a date, OCR tolerance, nearest values). ``verdict`` is the status the verifier
    gave; ``status`` becomes ``waived`` or ``confirmed`` when an attorney resolves it (``resolved_*``).
    ``key`` identifies the same claim in a later version, so a resolution carries over an edit that did not
    touch it.
    """

    class Kind(models.TextChoices):
        CASE_CITATION = "case_citation", "Case citation"
        STATUTE_CITATION = "statute_citation", "Statute or regulation"
        BATES_CITE = "bates_cite", "Bates cite"
        EXHIBIT_CITE = "exhibit_cite", "Exhibit cite"
        DATE = "date", "Date"
        AMOUNT = "amount", "Amount"
        QUOTATION = "quotation", "Quotation"
        DEADLINE = "deadline", "Deadline"

    class Status(models.TextChoices):
        GROUNDED = "grounded", "Grounded"
        UNGROUNDED = "ungrounded", "Ungrounded"
        UNVERIFIED_AUTHORITY = "unverified_authority", "Unverified authority"
        NEEDS_RECORD_CITE = "needs_record_cite", "Needs a record cite"
        UNREADABLE = "unreadable", "Unreadable"
        AMBIGUOUS = "ambiguous", "Ambiguous"
        NOT_COMPUTED = "not_computed", "Not computed"
        # A cited authority the matter holds, whose pin cite its exhibit gives no way to check (a slip opinion, a
        # court-site print, an excerpt): not blocking, and not counted as checked.
        PIN_UNCHECKED = "pin_unchecked", "Cannot check the pin"
        WAIVED = "waived", "Waived"
        CONFIRMED = "confirmed", "Confirmed"

    BLOCKING_STATUSES = (Status.UNGROUNDED, Status.UNVERIFIED_AUTHORITY, Status.UNREADABLE)

    version = models.ForeignKey(DraftVersion, on_delete=models.CASCADE, related_name="findings")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    status = models.CharField(max_length=25, choices=Status.choices)
    verdict = models.CharField(max_length=25, choices=Status.choices)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()
    message = models.TextField()
    sources = models.JSONField(default=list, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    key = models.CharField(max_length=64, db_index=True)
    resolution_reason = models.TextField(blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    carried_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["version", "start", "end", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.status}: {self.text[:40]}"

    @property
    def blocking(self) -> bool:
        return self.status in self.BLOCKING_STATUSES


class PageFact(models.Model):
    """A date or amount found on an evidence page, normalised, so the verifier looks a claim up by value instead
    of scanning every page. ``kind``: ``date`` (ISO date, one reading), ``date_mdy`` / ``date_dmy`` (a numeric
    date whose day and month could swap: the reading under each order), ``amount`` (``USD:1250.00``) or
    ``number`` (``1250.00``: a figure written without a currency, as in a ledger)."""

    page = models.ForeignKey("matters.Page", on_delete=models.CASCADE, related_name="facts")
    kind = models.CharField(max_length=10)
    value = models.CharField(max_length=40)

    class Meta:
        indexes = [models.Index(fields=["kind", "value"], name="pagefact_kind_value")]


class ReviewAttack(models.Model):
    """An attack on a draft version as opposing counsel would make it (the reviewer stage's output), anchored
    to the span of the version's text it quotes: ``start``/``end`` are offsets into the version's text, None when
    the quote is not found there (shown as outdated). ``severity`` is ``low``, ``medium`` or ``high``. Generated
    material, never evidence."""

    class Severity(models.TextChoices):
        LOW = "low", "Low"
        MEDIUM = "medium", "Medium"
        HIGH = "high", "High"

    version = models.ForeignKey(DraftVersion, on_delete=models.CASCADE, related_name="attacks")
    quote = models.TextField()
    attack = models.TextField()
    severity = models.CharField(max_length=10, choices=Severity.choices)
    suggested_fix = models.TextField(blank=True)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    carried_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["version", "start", "id"]

    def __str__(self) -> str:
        return f"{self.severity}: {self.attack[:40]}"

    @property
    def outdated(self) -> bool:
        return self.start is None
