"""Privilege and redaction records: boxes to black out on a page, boxes that only look like redactions, and the
privilege log's row for a withheld or redacted document of a production.

Vocabulary (privilege bases, redaction reason codes) is the one in docs/glossary.md; change it there first.
Coordinates are PDF points on the page as a viewer shows it (the CropBox turned by /Rotate): origin top left,
y downwards, the same space as ``Page.width_pt`` x ``Page.height_pt``.
"""

from django.conf import settings
from django.db import models


class RedactionReason(models.TextChoices):
    """Reason codes printed on a redaction box and listed in the privilege log."""

    AC = "AC", "AC: attorney-client privilege"
    WP = "WP", "WP: attorney work product"
    PII = "PII", "PII: personal identifying information (SSN, account, birth date)"
    PHI = "PHI", "PHI: protected health information"
    NR = "NR", "NR: non-responsive"


class PrivilegeBasis(models.TextChoices):
    """Why a document is withheld (Fed. R. Civ. P. 26(b)(5)(A): the claim must be made expressly)."""

    ATTORNEY_CLIENT = "attorney_client", "Attorney-client privilege"
    WORK_PRODUCT = "work_product", "Attorney work product"
    CUSTOM = "custom", "Other (stated)"


class _Box(models.Model):
    x0 = models.FloatField()
    y0 = models.FloatField()
    x1 = models.FloatField()
    y1 = models.FloatField()

    class Meta:
        abstract = True

    @property
    def rect(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)


class Redaction(_Box):
    """A box to black out on one page whenever its exhibit is produced. The original upload is never changed;
    producing removes the text, image pixels and vector paths under the box (PyMuPDF ``apply_redactions``).
    ``found_by`` is the search that placed it (empty when drawn by hand)."""

    page = models.ForeignKey("matters.Page", on_delete=models.CASCADE, related_name="redactions")
    reason = models.CharField(max_length=10, choices=RedactionReason.choices)
    found_by = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["page", "y0", "x0"]

    def __str__(self) -> str:
        return f"{self.reason} box on {self.page}"


class ImproperRedaction(_Box):
    """A dark filled box found on ingest over text that is still in the file (anyone can copy it out).

    ``hidden_text`` holds the words under the box, shown to the matter's members. A production refuses the page
    until a real :class:`Redaction` covers the box or an attorney confirms it with ``confirmed_reason``."""

    page = models.ForeignKey("matters.Page", on_delete=models.CASCADE, related_name="improper_redactions")
    hidden_text = models.TextField()
    confirmed_reason = models.TextField(blank=True)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["page", "y0", "x0"]

    def __str__(self) -> str:
        return f"improper redaction on {self.page}"


class PrivilegeLogEntry(models.Model):
    """The privilege log's row for one document of a production: withheld (one placeholder page in its place)
    or produced with redactions. ``date``, ``author``, ``recipients`` and ``document_type`` are prefilled from
    the document's own metadata where it has them and stay editable; they are text, as a log states them."""

    document = models.OneToOneField(
        "matters.ProductionDocument", on_delete=models.CASCADE, related_name="privilege_entry"
    )
    withheld = models.BooleanField(default=False)
    basis = models.CharField(max_length=20, choices=PrivilegeBasis.choices, blank=True)
    basis_text = models.CharField("stated basis", max_length=120, blank=True)
    description = models.TextField(blank=True)
    redaction_reasons = models.CharField(max_length=100, blank=True)
    date = models.CharField(max_length=40, blank=True)
    author = models.CharField(max_length=300, blank=True)
    recipients = models.TextField(blank=True)
    document_type = models.CharField(max_length=100, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["document__order"]
        verbose_name_plural = "privilege log entries"

    def __str__(self) -> str:
        return f"privilege log entry for {self.document_id}"

    @property
    def basis_label(self) -> str:
        """The basis as the placeholder page and the log print it."""
        if self.basis == PrivilegeBasis.CUSTOM:
            return self.basis_text
        return PrivilegeBasis(self.basis).label if self.basis else ""
