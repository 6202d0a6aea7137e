"""Incoming productions: volumes received from another party and the Bates numbers they gave their pages."""

from django.conf import settings
from django.db import models

from .case import Matter, Origin, Page


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

    def __str__(self) -> str:
        return self.source_name


class IncomingBatesPage(models.Model):
    """The Bates number the producing party gave a page."""

    incoming = models.ForeignKey(IncomingProduction, on_delete=models.CASCADE, related_name="bates_pages")
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="incoming_bates")
    bates = models.CharField(max_length=80, db_index=True)

    class Meta:
        ordering = ["incoming", "bates"]
