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

    ``body_text`` is the body as read (plain text; an HTML body as its text), kept to compare messages:
    ``inclusive`` is False when another message of the thread holds this one's whole content and attachments
    (``included_in`` names it; :mod:`matters.email.inclusive`), recomputed whenever the thread changes. A message
    read before the body was kept has ``body_recorded`` False and stays inclusive, since nothing can be compared.
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
    body_text = models.TextField(blank=True)
    body_recorded = models.BooleanField(default=False)
    inclusive = models.BooleanField(default=True, db_index=True)
    included_in = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["sent_at", "id"]

    def __str__(self) -> str:
        return f"{self.subject or '(no subject)'} ({self.date_header or 'undated'})"


class NearDuplicate(models.Model):
    """Two exhibits whose normalised texts differ by a little (a forward with one line added): ``similarity`` is
    the Jaccard index of their word shingles, 0 to 1 (:mod:`matters.email.near_duplicates`). One row per pair,
    ``exhibit`` the later of the two (by id); each exhibit's page shows the other. An exact duplicate is a
    ``duplicate`` exhibit (``Exhibit.duplicate_of``), never a near-duplicate."""

    exhibit = models.ForeignKey(Exhibit, on_delete=models.CASCADE, related_name="near_duplicates_later")
    other = models.ForeignKey(Exhibit, on_delete=models.CASCADE, related_name="near_duplicates_earlier")
    similarity = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["exhibit", "other"], name="near_duplicate_pair_once")]

    def __str__(self) -> str:
        return f"{self.exhibit_id} ~ {self.other_id} ({self.similarity:.0%})"
