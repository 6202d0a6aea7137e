"""What each stage does with its answer: write the draft, stop at the gate, store attacks, pick the plan.

:func:`apply_result` runs inside the transaction that marks its stage done, so a stage's effects and its
``done`` status are written together or not at all: a worker killed in between leaves nothing half-done to
duplicate. What only reads, the verifier's checks, runs before it in :func:`prepare_result`: on SQLite a
transaction holds the database's one write lock from its first statement, and the checks read the matter's
evidence for a second or more at 50,000 pages, in a worker that yields the CPU to the web server; every page
view's audit entry waited for them.
"""

import json

from matters.drafts.services import (
    draft_add_attacks,
    draft_create,
    draft_title_from,
    draft_verify,
    draft_version_create,
)
from matters.drafts.verifier.check import verify_text
from matters.models import DraftVersion, Origin
from matters.provenance import generated_record

from ..job_models import Job, JobKind, StageRun, StageStatus
from ..llm.types import Generation
from .degenerate import extraction_verdict, free_text_verdict
from .prompts import render
from .record_fields import extraction_check


class StageFailed(Exception):
    """The stage cannot go on; the message is written for an attorney. ``partial_text``: what the model had
    written when the stage stopped ('' when nothing)."""

    def __init__(self, message: str, partial_text: str = ""):
        super().__init__(message)
        self.partial_text = partial_text


_UNUSABLE = "answer cannot be used."


def unusable_answer(role: str, why: str, partial_text: str = "") -> StageFailed:
    """The failure of a stage whose model answered something that cannot be a document or a record (``why``)."""
    return StageFailed(f"The {role}'s {_UNUSABLE} {why}", partial_text=partial_text)


def answer_unusable(error: str) -> bool:
    """Whether a stage's ``error`` is :func:`unusable_answer`'s: running the stage again with the same prompt and
    sampling (greedy, or a fixed seed) brings the same answer back."""
    return f"'s {_UNUSABLE} " in error


def _provenance(run: StageRun) -> dict:
    return {"job": run.job_id, "stage": run.stage, "attempt": run.attempt, "server": run.server_name,
            "model": run.model, "board": run.board, "packet_sha256": run.packet_sha256,
            "prompt_template": run.prompt_template}


def _title(job: Job) -> str:
    kind = JobKind(job.kind).label if job.kind else "Draft"
    return draft_title_from(f"{kind}: {job.instructions}")


def _text(generation: Generation, role: str) -> str:
    text = generation.text.strip()
    if not text:
        raise StageFailed(f"The {role} returned no text (finish reason: {generation.finish_reason or 'none'}).")
    return text


def _checked_text(run: StageRun, generation: Generation) -> tuple[str, str, float]:
    """The answer of a free-text stage, the warning to show with it and its echo share; raises StageFailed for an
    answer that cannot be a document (:mod:`pipeline.stages.degenerate`). The answer is compared with the prompt's
    own words only: the evidence and the draft under revision may rightly be quoted."""
    text = _text(generation, run.role)
    job = run.job
    own = render(run.prompt_template, matter=str(job.matter), instructions=job.instructions, packet="", draft="",
                 kind_label=(job.get_kind_display() or "document").lower()) if run.prompt_template else []
    verdict = free_text_verdict(text, instructions="\n".join(m.content for m in own),
                                finish_reason=generation.finish_reason or "",
                                max_tokens=int((run.sampling or {}).get("max_tokens") or 0))
    if verdict.fail:
        raise unusable_answer(run.role, verdict.fail)
    return text, verdict.warning, verdict.echo_share


def prepare_result(run: StageRun, generation: Generation | None) -> dict:
    """Run the reading part of applying a stage's answer, outside any transaction: the verifier's checks of the
    verify stage (``{"version", "results"}``) and of the extract stage's rows (``{"items"}``); ``{}`` for the
    other stages. Raises StageFailed as :func:`apply_result` would."""
    job = run.job
    if run.stage == "verify":
        version = _draft(job).latest_version
        return {"version": version, "results": verify_text(matter=job.matter, text=version.text)}
    if run.stage == "extract" and generation is not None:
        items = (generation.parsed or {}).get("items") or []
        if isinstance(items, list) and all(isinstance(item, dict) for item in items):
            return {"items": extraction_check(matter=job.matter, items=items)}
    return {}


def apply_result(run: StageRun, generation: Generation | None, prepared: dict) -> tuple[str, str]:
    """Apply a finished stage's answer with what :func:`prepare_result` read for it; return the stage's final
    status and reason (``done`` or ``stopped``). Raises StageFailed when the answer cannot be used."""
    job = run.job
    stage = run.stage
    if stage == "router":
        kind = (generation.parsed or {}).get("kind")
        if kind not in JobKind.values:
            raise StageFailed(f"The router answered {kind!r}, which is not a job kind.")
        Job.objects.filter(pk=job.pk).update(kind=kind)
        job.kind = kind
        return StageStatus.DONE, ""
    if stage == "gate":
        verdict = generation.parsed or {}
        if not verdict.get("has_grounds"):
            reasons = "; ".join(str(r) for r in verdict.get("reasons") or []) or "The gate found no grounds."
            return StageStatus.STOPPED, reasons
        return StageStatus.DONE, ""
    if stage in ("draft", "summarize"):
        text, warning, echo = _checked_text(run, generation)
        version = draft_create(matter=job.matter, title=_title(job), text=text,
                               author_kind="model", kind=job.kind, model_name=run.model, server_name=run.server_name,
                               provenance=_provenance(run) | {"prompt_echo_share": echo})
        Job.objects.filter(pk=job.pk).update(draft=version.draft)
        job.draft = version.draft
        return StageStatus.DONE, warning
    if stage == "revise":
        text, warning, echo = _checked_text(run, generation)
        draft_version_create(draft=_draft(job), text=text, author_kind="model", model_name=run.model,
                             server_name=run.server_name, provenance=_provenance(run) | {"prompt_echo_share": echo})
        return StageStatus.DONE, warning
    if stage == "verify":
        findings = draft_verify(version=prepared["version"], results=prepared["results"])
        counts: dict[str, int] = {}
        for finding in findings:
            counts[finding.status] = counts.get(finding.status, 0) + 1
        StageRun.objects.filter(pk=run.pk).update(parsed={"findings": counts, "blocking": sum(
            f.blocking for f in findings)})
        return StageStatus.DONE, ""
    if stage == "review":
        draft_add_attacks(version=_draft(job).latest_version, attacks=(generation.parsed or {}).get("attacks", []))
        return StageStatus.DONE, ""
    if stage == "extract":
        items = (generation.parsed or {}).get("items") or []
        verdict = extraction_verdict(items, finish_reason=generation.finish_reason or "",
                                     max_tokens=int((run.sampling or {}).get("max_tokens") or 0))
        if verdict.fail:
            raise unusable_answer(run.role, verdict.fail)
        # Each row verified like a draft's claim; the statuses are stored with the answer and shown in its table.
        items = prepared["items"] if "items" in prepared else extraction_check(matter=job.matter, items=items)
        if generation.parsed is not None:
            generation.parsed["items"] = items
        unsupported = sum(1 for item in items if item["status"] != "grounded")
        warning = " ".join(w for w in (verdict.warning, f"{unsupported} of {len(items)} rows are not shown "
                                       "on their source page; see each row's status." if unsupported else "") if w)
        generated_record(matter=job.matter, origin=Origin.EXTRACTION, title=f"Extraction for job {job.pk}",
                         text=json.dumps(generation.parsed, ensure_ascii=False))
        return StageStatus.DONE, warning
    raise StageFailed(f"Unknown stage {stage!r}.")


def _draft(job: Job):
    if job.draft_id is None:
        raise StageFailed("This job has no draft yet: its draft stage did not finish.")
    return job.draft


def record_job_provenance(job: Job) -> None:
    """Write every stage's record (server, model, board, packet hash, tokens, tok/s) into the provenance of the
    last version the job's models wrote, so an approval of the draft logs the whole job that produced it."""
    if job.draft_id is None:
        return
    version = job.draft.versions.filter(author_kind="model").order_by("-number").first()
    if version is None:
        return
    stages = [{**run.as_json(), "model": run.model, "board": run.board, "packet_sha256": run.packet_sha256,
               "attempt": run.attempt} for run in job.current_runs()]
    DraftVersion.objects.filter(pk=version.pk).update(provenance={**version.provenance, "stages": stages})
