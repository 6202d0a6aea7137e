"""The audit log: append-only entries in hash chains, one per matter and one for the system."""

from django.db import models

from matters.audit.schemes import SCHEME_KEYED, SCHEMES

from .case import Matter


class AuditEntry(models.Model):
    """One append-only line of the audit log.

    Entries form hash chains: one per matter (``chain='matter:<id>'``) and one for events outside any matter
    (``chain='system'``, logins). ``hash`` is computed over the entry's canonical JSON, which includes
    ``prev_hash``, so rewriting any entry breaks every hash after it (``manage.py audit_verify``). ``scheme`` says
    how: ``hmac-sha256-v2`` (keyed, matter bound, detail sealed apart so a purge can erase it: every new entry),
    ``hmac-sha256`` (keyed, before that) or ``sha256`` (unkeyed, entries written before the audit log was keyed;
    see :mod:`matters.audit.schemes`).
    """

    chain = models.CharField(max_length=40)
    seq = models.PositiveBigIntegerField()
    matter = models.ForeignKey(Matter, null=True, blank=True, on_delete=models.PROTECT, related_name="audit_entries")
    at = models.DateTimeField()
    actor = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=60)
    object_type = models.CharField(max_length=60, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)
    scheme = models.CharField(max_length=16, choices=SCHEMES, default=SCHEME_KEYED)
    # hmac-sha256-v2: the detail's salt (hex) and keyed digest, which the hash covers instead of the detail; a purge
    # empties the detail and the salt and sets detail_erased (matters.audit.schemes).
    detail_salt = models.CharField(max_length=32, blank=True)
    detail_digest = models.CharField(max_length=64, blank=True)
    detail_erased = models.BooleanField(default=False)

    class Meta:
        ordering = ["chain", "seq"]
        constraints = [models.UniqueConstraint(fields=["chain", "seq"], name="audit_seq_unique_in_chain")]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.chain}#{self.seq} {self.action}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise ValueError("Audit entries are append-only and cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("Audit entries are append-only and cannot be deleted.")
