"""What each stage does with its answer: write the draft, stop at the gate, store attacks, pick the plan.

Each function runs inside the transaction that marks its stage done, so a stage's effects and its ``done``
status are written together or not at all: a worker killed in between leaves nothing half-done to duplicate.
"""

import json

from matters.drafts import draft_add_attacks, draft_create, draft_title_from, draft_verify, draft_version_create
from matters.models import Origin
from matters.provenance import generated_record

from ..job_models import Job, JobKind, StageRun, StageStatus
from ..llm.types import Generation


class StageFailed(Exception):
    """The stage cannot go on; the message is written for an attorney."""


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


def apply_result(run: StageRun, generation: Generation | None) -> tuple[str, str]:
    """Apply a finished stage's answer; return the stage's final status and reason (``done`` or ``stopped``).
    Raises StageFailed when the answer cannot be used."""
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
        version = draft_create(matter=job.matter, title=_title(job), text=_text(generation, run.role),
                               author_kind="model", kind=job.kind, model_name=run.model, server_name=run.server_name,
                               provenance=_provenance(run))
        Job.objects.filter(pk=job.pk).update(draft=version.draft)
        job.draft = version.draft
        return StageStatus.DONE, ""
    if stage == "revise":
        draft_version_create(draft=_draft(job), text=_text(generation, run.role), author_kind="model",
                             model_name=run.model, server_name=run.server_name, provenance=_provenance(run))
        return StageStatus.DONE, ""
    if stage == "verify":
        findings = draft_verify(version=_draft(job).latest_version)
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
        generated_record(matter=job.matter, origin=Origin.EXTRACTION, title=f"Extraction for job {job.pk}",
                         text=json.dumps(generation.parsed, ensure_ascii=False))
        return StageStatus.DONE, ""
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
    from matters.models import DraftVersion

    version = job.draft.versions.filter(author_kind="model").order_by("-number").first()
    if version is None:
        return
    stages = [{**run.as_json(), "model": run.model, "board": run.board, "packet_sha256": run.packet_sha256,
               "attempt": run.attempt} for run in job.current_runs()]
    DraftVersion.objects.filter(pk=version.pk).update(provenance={**version.provenance, "stages": stages})
