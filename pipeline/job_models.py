"""Jobs and the runs of their stages: what was asked, which server did each stage, what it was sent and what it
answered. Vocabulary (job kinds, stages, roles, stage statuses) as in docs/glossary.md."""

from django.conf import settings
from django.db import models


class JobKind(models.TextChoices):
    MOTION = "motion", "Motion or petition"
    SUMMARY = "summary", "Summary of exhibits"
    EXTRACTION = "extraction", "Extraction (amounts, dates, parties)"


class StageStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    WAITING_FOR_SERVER = "waiting_for_server", "Waiting for server"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    INTERRUPTED = "interrupted", "Interrupted (will be re-run)"
    CANCELLED = "cancelled", "Cancelled"
    STOPPED = "stopped", "Stopped (no grounds)"


class Job(models.Model):
    """One request of an attorney in a matter, run as stages in order. ``kind`` is blank until the router stage
    classifies a request nobody classified. ``exhibits``: the exhibit ids chosen (empty: all the evidence).
    ``status`` uses the stage vocabulary: the state of the stage in front, ``done`` when every stage is.
    ``draft`` is the draft the job wrote (the review page's subject). ``due_at``: when the work must be done (a
    filing deadline, aware datetime), or null; the queue orders waiting stage runs by it. ``front_at``: when a user
    moved the job to the front of the queue (``front_by``), or null (:mod:`pipeline.stages.queue`)."""

    matter = models.ForeignKey("matters.Matter", on_delete=models.PROTECT, related_name="jobs")
    kind = models.CharField(max_length=20, choices=JobKind.choices, blank=True)
    instructions = models.TextField()
    exhibits = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=20, choices=StageStatus.choices, default=StageStatus.QUEUED)
    reason = models.TextField(blank=True)
    draft = models.ForeignKey("matters.Draft", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    cancel_requested = models.BooleanField(default=False)
    gate_override_reason = models.TextField(blank=True)
    gate_override_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    due_at = models.DateTimeField(null=True, blank=True, help_text="when the work must be done (filing deadline)")
    front_at = models.DateTimeField(null=True, blank=True, help_text="when it was moved to the front of the queue")
    front_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display() or 'Job'} #{self.pk}"

    def current_runs(self) -> list["StageRun"]:
        """The latest attempt of each stage (of each section of a sectioned stage), in stage order."""
        latest: dict[tuple[str, str], StageRun] = {}
        for run in self.stage_runs.order_by("order", "attempt"):
            latest[run.stage, run.section] = run
        return sorted(latest.values(), key=lambda r: r.order)


class StageRun(models.Model):
    """One attempt at one stage of a job, with everything needed to audit it: the server, model and board, the
    sampling settings, the prompt as sent (chat messages) and its template version, the evidence packet's
    SHA-256, the output (saved while streaming, every ~100 ms), the parsed result, token counts, the server's own
    decode and prompt-processing tok/s, our measured decode tok/s, durations in ms, status and error.

    A running attempt holds a lease (``lease_owner``, ``lease_expires_at``) that its worker renews; an attempt
    whose lease went stale is marked ``interrupted`` and a new attempt (``attempt`` + 1) re-runs the stage. Every
    attempt stays in the record.
    """

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="stage_runs")
    stage = models.CharField(max_length=20)
    section = models.CharField(max_length=40, blank=True, default="")
    role = models.CharField(max_length=20, blank=True)
    order = models.PositiveSmallIntegerField()
    attempt = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=20, choices=StageStatus.choices, default=StageStatus.QUEUED)
    reason = models.TextField(blank=True)
    error = models.TextField(blank=True)
    server = models.ForeignKey("pipeline.ModelServer", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    server_name = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=200, blank=True)
    board = models.CharField(max_length=200, blank=True)
    sampling = models.JSONField(default=dict, blank=True)
    # What a retry changed after an unusable answer (pipeline.stages.degenerate.retry_change): the sampling settings
    # laid over the server's, why, and the sentence the job page shows; {} for an attempt run as its stage is.
    retry_change = models.JSONField(default=dict, blank=True)
    prompt = models.JSONField(default=list, blank=True)
    prompt_template = models.CharField(max_length=100, blank=True)
    packet_sha256 = models.CharField(max_length=64, blank=True)
    # How the packet was chosen (pipeline.packet.EvidencePacket.trace): the queries, each page's reason for being
    # there (query, lexical rank, similarity), what was left out for space, the embedding's progress, warnings.
    retrieval = models.JSONField(default=dict, blank=True)
    output = models.TextField(blank=True)
    streamed_pieces = models.PositiveIntegerField(default=0)
    parsed = models.JSONField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    decode_tok_s = models.FloatField(null=True, blank=True)
    prompt_tok_s = models.FloatField(null=True, blank=True)
    measured_decode_tok_s = models.FloatField(null=True, blank=True)
    first_token_ms = models.FloatField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    waits = models.PositiveSmallIntegerField(default=0, help_text="times it waited for its server")
    # A run waiting for its server after a backoff is not taken from the queue before this time.
    retry_at = models.DateTimeField(null=True, blank=True)
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    first_request_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "order", "attempt"]
        constraints = [models.UniqueConstraint(fields=["job", "stage", "section", "attempt"],
                                               name="stage_attempt_unique")]

    def __str__(self) -> str:
        return f"{self.job} {self.stage}{f' {self.section}' if self.section else ''} #{self.attempt}"

    def as_json(self) -> dict:
        """The glossary's run_job keys."""
        return {"job": self.job_id, "stage": self.stage, "role": self.role, "server": self.server_name,
                "status": self.status, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "decode_tok_s": self.decode_tok_s,
                "prompt_tok_s": self.prompt_tok_s, "duration_ms": self.duration_ms,
                "error": self.error or self.reason}


class ServerSlot(models.Model):
    """One of a model server's parallel slots, as LawDesk admits requests to it: held by at most one stage attempt
    at a time, whichever worker (on whichever host) runs it. A claim is a conditional UPDATE of a free or expired
    row, renewed with the attempt's lease (``lease_expires_at``) and cleared when the attempt ends; a claim whose
    worker died expires with its lease (:mod:`pipeline.stages.admission`). ``slot`` counts from 0."""

    server = models.ForeignKey("pipeline.ModelServer", on_delete=models.CASCADE, related_name="slot_claims")
    slot = models.PositiveSmallIntegerField()
    run = models.ForeignKey(StageRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["server", "slot"]
        constraints = [models.UniqueConstraint(fields=["server", "slot"], name="server_slot_once")]

    def __str__(self) -> str:
        return f"{self.server} slot {self.slot}"
