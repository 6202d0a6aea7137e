"""Incoming productions: volumes received from another party and the Bates numbers they gave their pages."""

from django.conf import settings
from django.db import models

from .case import Exhibit, Matter, Origin, Page


class IncomingProduction(models.Model):
    """A production received from another party (a volume with load files, or stamped PDFs), imported as
    exhibits whose pages carry the producing party's Bates numbers. ``report`` lists every discrepancy."""

    class Status(models.TextChoices):
        AWAITING_CONFIRMATION = "awaiting_confirmation", "Awaiting confirmation of the field mapping"
        IMPORTING = "importing", "Importing"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, related_name="incoming_productions")
    origin = models.CharField(max_length=20, choices=[(Origin.OPPOSING_PARTY, "Opposing party"),
                                                      (Origin.THIRD_PARTY, "Third party")])
    source_name = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=30, choices=Status.choices, default=Status.IMPORTING)
    header = models.JSONField(default=list, blank=True)
    field_map = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=list, blank=True)
    reason = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The worker importing the volume and until when its claim holds (matters.leases); empty when no one is.
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # When the work was last put in the documents queue (by a person, a takeover or the stall sweep); empty for
    # work done by its caller (the command line, an import's own files), which no sweep queues (matters.recovery).
    queued_at = models.DateTimeField(null=True, blank=True)
    # How often a worker died holding this work since a person last queued it; past
    # LAWDESK_RECOVERY_MAX_TAKEOVERS it fails instead of being taken over again (matters.recovery).
    takeovers = models.PositiveIntegerField(default=0)
    # Every Bates prefix its pages carry (the letters before the digits: JONES000042 -> JONES), kept as pages
    # are recorded, so that search and the verifier know every prefix a matter received without reading its pages.
    bates_prefixes = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return self.source_name


class IncomingDocument(models.Model):
    """One record of an incoming volume (a DAT row, or a stamped PDF) and the exhibit it became.

    ``record`` is the record's place in the volume (0-based, in the order the import reads them), which is the
    same on every reading of the same files; ``name`` is what the report calls it (its first Bates number or file
    name). The row is written in the same transaction as the exhibit, so an import taken over after its worker
    died finds every exhibit already made and makes none twice.
    """

    incoming = models.ForeignKey(IncomingProduction, on_delete=models.CASCADE, related_name="documents")
    record = models.PositiveIntegerField()
    name = models.CharField(max_length=300)
    exhibit = models.ForeignKey(Exhibit, on_delete=models.PROTECT, related_name="incoming_documents")

    class Meta:
        ordering = ["incoming", "record"]
        constraints = [models.UniqueConstraint(fields=["incoming", "record"], name="incoming_record_unique")]


def bates_prefix(bates: str) -> str:
    """The letters (and separators) before a Bates number's digits: ``JONES000042`` -> ``JONES``, ``ACME-0042``
    -> ``ACME-``; '' for a number of digits only."""
    return bates.rstrip("0123456789")


class IncomingBatesPage(models.Model):
    """The Bates number the producing party gave a page."""

    incoming = models.ForeignKey(IncomingProduction, on_delete=models.CASCADE, related_name="bates_pages")
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="incoming_bates")
    bates = models.CharField(max_length=80, db_index=True)

    class Meta:
        ordering = ["incoming", "bates"]
