"""What the stages share in using a model's answer: the failure of an unusable answer, the checked text of a
free-text answer, the provenance a version records, the job's draft. Each stage's own use of its answer is its
stage object's (:mod:`pipeline.stages.kinds`)."""


from matters.drafts.services import (
    draft_title_from,
)
from matters.models import DraftVersion

from ..job_models import Job, JobKind, StageRun
from ..llm.types import Generation
from .degenerate import free_text_verdict
from .prompts import render


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


def run_provenance(run: StageRun) -> dict:
    """What a version written by this attempt records of where it came from."""
    return {"job": run.job_id, "stage": run.stage, "attempt": run.attempt, "server": run.server_name,
            "model": run.model, "board": run.board, "packet_sha256": run.packet_sha256,
            "prompt_template": run.prompt_template}


def job_title(job: Job) -> str:
    """A draft title from the job's kind and request."""
    kind = JobKind(job.kind).label if job.kind else "Draft"
    return draft_title_from(f"{kind}: {job.instructions}")


def _text(generation: Generation, role: str) -> str:
    text = generation.text.strip()
    if not text:
        raise StageFailed(f"The {role} returned no text (finish reason: {generation.finish_reason or 'none'}).")
    return text


def checked_text(run: StageRun, generation: Generation) -> tuple[str, str, float]:
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


def job_draft(job: Job):
    """The draft the job wrote; StageFailed before its drafting stage finished."""
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
    stages = [{**run.as_json(), "section": run.section, "model": run.model, "board": run.board,
               "packet_sha256": run.packet_sha256, "attempt": run.attempt} for run in job.current_runs()]
    DraftVersion.objects.filter(pk=version.pk).update(provenance={**version.provenance, "stages": stages})
