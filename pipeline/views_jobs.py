"""Pages for jobs: start one from a matter, watch its stages live, cancel, retry, continue past the gate, go on
without a failed revision.

Thin: each view checks membership (the ethical wall: a non-member gets 404), calls a service in
:mod:`pipeline.stages.control`, and renders. A stage never runs here; workers run them.
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from matters.forms import ButtonForm
from matters.permissions import require
from matters.selectors import evidence_exhibits, matter_for_user, matters_for_user
from matters.validation import form_error_messages, form_refusal, form_submit

from .forms import JobContinueForm, JobFrontForm, JobStartForm, StageSkipForm
from .job_models import Job, JobKind, StageRun, StageStatus
from .stages.control import (
    job_actions,
    job_cancel,
    job_continue,
    job_move_to_front,
    job_start,
    stage_retry,
    stage_skip,
)
from .stages.queue import queue_place
from .stages.registry import stage_shows_records


def job_for_user(user, job_id: int) -> Job:
    """The job if ``user`` is a member of its matter; Http404 otherwise."""
    job = Job.objects.select_related("matter", "draft").filter(pk=job_id, matter__in=matters_for_user(user)).first()
    if job is None:
        raise Http404("No such job.")
    return job


def stage_rows(job: Job) -> list[dict]:
    """What the job page shows for each stage's latest attempt, live tok/s included (pieces streamed over the
    time since the attempt started, until the server's own figure arrives), for one waiting for its server its
    place in that server's queue (:class:`pipeline.stages.queue.QueuePlace`), and the attempts before it
    (``earlier``, oldest first: why each failed or stopped, so a retried stage does not hide its failures)."""
    attempts: dict[tuple[str, str], list[StageRun]] = {}
    for attempt in StageRun.objects.filter(job=job).only(
            "stage", "section", "attempt", "status", "error", "reason", "completion_tokens",
            "streamed_pieces").order_by("order", "attempt"):
        attempts.setdefault((attempt.stage, attempt.section), []).append(attempt)
    rows = []
    for run in job.current_runs():
        live_tok_s = None
        if run.status == StageStatus.RUNNING and run.started_at and run.streamed_pieces:
            elapsed = (timezone.now() - run.started_at).total_seconds()
            live_tok_s = round(run.streamed_pieces / elapsed, 1) if elapsed > 0 else None
        rows.append({"run": run, "live_tok_s": live_tok_s, "open": run.status == StageStatus.RUNNING,
                     "attempts": len(attempts.get((run.stage, run.section), [run])),
                     "earlier": [a for a in attempts.get((run.stage, run.section), []) if a.pk != run.pk],
                     "place": queue_place(run), "shows_records": stage_shows_records(run.stage)})
    with_text = [row for row in rows if row["run"].role]
    if with_text and not any(row["open"] for row in rows):
        with_text[-1]["open"] = True  # the latest output stays in view when the job has ended
    return rows


@require_http_methods(["GET", "POST"])
def job_list(request: HttpRequest, matter_id: int) -> HttpResponse:
    matter = matter_for_user(request.user, matter_id)
    if request.method == "POST":  # before the form: whoever may not start jobs does not see the form either
        require(request.user, "start_jobs", matter)
    form = JobStartForm(request.POST if request.method == "POST" else None, matter=matter)
    if form.is_valid():
        try:
            job = job_start(matter=matter, user=request.user, **form.cleaned_data)
        except ValidationError as error:
            form_refusal(form, error)
        except PermissionDenied as error:
            form.add_error(None, str(error))
        else:
            return redirect("pipeline:job", job.pk)
    chosen = set(form.cleaned_data.get("exhibits") or []) if form.is_bound else set()
    return render(request, "pipeline/jobs.html", {
        "matter": matter, "jobs": matter.jobs.select_related("created_by")[:50], "kinds": JobKind.choices,
        "exhibits": evidence_exhibits(matter).order_by("label_seq", "id"), "form": form, "chosen": chosen,
    })


@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = job_for_user(request.user, job_id)
    context = {"job": job, "matter": job.matter, "rows": stage_rows(job), "actions": job_actions(job, request.user)}
    if request.htmx:
        return render(request, "pipeline/job.html#stages", context)
    return render(request, "pipeline/job.html", context)


def _act(request: HttpRequest, job_id: int, form, action) -> HttpResponse:
    """Run ``action(job, cleaned_data)`` through ``form`` on a job of a matter the user is a member of; its
    refusals, and a refusal of who may, become the job page's messages."""
    job = job_for_user(request.user, job_id)
    try:
        form_submit(form, lambda data: action(job, data))
    except PermissionDenied as error:
        form.add_error(None, str(error))
    for message in form_error_messages(form):
        messages.error(request, message)
    return redirect("pipeline:job", job.pk)


@require_POST
def job_cancel_view(request: HttpRequest, job_id: int) -> HttpResponse:
    return _act(request, job_id, ButtonForm(request.POST), lambda job, _: job_cancel(job=job, user=request.user))


@require_POST
def stage_retry_view(request: HttpRequest, job_id: int) -> HttpResponse:
    return _act(request, job_id, ButtonForm(request.POST), lambda job, _: stage_retry(job=job, user=request.user))


@require_POST
def job_continue_view(request: HttpRequest, job_id: int) -> HttpResponse:
    return _act(request, job_id, JobContinueForm(request.POST),
                lambda job, data: job_continue(job=job, user=request.user, reason=data["reason"]))


@require_POST
def stage_skip_view(request: HttpRequest, job_id: int) -> HttpResponse:
    return _act(request, job_id, StageSkipForm(request.POST),
                lambda job, data: stage_skip(job=job, user=request.user, reason=data["reason"]))


@require_POST
def job_front_view(request: HttpRequest, job_id: int) -> HttpResponse:
    return _act(request, job_id, JobFrontForm(request.POST),
                lambda job, data: job_move_to_front(job=job, user=request.user, reason=data["reason"]))
