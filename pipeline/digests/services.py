"""Queueing and making exhibit digests (the summarizer role, on the ``models`` queue).

Who queues a digest: the periodic sweep (:func:`digests_schedule`, every ``LAWDESK_EMBED_SWEEP_S`` beside the
embedding sweep) for every ready evidence exhibit of an open matter that has none under the current key, so an
exhibit is digested within that time of becoming ready (``matters`` never imports ``pipeline``, so ingest cannot
call here); the ``digest_exhibits`` command and the matter's digest page for a backfill or a failed digest.

The cache (:class:`~pipeline.digests.models.ExhibitDigest`): one row per ``(sha256, prompt template, model)``.
A ``done`` row is never made again; a ``failed`` one is made again only when a person asks. A ``running`` row
whose worker died (started more than :data:`STALE_S` ago) is queued again by the sweep. The exhibit itself is
never changed by a digest, whatever happens to it.
"""

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from matters.audit.services import audit_record
from matters.leases import enqueue_unless_waiting
from matters.models import Exhibit, Matter
from matters.permissions import require
from matters.selectors import evidence_exhibits
from pipeline.tasks import digest_exhibit as digest_exhibit_task
from pipeline.tasks import sweep_digests

from ..llm.client import ModelClient
from ..llm.errors import ContextOverflow, ModelServerError, SchemaError, ServerLoading, ServerUnavailable
from ..models import ModelServer, Role, RoleAssignment
from ..packet import DATA_CLOSE, DATA_OPEN, PROMPT_PREAMBLE
from ..stages.prompts import render
from .cites import ON_PAGE, facts_check
from .models import ExhibitDigest
from .schema import DIGEST_MAX_TOKENS, digest_problem, digest_schema

logger = logging.getLogger(__name__)

DIGEST_TEMPLATE = "digest.v1.txt"
# A request may stall this long between tokens before the server counts as stalled (seconds).
READ_TIMEOUT_S = 300.0
# A running digest whose worker has not finished it in this many seconds is taken to be lost and queued again.
STALE_S = 1800
# Waits for a summarizer that is down or loading: the first in seconds, doubling, and how many before ``failed``.
BACKOFF_S = 60
MAX_WAITS = 3
# Characters of page text per token of context (the client's conservative estimate), and the tokens the prompt's
# own words and the chat template take.
_CHARS_PER_TOKEN = 3
_PROMPT_OVERHEAD_TOKENS = 700


def summarizer_server() -> ModelServer | None:
    """The enabled, in-service server holding the summarizer role, or None."""
    assignment = RoleAssignment.objects.select_related("server").filter(role=Role.SUMMARIZER).first()
    if assignment is None or not assignment.server.enabled or assignment.server.out_of_service_reason:
        return None
    return assignment.server


def _no_server_reason() -> str:
    return ("No enabled model server holds the summarizer role, so no digest can be made. Assign the role in "
            "the topology admin.")


def _model_of(server: ModelServer) -> str:
    # The model name the server is asked for; a server that takes none (one model loaded) goes by its own name.
    return server.model_name or server.name


def digest_key(exhibit: Exhibit, server: ModelServer) -> dict:
    """The cache key of ``exhibit``'s digest by ``server``: ``{"sha256", "prompt_template", "model"}``."""
    return {"sha256": exhibit.sha256, "prompt_template": DIGEST_TEMPLATE, "model": _model_of(server)}


def _is_evidence(exhibit: Exhibit) -> bool:
    return evidence_exhibits(exhibit.matter).filter(pk=exhibit.pk).exists()


def digest_queue(*, exhibit: Exhibit, again: bool = False, enqueue: bool = True) -> ExhibitDigest:
    """Queue the digest of ``exhibit`` under the current summarizer's key unless it is done or on its way; with
    ``again``, a ``failed`` one is queued again. ``enqueue``: queue its task when the transaction commits (False
    when the caller makes it itself, as ``digest_exhibits --wait`` does). Returns the cache row. Raises
    ValidationError for an exhibit that is not ready evidence, or when no server holds the summarizer role."""
    if not _is_evidence(exhibit):
        raise ValidationError(f"{exhibit.display_label} is not ready evidence, so it is not digested.")
    server = summarizer_server()
    if server is None:
        raise ValidationError(_no_server_reason())
    row, created = ExhibitDigest.objects.get_or_create(**digest_key(exhibit, server),
                                                       defaults={"exhibit": exhibit})
    stale = (row.status == ExhibitDigest.Status.RUNNING and row.started_at is not None
             and row.started_at < timezone.now() - timedelta(seconds=STALE_S))
    retry = again and row.status == ExhibitDigest.Status.FAILED
    if not (created or stale or retry):
        return row
    ExhibitDigest.objects.filter(pk=row.pk).update(status=ExhibitDigest.Status.QUEUED, reason="", attempts=0,
                                                   exhibit=exhibit)
    row.refresh_from_db()
    if enqueue:
        transaction.on_commit(lambda: digest_exhibit_task.enqueue(exhibit_id=exhibit.pk))
    return row


def matter_digests_queue(*, matter: Matter, again: bool = False) -> int:
    """Queue the digest of every ready evidence exhibit of ``matter`` still without one (with ``again``, failed
    ones too); return how many were queued. Raises ValidationError when no server holds the summarizer role."""
    server = summarizer_server()
    if server is None:
        raise ValidationError(_no_server_reason())
    queued = 0
    for exhibit in evidence_exhibits(matter).order_by("label_seq", "pk"):
        before = ExhibitDigest.objects.filter(**digest_key(exhibit, server)).values_list("status", flat=True).first()
        row = digest_queue(exhibit=exhibit, again=again)
        queued += row.status == ExhibitDigest.Status.QUEUED and before != ExhibitDigest.Status.QUEUED
    return queued


def digests_schedule() -> int:
    """Queue the digest of every ready evidence exhibit of every open matter with no digest under the current
    key, and again those whose worker was lost; return how many were queued. Nothing without a summarizer."""
    server = summarizer_server()
    if server is None:
        return 0
    known = ExhibitDigest.objects.filter(prompt_template=DIGEST_TEMPLATE, model=_model_of(server))
    stale = set(known.filter(status=ExhibitDigest.Status.RUNNING,
                             started_at__lt=timezone.now() - timedelta(seconds=STALE_S)).values_list("sha256",
                                                                                                    flat=True))
    queued = 0
    for matter in Matter.objects.filter(status=Matter.Status.OPEN, purged_at__isnull=True):
        seen: set[str] = set()
        for exhibit in evidence_exhibits(matter).exclude(sha256__in=known.exclude(sha256__in=stale).values(
                "sha256")).order_by("label_seq", "pk"):
            if exhibit.sha256 in seen:
                continue
            seen.add(exhibit.sha256)
            digest_queue(exhibit=exhibit)
            queued += 1
    return queued


def _pages_for(exhibit: Exhibit, budget_chars: int) -> dict[int, str]:
    """The exhibit's first pages whose text fits ``budget_chars`` (page number -> text); at least its first
    page, cut to the budget."""
    given: dict[int, str] = {}
    used = 0
    for number, text in exhibit.pages.order_by("number").values_list("number", "text"):
        cost = len(text) + 80
        if given and used + cost > budget_chars:
            break
        given[number] = text[:budget_chars] if not given else text
        used += cost
    return given


def _messages(exhibit: Exhibit, pages: dict[int, str]):
    fenced = [PROMPT_PREAMBLE] + [
        f"{DATA_OPEN} exhibit=\"{exhibit.display_label}\" page={number}>>>\n{text.replace('<<<', '‹‹‹')}\n"
        f"{DATA_CLOSE}>>>" for number, text in pages.items()]
    context = {"label": exhibit.display_label, "title": exhibit.title, "page_count": exhibit.page_count,
               "pages_read": len(pages)}
    return render(DIGEST_TEMPLATE, packet="\n\n".join(fenced), **context), render(DIGEST_TEMPLATE, packet="",
                                                                                 **context)


def _claim(row: ExhibitDigest) -> bool:
    return bool(ExhibitDigest.objects.filter(pk=row.pk, status=ExhibitDigest.Status.QUEUED).update(
        status=ExhibitDigest.Status.RUNNING, started_at=timezone.now(), attempts=row.attempts + 1))


def _end(row: ExhibitDigest, status: str, reason: str, started: float, **fields) -> ExhibitDigest:
    ExhibitDigest.objects.filter(pk=row.pk).update(status=status, reason=reason, finished_at=timezone.now(),
                                                   duration_ms=round((time.monotonic() - started) * 1000, 1),
                                                   **fields)
    row.refresh_from_db()
    return row


def digest_make(*, exhibit_id: int) -> ExhibitDigest | None:
    """Make the digest of one exhibit (the task body): ask the summarizer for it, check it, store it. Returns the
    cache row (``done`` or ``failed`` with ``reason``; ``queued`` again while its server is down or loading), or
    None when the exhibit is gone or no longer evidence. A ``done`` row under the current key is returned as it
    is, without a request (the cache), whichever matter's exhibit made it."""
    exhibit = Exhibit.objects.select_related("matter").filter(pk=exhibit_id).first()
    if exhibit is None or not _is_evidence(exhibit):
        return None
    server = summarizer_server()
    if server is None:
        logger.warning("digest of exhibit %s not made: %s", exhibit_id, _no_server_reason())
        return None
    row, _ = ExhibitDigest.objects.get_or_create(**digest_key(exhibit, server), defaults={"exhibit": exhibit})
    if row.status != ExhibitDigest.Status.QUEUED or not _claim(row):
        return row
    row.refresh_from_db()
    started = time.monotonic()
    client = ModelClient(server.client_config(), read_timeout_s=READ_TIMEOUT_S, loading_wait_s=10)
    sampling = server.sampling_for(DIGEST_MAX_TOKENS)
    fields = {"server_name": server.name, "page_count": exhibit.page_count, "exhibit": exhibit}
    try:
        context = client.context_tokens() or 4096
        budget = max(1000, (context - DIGEST_MAX_TOKENS - _PROMPT_OVERHEAD_TOKENS) * _CHARS_PER_TOKEN)
        for _ in range(4):
            pages = _pages_for(exhibit, budget)
            messages, own_words = _messages(exhibit, pages)
            try:
                generation = client.generate(messages, sampling=sampling, schema=digest_schema(len(pages)))
                break
            except ContextOverflow as overflow:
                budget = int(budget * overflow.context_tokens / overflow.needed_tokens * 0.9)
                if budget < 500:
                    raise
        else:
            raise ContextOverflow("The exhibit's first page could not be cut to fit the summarizer's context.",
                                  needed_tokens=0, context_tokens=context)
    except (ServerUnavailable, ServerLoading) as failure:
        return _wait_or_fail(row, exhibit, failure, started, fields)
    except SchemaError as failure:
        return _end(row, ExhibitDigest.Status.FAILED,
                    f"The summarizer's answer is not a digest: {failure}. It was asked once to repair it.",
                    started, output=failure.raw_text, **fields)
    except ModelServerError as failure:
        return _end(row, ExhibitDigest.Status.FAILED, f"The summarizer could not digest this exhibit: {failure}",
                    started, output=failure.partial_text, **fields)
    finally:
        client.close()
    fields |= {"output": generation.text, "prompt_tokens": generation.prompt_tokens,
               "completion_tokens": generation.completion_tokens, "pages_read": len(pages)}
    if generation.truncated:
        return _end(row, ExhibitDigest.Status.FAILED, f"{server.name} cut the prompt, so the digest does not rest "
                    "on the pages sent.", started, **fields)
    problem = digest_problem(generation.parsed, instructions="\n".join(m.content for m in own_words))
    if problem:
        return _end(row, ExhibitDigest.Status.FAILED, problem, started, **fields)
    facts = facts_check(generation.parsed.get("key_facts") or [], pages)
    return _end(row, ExhibitDigest.Status.DONE, _warning(facts, len(pages), exhibit.page_count), started,
                digest=generation.parsed, facts=facts, **fields)


def _warning(facts: list[dict], pages_read: int, page_count: int) -> str:
    notes = []
    flagged = sum(1 for fact in facts if fact["status"] != ON_PAGE)
    if flagged:
        notes.append(f"{flagged} of {len(facts)} key facts are not borne out by the page they cite")
    if pages_read < page_count:
        notes.append(f"only pages 1 to {pages_read} of {page_count} fitted the summarizer's context")
    return ("Check this digest: " + "; ".join(notes) + ".") if notes else ""


def _wait_or_fail(row: ExhibitDigest, exhibit: Exhibit, failure, started: float, fields: dict) -> ExhibitDigest:
    if row.attempts > MAX_WAITS:
        return _end(row, ExhibitDigest.Status.FAILED, f"{failure} Gave up after {MAX_WAITS} waits; start the "
                    "server and digest again.", started, **fields)
    delay = BACKOFF_S * 2 ** (row.attempts - 1)
    ExhibitDigest.objects.filter(pk=row.pk).update(status=ExhibitDigest.Status.QUEUED,
                                                   reason=f"{failure} Trying again in {delay} s.")
    transaction.on_commit(lambda: digest_exhibit_task.using(
        run_after=timezone.now() + timedelta(seconds=delay)).enqueue(exhibit_id=exhibit.pk))
    row.refresh_from_db()
    return row


def digests_sweep_schedule(*, interval_s: int | None = None) -> bool:
    """Queue the periodic digest sweep ``interval_s`` seconds from now (default ``LAWDESK_EMBED_SWEEP_S``, the
    embedding sweep's period) unless one is already waiting; it queues its own next run, so one call starts the
    cycle."""
    if interval_s is None:
        interval_s = settings.LAWDESK_EMBED_SWEEP_S
    return enqueue_unless_waiting(sweep_digests, after_s=interval_s, interval_s=interval_s)


def digests_request(*, matter: Matter, user, exhibit: Exhibit | None = None, again: bool = False) -> int:
    """A person asks for digests: of ``exhibit``, or of every ready evidence exhibit of ``matter`` still without
    one; with ``again``, failed ones are made again. Recorded in the matter's audit chain (``digest.request``).
    Returns how many were queued. Raises PermissionDenied for a user who may not start jobs in the matter
    (``request_digests`` in :mod:`matters.permissions`), ValidationError as :func:`digest_queue`."""
    require(user, "request_digests", matter)
    if exhibit is not None:
        server = summarizer_server()
        before = ExhibitDigest.objects.filter(**digest_key(exhibit, server)).values_list(
            "status", flat=True).first() if server is not None else None
        row = digest_queue(exhibit=exhibit, again=again)
        queued = int(row.status == ExhibitDigest.Status.QUEUED and before != ExhibitDigest.Status.QUEUED)
    else:
        queued = matter_digests_queue(matter=matter, again=again)
    audit_record(action="digest.request", actor=user, matter=matter, obj=exhibit or matter,
                 detail={"again": again, "queued": queued})
    return queued
