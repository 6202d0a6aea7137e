"""Running one stage attempt in a worker: claim it with a lease, send it to the server holding its role, stream
and persist the answer, apply it, and queue the next stage.

Rules (issue and docs/glossary.md): a stage never runs in a request; it goes to the server assigned its role and
never silently to another board; a server that is down or loading makes it ``waiting_for_server`` with backoff
(``LAWDESK_STAGE_BACKOFF_S``, doubling, at most ``LAWDESK_STAGE_MAX_WAITS`` times) and then ``failed``. The
worker renews the attempt's lease every third of ``LAWDESK_STAGE_LEASE_S`` from a heartbeat thread, which also
notices a cancel request and closes the stream. An attempt whose lease has gone stale is ``interrupted`` and
re-run as a new attempt by whichever worker notices (:func:`pipeline.stages.control.stage_recover`); a write
from a worker that lost its lease is discarded.

Admission (docs/jobs.md, "The queue"): an attempt sends its server nothing until it holds one of the server's
slots (:mod:`pipeline.stages.admission`), and a worker's task runs whichever waiting attempt comes first in the
queue's order (:mod:`pipeline.stages.order`) among those whose server has a slot free, not necessarily the attempt
the task was queued for: each task still runs exactly one attempt, so every attempt is run by some task.
"""

import logging
import threading
import time
from dataclasses import replace
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from matters.leases import LeaseKeeper, worker_id

from ..job_models import Job, StageRun, StageStatus
from ..llm.client import ModelClient
from ..llm.errors import (
    Cancelled,
    ContextOverflow,
    ModelServerError,
    PromptTruncated,
    ServerLoading,
    ServerUnavailable,
)
from ..models import ModelServer, RoleAssignment
from ..packet import evidence_packet
from . import live
from .admission import slot_claim, slot_release, slot_renew
from .degenerate import streaming_degeneration
from .kinds import CHARS_PER_TOKEN, PROMPT_OVERHEAD_TOKENS
from .prompts import render
from .queue import POLL_S, role_servers, server_board, waiting_in_order
from .record_fields import constrained_schema
from .registry import apply_result, prepare_result, stage_for
from .results import StageFailed, record_job_provenance, unusable_answer
from .retries import automatic_retry
from .scheduling import (
    BACKOFF_S,
    LEASE_S,
    MAX_WAITS,
    READ_TIMEOUT_S,
    stage_queue,
    stage_run_later,
    stage_watch_schedule,
)
from .specs import STAGES, StageSpec

logger = logging.getLogger(__name__)

FLUSH_S = 0.1


class _Heartbeat(LeaseKeeper):
    """Renews the lease while the stage runs (:class:`matters.leases.LeaseKeeper`); sets ``cancel`` when the job's
    cancel flag is raised or the lease was lost (another worker took the stage over after it went stale)."""

    def __init__(self, run_id: int, owner: str, cancel: threading.Event):
        super().__init__(model=StageRun, pk=run_id, owner=owner, lease_s=LEASE_S,
                         live={"status": StageStatus.RUNNING}, on_lost=cancel.set, on_beat=self._beat)
        self.run_id, self.owner, self.cancel = run_id, owner, cancel

    def _beat(self) -> None:
        # The slot's claim lives as long as the attempt's lease: both stop being renewed when the worker dies.
        slot_renew(run_id=self.run_id, owner=self.owner)
        if Job.objects.filter(stage_runs=self.run_id, cancel_requested=True).exists():
            self.cancel.set()


class _Streamer:
    """Collects streamed text and persists it every ``FLUSH_S`` seconds (for the live view in another process).
    With ``cancel`` (the free-text stages), it also judges the text at each flush and sets ``cancel`` once the text
    is already degenerate (:func:`pipeline.stages.degenerate.streaming_degeneration`), so a model looping on one
    line does not run on to its whole token budget; ``stopped_for`` then says why. ``pieces`` counts the streamed
    pieces (one token each from llama.cpp and Ollama)."""

    def __init__(self, run: StageRun, owner: str, cancel: threading.Event | None = None):
        self.run, self.owner, self.cancel = run, owner, cancel
        self.text: list[str] = []
        self.pieces = 0
        self.flushed_at = 0.0
        self.sent = 0
        self.stopped_for = ""

    def on_token(self, piece: str) -> None:
        self.text.append(piece)
        self.pieces += 1
        if time.monotonic() - self.flushed_at >= FLUSH_S:
            self._judge(self.flush())

    def reset(self) -> None:
        # A repair request streams a second answer: the live view shows the one being written.
        self.flush()
        self.text, self.sent = [], 0

    def flush(self) -> str:
        self.flushed_at = time.monotonic()
        text = "".join(self.text)
        StageRun.objects.filter(pk=self.run.pk, lease_owner=self.owner).update(output=text,
                                                                                streamed_pieces=self.pieces)
        live.stage_text(self.run, text[self.sent:], self.sent)
        self.sent = len(text)
        return text

    def _judge(self, text: str) -> None:
        if self.cancel is None or self.stopped_for:
            return
        if problem := streaming_degeneration(text):
            self.stopped_for = problem
            self.cancel.set()


def _server_for(role: str) -> ModelServer:
    assignment = RoleAssignment.objects.select_related("server").filter(role=role).first()
    if assignment is None:
        raise StageFailed(f"No model server holds the {role} role. Assign one in the topology admin.")
    if not assignment.server.enabled:
        raise StageFailed(f"The server holding the {role} role, {assignment.server}, is disabled. Enable it or "
                          "assign the role to another server in the topology admin.")
    if assignment.server.out_of_service_reason:
        # Waits like a server that is down: the next successful probe puts it back in service.
        raise ServerUnavailable(f"{assignment.server}: {assignment.server.out_of_service_reason}")
    return assignment.server


def _claim(run_id: int, owner: str) -> StageRun | None:
    now = timezone.now()
    claimed = StageRun.objects.filter(
        pk=run_id, status__in=[StageStatus.QUEUED, StageStatus.WAITING_FOR_SERVER]
    ).update(status=StageStatus.RUNNING, lease_owner=owner, lease_expires_at=now + timedelta(seconds=LEASE_S),
             started_at=now, retry_at=None)
    if not claimed:
        return None
    run = StageRun.objects.select_related("job", "job__matter", "job__draft").get(pk=run_id)
    Job.objects.filter(pk=run.job_id).update(status=StageStatus.RUNNING, reason="")
    return run


def retrieval_record(packet) -> dict:
    """What a stage run keeps of how its packet was chosen: the packet's trace, the counts of pages sent and left
    out, and the authorities sent (citation, page, markers)."""
    return {**packet.trace, "evidence_pages": len(packet.pages), "omitted_pages": len(packet.omitted),
            "authorities": None if packet.authorities is None else [
                {"exhibit": a.exhibit, "label": a.label, "cites_as": a.cites_as, "page": a.page,
                 "markers": a.markers} for a in packet.authorities]}


def _messages(run: StageRun, spec: StageSpec, budget_chars: int | None):
    job = run.job
    stage = stage_for(run.stage)
    packet = None
    context = {"matter": str(job.matter), "instructions": job.instructions,
               "kind_label": (job.get_kind_display() or "document").lower(), "packet": "", "draft": ""}
    if spec.packet:
        query, queries = stage.retrieval_queries(run)
        packet = evidence_packet(job.matter, exhibits=job.exhibits or None, query=query,
                                 budget_chars=budget_chars, queries=queries, authorities=spec.authorities)
        packet = stage.evidence(run, packet, budget_chars)
        context["packet"] = packet.prompt_text()
    context.update(stage.prompt_context(run))
    return render(spec.template, **context), packet


def _generate(run: StageRun, spec: StageSpec, owner: str, cancel: threading.Event):
    """The attempt's answer, or None where its stage sends no request (an answer that would not fit the server's
    context, a section whose retrieval found nothing: :meth:`pipeline.stages.kinds.Stage.answer_tokens`,
    :meth:`~pipeline.stages.kinds.Stage.nothing_found`)."""
    server = _server_for(spec.role)
    stage = stage_for(run.stage)
    client = ModelClient(server.client_config(), read_timeout_s=READ_TIMEOUT_S, loading_wait_s=min(LEASE_S, 10))
    # Only free text is judged as it streams: a schema's JSON is checked whole, after its repair request.
    streamer = _Streamer(run, owner, cancel if spec.schema is None else None)
    try:
        context_tokens = client.context_tokens() if spec.packet else None
        max_tokens = stage.answer_tokens(run, context_tokens)
        if max_tokens is None:
            return None
        change = dict((run.retry_change or {}).get("sampling") or {})
        if change.get("max_tokens"):
            # A retry's shorter answer, never longer than what the stage allows this attempt.
            max_tokens = min(max_tokens, int(change.pop("max_tokens")))
        change.pop("max_tokens", None)
        sampling = server.sampling_for(max_tokens)
        if change:
            # A retry of an unusable answer: the same request again would bring the same answer back.
            sampling = replace(sampling, **change)
        budget = None
        if context_tokens:
            # Characters of evidence per token of context left for it: the client's own conservative estimate.
            budget = max(1000, (context_tokens - max_tokens - PROMPT_OVERHEAD_TOKENS
                                - stage.prompt_reserve_tokens(run)) * CHARS_PER_TOKEN)
        for _ in range(4):
            messages, packet = _messages(run, spec, budget)
            run.server, run.server_name, run.model = server, server.name, server.model_name
            run.board, run.sampling, run.prompt_template = server_board(server), sampling.as_dict(), spec.template
            run.prompt = [{"role": m.role, "content": m.content} for m in messages]
            run.packet_sha256 = packet.sha256 if packet else ""
            run.retrieval = retrieval_record(packet) if packet else {}
            run.first_request_at = timezone.now()
            StageRun.objects.filter(pk=run.pk, lease_owner=owner).update(
                server=server, server_name=run.server_name, model=run.model, board=run.board,
                sampling=run.sampling, prompt=run.prompt, prompt_template=run.prompt_template,
                packet_sha256=run.packet_sha256, retrieval=run.retrieval, first_request_at=run.first_request_at)
            if packet is not None and stage.nothing_found(run, packet):
                # Nothing is sent: the record keeps the prompt it would have sent, but no time of a request.
                run.first_request_at = None
                StageRun.objects.filter(pk=run.pk, lease_owner=owner).update(first_request_at=None)
                return None
            try:
                schema = constrained_schema(spec.schema, [page.cite for page in packet.pages] if packet else [])
                generation = client.generate(messages, sampling=sampling, schema=schema,
                                             on_token=streamer.on_token, cancel=cancel)
                break
            except ContextOverflow as overflow:
                if not spec.packet or budget is None:
                    raise
                # Fewer pages: shrink the evidence by the share the prompt is over, with a margin.
                budget = int(budget * overflow.context_tokens / overflow.needed_tokens * 0.9)
                if budget < 500:
                    raise
        else:
            raise StageFailed("The evidence could not be cut to fit the server's context.")
        streamer.text = [generation.text]
        streamer.flush()
        if generation.truncated:
            raise _truncated(generation, server.name)
        return generation
    except Cancelled as cancelled:
        partial = streamer.flush()
        if not streamer.stopped_for:
            cancelled.partial_text = cancelled.partial_text or partial
            raise
        raise unusable_answer(spec.role, f"{streamer.stopped_for[:-1]}; it was stopped after "
                                         f"{streamer.pieces} tokens.", partial_text=partial) from None
    except ModelServerError as error:
        streamer.flush()
        error.partial_text = error.partial_text or "".join(streamer.text)
        raise
    finally:
        client.close()


def _truncated(generation, server_name: str) -> PromptTruncated:
    """The failure of a stage whose server cut its prompt: ``failed`` with the reason, never ``done``, since the
    stage's answer (and every later stage and the draft an attorney would approve) would rest on part of the
    evidence packet while its record says the whole packet was sent."""
    read = generation.prompt_tokens + (generation.prompt_tokens_cached or 0)
    failure = PromptTruncated(
        f"{server_name} read only {read} tokens of a prompt we counted at about {generation.prompt_tokens_counted}: "
        "it cut the prompt, so its answer does not rest on all the evidence sent. Check the context size set for "
        "that server against what its model supports, or choose fewer exhibits, then retry this stage.",
        partial_text=generation.text)
    failure.generation = generation
    return failure


def _admitted(run: StageRun, owner: str, server: ModelServer | None) -> StageRun | None:
    """Claim ``run`` for ``owner`` once ``server``'s slot is held for it (``server`` None: it needs none); None,
    with the slot freed, when another worker took the run first."""
    claimed = _claim(run.pk, owner)
    if claimed is None and server is not None:
        slot_release(run_id=run.pk, owner=owner)
    return claimed


def stage_execute(run_id: int, *, owner: str | None = None, enqueue_next: bool = True) -> StageRun | None:
    """Run one queued (or waiting) stage attempt to its end, once a slot of its server is free (waiting for one,
    every ``LAWDESK_QUEUE_POLL_S``, while the attempt is still waiting); return it, or None when another worker
    holds it or it is no longer runnable. ``enqueue_next`` queues the following stage as a task (False when the
    caller runs the stages itself, as ``run_job --wait`` does)."""
    owner = owner or worker_id()
    run = StageRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    server = role_servers().get(run.role) if run.role else None
    while server is not None and slot_claim(server=server, run_id=run.pk, owner=owner) is None:
        if not StageRun.objects.filter(pk=run_id, status__in=[StageStatus.QUEUED,
                                                              StageStatus.WAITING_FOR_SERVER]).exists():
            return None
        time.sleep(POLL_S)
    run = _admitted(run, owner, server)
    if run is None:
        return None
    return _run_admitted(run, owner, enqueue_next)


def stage_dispatch(run_id: int, *, owner: str | None = None) -> StageRun | None:
    """The ``run_stage`` task's work: run the first attempt in the queue's order whose server has a slot free
    (or that needs no server), waiting every ``LAWDESK_QUEUE_POLL_S`` while attempts wait and no slot is free.
    Returns the attempt run, or None when nothing was waiting. ``run_id`` names the attempt the task was queued
    for, which is run when it comes first; any other one run in its place leaves this one's turn to that one's
    task."""
    owner = owner or worker_id()
    while True:
        waiting = waiting_in_order()
        if not waiting:
            return None
        servers, full = role_servers(), set()
        for run in waiting:
            server = servers.get(run.role) if run.role else None
            if server is not None:
                if server.pk in full:
                    continue
                if slot_claim(server=server, run_id=run.pk, owner=owner) is None:
                    full.add(server.pk)
                    continue
            claimed = _admitted(run, owner, server)
            if claimed is not None:
                return _run_admitted(claimed, owner, True)
        time.sleep(POLL_S)


def _run_admitted(run: StageRun, owner: str, enqueue_next: bool) -> StageRun:
    """Run the claimed attempt ``run`` (its slot held) to its end, free the slot and set the job's status."""
    if enqueue_next:
        stage_watch_schedule(run)
    spec = STAGES[run.stage]
    cancel = threading.Event()
    heartbeat = _Heartbeat(run.pk, owner, cancel)
    heartbeat.start()
    started = time.monotonic()
    generation = None
    status, reason, error = StageStatus.FAILED, "", ""
    try:
        if run.job.cancel_requested:
            raise Cancelled("The job was cancelled.")
        if spec.role is not None:
            generation = _generate(run, spec, owner, cancel)
        prepared = prepare_result(run, generation)
        with transaction.atomic():
            status, reason = apply_result(run, generation, prepared)
            _finish(run, owner, status, reason, "", generation, started)
    except Cancelled:
        status = StageStatus.CANCELLED if not heartbeat.lost else StageStatus.INTERRUPTED
        error = "Cancelled by a user." if not heartbeat.lost else "This worker lost its lease."
        _finish(run, owner, status, "", error, generation, started)
    except (ServerUnavailable, ServerLoading) as failure:
        status, error = _wait_or_fail(run, owner, failure, started, enqueue_next)
    except (ModelServerError, StageFailed) as failure:
        error = str(failure)
        # A truncated answer keeps its token counts in the record: they show how much the server read.
        generation = getattr(failure, "generation", generation)
        _finish(run, owner, StageStatus.FAILED, "", error, generation, started,
                output=getattr(failure, "partial_text", "") or getattr(failure, "raw_text", ""))
    except Exception as failure:  # a stage must end with a status and a reason, whatever went wrong
        logger.exception("stage %s failed", run.pk)
        error = f"The stage stopped on an internal error: {failure}"
        _finish(run, owner, StageStatus.FAILED, "", error, generation, started)
    finally:
        heartbeat.stopping.set()
        heartbeat.join(timeout=5)
        slot_release(run_id=run.pk, owner=owner)
    run.refresh_from_db()
    if run.lease_owner == owner:
        _advance(run, enqueue_next)
    return run


def _finish(run: StageRun, owner: str, status: str, reason: str, error: str, generation, started: float,
            output: str | None = None) -> bool:
    fields = {"status": status, "reason": reason, "error": error, "finished_at": timezone.now(),
              "duration_ms": round((time.monotonic() - started) * 1000, 1), "lease_expires_at": None}
    if generation is not None:
        if status == StageStatus.DONE and generation.finish_reason == "length" and not reason:
            fields["reason"] = (f"The answer stopped at this stage's budget of {run.sampling.get('max_tokens')} "
                                "tokens and may be cut off.")
        fields.update(output=generation.text, parsed=generation.parsed if generation.parsed is not None else None,
                      prompt_tokens=generation.prompt_tokens, completion_tokens=generation.completion_tokens,
                      decode_tok_s=generation.decode_tok_s, prompt_tok_s=generation.prompt_tok_s,
                      measured_decode_tok_s=generation.measured_decode_tok_s,
                      first_token_ms=generation.first_token_ms)
    elif output:
        fields["output"] = output
    return bool(StageRun.objects.filter(pk=run.pk, lease_owner=owner, status=StageStatus.RUNNING).update(**fields))


def _wait_or_fail(run: StageRun, owner: str, failure, started: float, enqueue_next: bool) -> tuple[str, str]:
    waits = run.waits + 1
    if waits > MAX_WAITS:
        error = (f"{failure} Gave up after waiting {MAX_WAITS} times; start the server (or assign the role to "
                 "another server) and retry this stage.")
        _finish(run, owner, StageStatus.FAILED, "", error, None, started)
        return StageStatus.FAILED, error
    delay = min(BACKOFF_S * 2 ** (waits - 1), 300)
    error = f"{failure} Trying again in {delay:.0f} s (wait {waits} of {MAX_WAITS})."
    StageRun.objects.filter(pk=run.pk, lease_owner=owner).update(
        status=StageStatus.WAITING_FOR_SERVER, waits=F("waits") + 1, error=error, lease_expires_at=None,
        retry_at=timezone.now() + timedelta(seconds=delay), duration_ms=round((time.monotonic() - started) * 1000, 1))
    if enqueue_next:
        stage_run_later(run, delay_s=delay)
    return StageStatus.WAITING_FOR_SERVER, error


def _advance(run: StageRun, enqueue_next: bool) -> None:
    """Set the job's status from this attempt's and queue the next stage after a ``done`` one."""
    job = Job.objects.get(pk=run.job_id)
    if run.status == StageStatus.FAILED:
        with transaction.atomic():
            if automatic_retry(run, enqueue=enqueue_next) is not None:
                return  # the job stays queued; the retry's note says what it changes
    if run.status != StageStatus.DONE:
        Job.objects.filter(pk=job.pk).update(status=run.status, reason=run.reason or run.error,
                                             finished_at=timezone.now() if run.status != StageStatus.WAITING_FOR_SERVER
                                             else None)
        live.job_changed(job)
        return
    following = stage_for(run.stage).next_run(job, run)
    if following is None:
        Job.objects.filter(pk=job.pk).update(status=StageStatus.DONE, reason="", finished_at=timezone.now())
        record_job_provenance(job)
        live.job_changed(job)
        return
    stage, section = following
    stage_queue(job, stage, order=run.order + 1, section=section, enqueue=enqueue_next)

