"""Email messages: what LawDesk keeps of each message exhibit's headers, for families, threads and duplicates.

The message's pages (its header block and body) are ordinary Pages of its Exhibit; this is the metadata review
platforms key on (docs/email.md).
"""

from django.db import models

from .case import Custodian, Exhibit


class EmailMessage(models.Model):
    """The headers and hashes of one message exhibit (``exhibit.kind == "email"``).

    ``sent_at`` is the Date header in UTC (null when the header is missing or unreadable); ``date_header`` is the
    header as written, its own timezone included (``Tue, 03 Mar 2026 23:30:00 -0800``), and ``sent_utc_offset_min``
    that timezone in minutes east of UTC (-480). ``native_sha256`` hashes the message's bytes as received (the
    upload, or the message's bytes inside a mailbox or a parent message); ``body_sha256`` hashes its normalised body
    (:func:`matters.email.parse.normalised_body_sha256`), which, with ``message_id``, recognises the same message
    collected from two custodians. ``custodians`` are everyone it was collected from, the exhibit's own custodian
    first. ``thread_key`` is shared by the messages of one conversation (:mod:`matters.email.threads`).
    """

    exhibit = models.OneToOneField(Exhibit, on_delete=models.CASCADE, related_name="message")
    source_format = models.CharField(max_length=10)  # "eml", "msg"
    message_id = models.CharField("Message-ID", max_length=998, blank=True, db_index=True)
    in_reply_to = models.CharField("In-Reply-To", max_length=998, blank=True)
    references = models.JSONField(default=list, blank=True)
    sender = models.TextField("From", blank=True)
    to = models.TextField("To", blank=True)
    cc = models.TextField("Cc", blank=True)
    bcc = models.TextField("Bcc", blank=True)
    subject = models.TextField(blank=True)
    subject_normalised = models.CharField(max_length=500, blank=True)
    date_header = models.CharField("Date as written", max_length=300, blank=True)
    sent_at = models.DateTimeField("sent (UTC)", null=True, blank=True)
    sent_utc_offset_min = models.SmallIntegerField(null=True, blank=True)
    attachment_names = models.JSONField(default=list, blank=True)
    native_sha256 = models.CharField(max_length=64)
    body_sha256 = models.CharField(max_length=64, db_index=True)
    custodians = models.ManyToManyField(Custodian, blank=True, related_name="messages")
    thread_key = models.CharField(max_length=64, blank=True, db_index=True)

    class Meta:
        ordering = ["sent_at", "id"]

    def __str__(self) -> str:
        return f"{self.subject or '(no subject)'} ({self.date_header or 'undated'})"
