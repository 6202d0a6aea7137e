"""The case file: matters, their members, exhibits, the pages of each exhibit, and generated documents.

Vocabulary (origins, statuses, permissions) is the one in docs/glossary.md; change it there first.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from lawdesk.url_ids import reverse_ids
from matters.exhibits.reading import reading_form
from matters.exhibits.sniff import type_name


class Origin(models.TextChoices):
    """Who a document comes from. Evidence origins, the authority origin, and origins of generated material."""

    CLIENT = "client", "Client"
    OPPOSING_PARTY = "opposing_party", "Opposing party"
    THIRD_PARTY = "third_party", "Third party"
    COURT = "court", "Court"
    AUTHORITY = "authority", "Authority (case law, statutes, rules)"
    DRAFT = "draft", "Draft (generated)"
    SUMMARY = "summary", "Summary (generated)"
    EXTRACTION = "extraction", "Extraction (generated)"
    REVIEW = "review", "Review (generated)"
    PRODUCTION = "production", "Production (generated)"
    EXPORT = "export", "Export (generated)"
    LOG = "log", "Log (generated)"


EVIDENCE_ORIGINS = frozenset({Origin.CLIENT, Origin.OPPOSING_PARTY, Origin.THIRD_PARTY, Origin.COURT})
UPLOAD_ORIGINS = (*sorted(EVIDENCE_ORIGINS, key=list(Origin).index), Origin.AUTHORITY)
GENERATED_ORIGINS = frozenset(set(Origin) - EVIDENCE_ORIGINS - {Origin.AUTHORITY})


# A Bates prefix may not end in a digit: "Q0" + 000001 and "Q" + 0000001 would both read Q0000001. One rule for the
# server and the forms' ``pattern`` attribute. Browsers compile ``pattern`` with the ``v`` flag (HTML Standard, "The
# pattern attribute"), in which a bare "-" inside a class is a syntax error, so it is escaped.
BATES_PREFIX_HTML_PATTERN = r"[A-Za-z](?:[A-Za-z0-9_\-]{0,28}[A-Za-z_\-])?"


class Matter(models.Model):
    """A case or engagement. Only its members see it or anything in it (an ethical wall), superusers included."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    class DateOrder(models.TextChoices):
        MONTH_FIRST = "mdy", "Month first (03/04/2021 is March 4)"
        DAY_FIRST = "dmy", "Day first (03/04/2021 is 3 April)"

    class NumberFormat(models.TextChoices):
        EN = "en", "1,250.00"
        DE = "de", "1.250,00"

    class LabelStyle(models.TextChoices):
        NUMERIC = "numeric", "Exhibit 1, 2, 3 ..."
        ALPHA = "alpha", "Exhibit A, B, C ..."

    name = models.CharField("caption / name", max_length=300)
    court = models.CharField(max_length=200, blank=True)
    case_number = models.CharField(max_length=100, blank=True)
    client = models.CharField(max_length=200, blank=True)
    opposing_party = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    label_style = models.CharField(max_length=10, choices=LabelStyle.choices, default=LabelStyle.NUMERIC)
    date_order = models.CharField(
        "numeric dates read as", max_length=3, choices=DateOrder.choices, default=DateOrder.MONTH_FIRST,
        help_text="how the verifier reads 03/04/2021 in drafts and evidence",
    )
    number_format = models.CharField(
        "amounts written as", max_length=2, choices=NumberFormat.choices, default=NumberFormat.EN,
        help_text="how the verifier reads the separators in money amounts",
    )
    # The prefix the matter's productions are numbered with, when the attorney fixes one (SMITH for SMITH000001):
    # the New production form offers it first, else the prefix of the matter's last production.
    bates_prefix = models.CharField(
        "Bates prefix", max_length=30, blank=True,
        validators=[RegexValidator(rf"^{BATES_PREFIX_HTML_PATTERN}$",
                                   "A Bates prefix starts with a letter, then letters, digits, _ or - (30 at most), "
                                   "and does not end in a digit.")],
        help_text="what the matter's productions are numbered with (SMITH for SMITH000001); blank: the last one used",
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="matters", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Legal hold: nothing of the matter may be deleted while set (matters.retention.services); who set or lifted it and
    # why is in the matter's audit chain.
    legal_hold = models.BooleanField(default=False)
    # Set when the matter was purged: the row stays only so its audit chain, which ends with the purge, can be
    # verified; everything else of the matter is gone.
    purged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [
            ("upload_exhibit", "Upload case materials and edit exhibits"),
            ("approve_draft", "Approve drafts, waive or confirm findings"),
            ("serve_production", "Serve productions"),
            ("manage_topology", "Administer hosts, GPUs, boards and model servers"),
            ("hold_matter", "Put a matter on legal hold, lift the hold, purge the matter"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        """Save the matter; raise ValidationError when the save would set or clear the legal hold. The hold
        changes only through ``matters.retention.services.matter_hold`` / ``matter_hold_lift`` (the hold panel,
        the ``legal_hold`` command), which check the attorney, take the reason and audit it; a form, the admin
        or an instance read before the hold changed cannot flip it by saving."""
        if self._state.adding:
            held_now = False
        else:
            held_now = Matter.objects.filter(pk=self.pk).values_list("legal_hold", flat=True).first()
        if held_now is not None and bool(held_now) != bool(self.legal_hold):
            change = "lifted" if held_now else "set"
            raise ValidationError({"legal_hold": f"The legal hold of {self.name} can only be {change} by an attorney "
                                                 "of the matter on its hold panel, with a reason (audited)."})
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse_ids("matters:detail", self.pk)


class Custodian(models.Model):
    """A person or source the matter's documents were collected from ("J. Rivera", "Finance shared drive"), as a
    production's load file names them (the DAT's CUSTODIAN column). Named once per matter and chosen on upload."""

    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, related_name="custodians")
    name = models.CharField(max_length=200)

    class Meta:
        # matter_id, not "matter": ordering by the relation brings in the matter's own ordering and a join in
        # every query of a model ordered by this one (pages, redactions), for an order that is the same within
        # a matter.
        ordering = ["matter_id", "name"]
        constraints = [models.UniqueConstraint(fields=["matter", "name"], name="custodian_name_unique_in_matter")]

    def __str__(self) -> str:
        return self.name


class Exhibit(models.Model):
    """One uploaded file of a matter and everything derived from it.

    The original is stored unchanged under its SHA-256 (see ``matters.storage``); ``original_name`` is the name the
    browser sent, kept as data only and never used as a path. ``status`` follows docs/glossary.md; every status but
    ``ready`` carries a ``reason`` written for an attorney.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        PROCESSING = "processing", "Processing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"
        NEEDS_PASSWORD = "needs_password", "Needs password"
        REJECTED = "rejected", "Rejected"
        DUPLICATE = "duplicate", "Duplicate"

    class Kind(models.TextChoices):
        PDF = "pdf", "PDF"
        IMAGE = "image", "Image"
        DOCX = "docx", "Word document"
        # DOC, WPD, RTF and ODT: converted by LibreOffice as DOCX is, but with no links cut before (see sniff).
        DOCUMENT = "document", "Word-processing document"
        # An email message (RFC 5322 .eml or Outlook .msg) and a mailbox of them (.mbox): see docs/email.md.
        EMAIL = "email", "Email message"
        MAILBOX = "mailbox", "Mailbox"
        # XLSX, XLS, ODS and CSV: rendered as printed by LibreOffice, hidden parts shown (docs/case-file.md).
        WORKBOOK = "workbook", "Spreadsheet"
        OTHER = "other", "Not accepted"

    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, related_name="exhibits")
    label = models.CharField(max_length=40, blank=True)
    label_seq = models.PositiveIntegerField(null=True, blank=True)
    title = models.CharField(max_length=300, blank=True)
    # How drafts cite this exhibit when not by label or Bates number: an authority's own citation
    # ("Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614"), a filing's docket entry ("ECF No. 45-2"), a
    # record document's short name ("Compl."). Prefilled from the first page; an attorney may change it (audited).
    cites_as = models.CharField("cites as", max_length=300, blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices)
    original_name = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64, db_index=True)
    size_bytes = models.BigIntegerField()
    mime_type = models.CharField("detected type", max_length=120, blank=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    quarantined = models.BooleanField(default=False)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    reason = models.TextField(blank=True)
    notes = models.JSONField(default=list, blank=True)
    # A Word file's tracked changes, comments and hidden text, taken out of the text that grounds claims
    # (matters.exhibits.ingest.docx_revisions.WordChanges as JSON); {} for any other file or a Word file without them.
    word_changes = models.JSONField(default=dict, blank=True)
    # The short form a brief cites this transcript by ("Roe Dep.", "Hr'g Tr."): prefilled from the caption of an
    # exhibit read as a transcript, set by a person otherwise (matters.drafts.verifier.transcripts).
    transcript_cite = models.CharField("cited as (transcript)", max_length=60, blank=True)
    duplicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # Who the file was collected from; empty is nobody named (never the client by default): a production's DAT
    # leaves CUSTODIAN blank then.
    custodian = models.ForeignKey(Custodian, null=True, blank=True, on_delete=models.PROTECT, related_name="exhibits")
    # The family: an email's attachments (and a message attached to a message) are exhibits whose parent is the
    # message, in the order they are attached (family_position, from 1; 0 for an exhibit with no parent).
    # family_seq is the label_seq of the family's top exhibit and family_path the positions from it ("0002.0001."),
    # so the matter page lists a family together, parent then children, whenever each was labelled.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    family_position = models.PositiveIntegerField(default=0)
    family_seq = models.PositiveIntegerField(null=True, blank=True)
    family_path = models.CharField(max_length=100, blank=True)
    page_count = models.PositiveIntegerField(default=0)
    pages_pdf = models.PositiveIntegerField(default=0)
    pages_ocr = models.PositiveIntegerField(default=0)
    progress_page = models.PositiveIntegerField(default=0)
    previews_ready = models.BooleanField(default=False)
    facts_index = models.CharField(
        max_length=20, blank=True,
        help_text="version and number format of the verifier's index of this exhibit's dates and amounts",
    )
    generated_match = models.ForeignKey(
        "GeneratedDocument", null=True, blank=True, on_delete=models.PROTECT, related_name="reuploads"
    )
    generated_reason = models.TextField(blank=True)
    generated_override_reason = models.TextField(blank=True)
    generated_override_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Moves with every change a row of the matter page shows (status, progress, pages, label, title, marking):
    # a queryset update() that changes one of those sets it too, since auto_now acts only on save().
    updated_at = models.DateTimeField(auto_now=True)
    # The worker processing the exhibit and until when its claim holds (matters.leases); empty when no one is.
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # When the work was last put in the documents queue (by a person, a takeover or the stall sweep); empty for
    # work done by its caller (the command line, an import's own files), which no sweep queues (matters.recovery).
    queued_at = models.DateTimeField(null=True, blank=True)
    # How often a worker died holding this work since a person last queued it; past
    # LAWDESK_RECOVERY_MAX_TAKEOVERS it fails instead of being taken over again (matters.recovery).
    takeovers = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["matter_id", "label_seq", "id"]  # matter_id: see Custodian.Meta
        constraints = [
            models.UniqueConstraint(
                fields=["matter", "label"], condition=~models.Q(label=""), name="exhibit_label_unique_in_matter"
            ),
            models.UniqueConstraint(
                fields=["matter", "sha256"],
                condition=~models.Q(status="duplicate"),
                name="exhibit_sha256_unique_in_matter",
            ),
        ]
        # The matter page lists 100 files at a time in this order: with the index PostgreSQL reads those 100
        # rows instead of sorting every file of the matter (7 ms at 6,000 files) on every view.
        # exhibit_changed: an open matter page asks twice a second whether any of its files changed; the newest
        # updated_at of the matter is one step down this index (matters.consumers.ExhibitRowWatch).
        # exhibit_counts and exhibit_marked_generated: the matter page's counts, read from the index alone
        # (matters.exhibits.listing.matter_exhibit_counts); the second holds only the few files marked generated.
        indexes = [models.Index(fields=["matter", "label_seq", "id"], name="exhibit_list_order"),
                   models.Index(fields=["matter", "status", "origin"], name="exhibit_counts"),
                   models.Index(fields=["matter", "status", "origin"], condition=~models.Q(generated_reason=""),
                                name="exhibit_marked_generated"),
                   models.Index(fields=["matter", "family_seq", "family_path", "id"], name="exhibit_family_order"),
                   models.Index(fields=["matter", "updated_at"], name="exhibit_changed")]

    def __str__(self) -> str:
        return f"{self.display_label} – {self.title or self.original_name}"

    @property
    def display_label(self) -> str:
        return f"Exhibit {self.label}" if self.label else "(no label)"

    @property
    def type_name(self) -> str:
        """What a lawyer calls this file's detected type ("PDF", "Word document"); see
        :func:`matters.exhibits.sniff.type_name`."""
        return type_name(self.mime_type)

    @property
    def content(self) -> "Exhibit":
        """The exhibit whose pages stand for this one: itself, or for a duplicate, the exhibit it repeats (an
        attachment whose bytes were already in the matter is stored once; its family still produces it, with
        those pages: docs/productions.md)."""
        if self.status == self.Status.DUPLICATE and self.duplicate_of_id:
            return self.duplicate_of
        return self

    @property
    def family_depth(self) -> int:
        """How many generations below its family's top exhibit this one is: 0 for the top, 1 for an attachment."""
        return self.family_path.count(".")

    @property
    def custodian_names(self) -> list[str]:
        """Everyone this file was collected from, its own custodian first: for an email message also the
        custodians of the same message collected again (docs/email.md, duplicates); [] for nobody."""
        names = [self.custodian.name] if self.custodian_id else []
        if self.kind == self.Kind.EMAIL and hasattr(self, "message"):
            names += [name for name in self.message.custodians.values_list("name", flat=True) if name not in names]
        return names

    @property
    def stated_reason(self) -> str:
        """The reason shown beside the status: the status's own reason, or, for an upload recognised as LawDesk's
        own output (and not overridden), why it is marked generated. Used by the list and the commands' ``reason``."""
        if self.reason:
            return self.reason
        return self.generated_reason if self.marked_generated else ""

    @property
    def marked_generated(self) -> bool:
        """True when this upload is LawDesk's own output coming back and no attorney has overridden that."""
        return bool(self.generated_reason) and not self.generated_override_reason

    @property
    def is_evidence(self) -> bool:
        return self.origin in EVIDENCE_ORIGINS and not self.marked_generated

    @property
    def is_settled(self) -> bool:
        """True once processing will not change this exhibit without a person acting."""
        return self.status not in (self.Status.QUEUED, self.Status.PROCESSING)

    def get_absolute_url(self) -> str:
        return reverse_ids("matters:exhibit", self.matter_id, self.pk)  # a hundred a list page


class Page(models.Model):
    """One page of an exhibit as a viewer shows it, with its text and where that text came from.

    ``source`` is ``pdf`` (the PDF's own text layer), ``ocr`` (Tesseract) or ``none`` (a blank page).
    ``ocr_confidence`` is Tesseract's mean word confidence, 0–100; ``ocr_rotation_deg`` the clockwise rotation
    that orientation detection applied before recognition.
    """

    class Source(models.TextChoices):
        PDF = "pdf", "PDF text layer"
        OCR = "ocr", "OCR (Tesseract)"
        LOAD_FILE = "load_file", "the producing party's text file"
        NONE = "none", "No text"

    exhibit = models.ForeignKey(Exhibit, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    # The text in reading form (matters.exhibits.reading), what search indexes; written with ``text``, never edited.
    reading_text = models.TextField(blank=True, default="", editable=False)
    source = models.CharField(max_length=10, choices=Source.choices)
    ocr_confidence = models.FloatField(null=True, blank=True)
    ocr_rotation_deg = models.SmallIntegerField(default=0)
    # Marks on the page (an image, or a text layer dropped as garbled) and no text read from them: flagged.
    unread_ink = models.BooleanField(default=False)
    width_pt = models.FloatField()
    height_pt = models.FloatField()
    injection_reason = models.CharField("possible prompt injection", max_length=300, blank=True)
    # For a text-layer page, the key of what its text was read from (content, fonts by content, box; SHA-1 hex,
    # matters.productions.bates.page_key), worked out by ingest from the very document it read: a produced page
    # with this key holds ``text``, so the leak scan need not extract it again. Empty: none (read it).
    text_key = models.CharField(max_length=40, blank=True, default="", editable=False)
    injection_cleared_reason = models.TextField(blank=True)
    injection_cleared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def save(self, *args, **kwargs) -> None:
        """Save, with ``reading_text`` made from ``text``. Code that updates ``text`` in a queryset sets
        ``reading_text=reading_form(text)`` with it (search indexes it)."""
        self.reading_text = reading_form(self.text)
        if "update_fields" in kwargs and kwargs["update_fields"] is not None and "text" in kwargs["update_fields"]:
            kwargs["update_fields"] = {*kwargs["update_fields"], "reading_text"}
        super().save(*args, **kwargs)

    @property
    def low_confidence(self) -> bool:
        """OCR'd with a mean word confidence under ``LAWDESK_OCR_LOW_CONFIDENCE``: its text may be wrong."""
        return self.ocr_confidence is not None and self.ocr_confidence < settings.LAWDESK_OCR_LOW_CONFIDENCE

    @property
    def reading_flag(self) -> str:
        """Why this page's text may not be what it shows ('' when none): low OCR confidence, or marks read as
        nothing."""
        if self.unread_ink and not self.text.strip():
            return "marks on this page were read as no text (a damaged text layer, then nothing from OCR)"
        if self.low_confidence:
            return f"OCR confidence {self.ocr_confidence:.0f}% is low; the text may be wrong"
        return ""

    @property
    def source_words(self) -> str:
        """Where this page's text came from, in words: "text layer", "OCR 94%", "load file text", "no text"."""
        if self.source == self.Source.OCR:
            return f"OCR {self.ocr_confidence:.0f}%" if self.ocr_confidence is not None else "OCR"
        return {self.Source.PDF: "text layer", self.Source.LOAD_FILE: "load file text"}.get(self.source, "no text")

    @property
    def injection_open(self) -> bool:
        """Flagged as addressing instructions to a model, and not cleared by an attorney: such a page never
        grounds a claim for the verifier."""
        return bool(self.injection_reason) and not self.injection_cleared_reason

    class Meta:
        ordering = ["exhibit", "number"]
        constraints = [models.UniqueConstraint(fields=["exhibit", "number"], name="page_number_unique_in_exhibit")]
        # The verifier asks for a matter's flagged pages on every run; few pages are flagged.
        indexes = [models.Index(fields=["exhibit"], condition=~models.Q(injection_reason=""),
                                name="page_injection_flagged")]

    def __str__(self) -> str:
        return f"{self.exhibit.display_label}, page {self.number}"


class GeneratedDocument(models.Model):
    """Something LawDesk produced: a draft version, summary, extraction, review, production file, export or log.

    Recorded with the SHA-256 of its bytes (when it is a file) and its text, so that the same material coming
    back as an upload is recognised and kept out of the evidence. Generated material is never evidence.
    """

    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, related_name="generated_documents")
    origin = models.CharField(max_length=20, choices=[(o.value, o.label) for o in Origin if o in GENERATED_ORIGINS])
    title = models.CharField(max_length=300)
    sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_origin_display()}: {self.title}"
