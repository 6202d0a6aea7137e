"""Outgoing productions: the stamped volume, the documents in it, and the Bates number of every page."""

from django.conf import settings
from django.db import models

from .case import Exhibit, Matter, Page


class Production(models.Model):
    """A set of exhibits stamped with Bates numbers, combined, indexed, and packed as a production volume.

    Its numbers ``first_number``..``last_number`` are reserved for ``prefix`` in the matter when it starts
    stamping and are never used again, even if it fails (its range is then void). Bates numbers read
    ``prefix`` + the number zero-padded to ``digits`` + ``suffix``. A finished production is never changed.
    Productions are generated material (origin ``production``), stored apart from uploads, never evidence.
    """

    class Status(models.TextChoices):
        STAMPING = "stamping", "Stamping"
        DONE = "done", "Done"
        FAILED = "failed", "Failed (its Bates range is void)"

    class Position(models.TextChoices):
        BOTTOM_RIGHT = "bottom-right", "Bottom right"
        BOTTOM_CENTER = "bottom-center", "Bottom center"
        BOTTOM_LEFT = "bottom-left", "Bottom left"
        TOP_RIGHT = "top-right", "Top right"
        TOP_CENTER = "top-center", "Top center"
        TOP_LEFT = "top-left", "Top left"

    class CoverSheets(models.TextChoices):
        NONE = "none", "No cover sheets"
        UNNUMBERED = "unnumbered", "Cover sheets without Bates numbers"
        NUMBERED = "numbered", "Cover sheets with Bates numbers"

    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, related_name="productions")
    prefix = models.CharField(max_length=30)
    digits = models.PositiveSmallIntegerField(default=6)
    suffix = models.CharField(max_length=30, blank=True)
    first_number = models.PositiveBigIntegerField()
    last_number = models.PositiveBigIntegerField()
    position = models.CharField(max_length=20, choices=Position.choices, default=Position.BOTTOM_RIGHT)
    cover_sheets = models.CharField(max_length=20, choices=CoverSheets.choices, default=CoverSheets.NONE)
    with_index = models.BooleanField(default=True)
    with_images = models.BooleanField(default=False)
    # Form fields stay fillable in the produced PDFs (under one parent field per document, named by its first
    # Bates number); otherwise they are baked into the pages with every annotation.
    keep_forms = models.BooleanField(default=False)
    volume = models.CharField(max_length=20, default="VOL001")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.STAMPING)
    reason = models.TextField(blank=True)
    page_count = models.PositiveIntegerField(default=0)
    pages_done = models.PositiveIntegerField(default=0)
    pdf_sha256 = models.CharField(max_length=64, blank=True)
    zip_sha256 = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Served: an attorney's act (permission serve_production), recorded once, with to whom, by whom and when.
    served_to = models.CharField(max_length=300, blank=True)
    served_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    served_at = models.DateTimeField(null=True, blank=True)
    # The worker stamping the production and until when its claim holds (matters.leases); empty when no one is.
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # When the work was last put in the documents queue (by a person, a takeover or the stall sweep); empty for
    # work done by its caller (the command line, an import's own files), which no sweep queues (matters.recovery).
    queued_at = models.DateTimeField(null=True, blank=True)
    # How often a worker died holding this work since a person last queued it; past
    # LAWDESK_RECOVERY_MAX_TAKEOVERS it fails instead of being taken over again (matters.recovery).
    takeovers = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["matter_id", "prefix", "first_number"]  # matter_id: see Custodian.Meta

    def __str__(self) -> str:
        return f"{self.bates(self.first_number)}–{self.bates(self.last_number)}"

    def bates(self, number: int) -> str:
        return f"{self.prefix}{number:0{self.digits}d}{self.suffix}"

    @property
    def first(self) -> str:
        return self.bates(self.first_number)

    @property
    def last(self) -> str:
        return self.bates(self.last_number)


class ProductionDocument(models.Model):
    """One exhibit in a production, in order, with its confidentiality designation and its Bates range."""

    production = models.ForeignKey(Production, on_delete=models.CASCADE, related_name="documents")
    exhibit = models.ForeignKey(Exhibit, on_delete=models.PROTECT, related_name="production_documents")
    order = models.PositiveIntegerField()
    confidentiality = models.CharField(max_length=120, blank=True)
    first_number = models.PositiveBigIntegerField(null=True)
    last_number = models.PositiveBigIntegerField(null=True)
    page_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["production", "order"]
        constraints = [models.UniqueConstraint(fields=["production", "order"], name="document_order_unique")]


class BatesPage(models.Model):
    """The Bates number a production gave one page: a page of an exhibit, or a numbered cover sheet
    (``page`` empty). This is how a cite such as ``SMITH000123`` finds its page and text."""

    production = models.ForeignKey(Production, on_delete=models.CASCADE, related_name="bates_pages")
    document = models.ForeignKey(ProductionDocument, on_delete=models.CASCADE, related_name="bates_pages")
    page = models.ForeignKey(Page, null=True, blank=True, on_delete=models.PROTECT, related_name="bates_numbers")
    number = models.PositiveBigIntegerField()
    bates = models.CharField(max_length=80, db_index=True)

    class Meta:
        ordering = ["production", "number"]
        constraints = [models.UniqueConstraint(fields=["production", "number"], name="bates_number_unique")]
