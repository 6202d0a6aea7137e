"""A revision whose every attempt failed (the embedded model looped on it three times in a newcomer's motion) need not
end the job: an attorney may go on without it, with a reason. The draft stays as the sections wrote it, the
verifier, the reviewer and the extractor run on it, and the attempt, the reason and who gave it are recorded. No
other stage, and no job without a draft, is offered it."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from matters.drafts.services import draft_approve
from matters.models import AuditEntry
from matters.services import matter_add_member
from pipeline.job_models import StageRun
from pipeline.stages.control import job_actions, job_start, stage_retry, stage_skip
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

from .test_stream_degenerate import LOOPING, streamed

pytestmark = pytest.mark.django_db

OFFER = "Go on without the revision: the draft stands as written before it, section by section."


def test_a_motion_whose_revision_keeps_looping_goes_on_without_it_on_an_attorneys_reason(
        matter, record, server, attorney, make_user, client):
    stage_server(server, {"revise": lambda call: streamed(LOOPING)})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.", user=attorney,
                    enqueue=False)
    runs = run_all(job)
    assert (runs[-1].stage, runs[-1].status, job.status) == ("revise", "failed", "failed")
    recorded = StageRun.objects.filter(job=job).count()
    drafted = job.draft.latest_version
    assistant = make_user("bob", "assistant")
    matter_add_member(matter=matter, user=assistant, added_by=attorney)
    assert job_actions(job, attorney).skip_label == OFFER and job_actions(job, attorney).retry
    assert job_actions(job, assistant).skip_label == ""  # an attorney's decision, as going past the gate is

    client.force_login(attorney)
    url = reverse("pipeline:job", args=[job.pk])
    assert f"{OFFER} The verifier still checks it. Go on, because:" in client.get(url).content.decode()
    refused = client.post(reverse("pipeline:stage_skip", args=[job.pk]), {"reason": "  "}, follow=True)
    assert "why the job should go on without this stage" in refused.content.decode().lower()
    assert StageRun.objects.filter(job=job).count() == recorded  # nothing recorded, nothing queued
    client.force_login(assistant)
    client.post(reverse("pipeline:stage_skip", args=[job.pk]), {"reason": "I want it done."})
    assert StageRun.objects.filter(job=job).count() == recorded

    client.force_login(attorney)
    client.post(reverse("pipeline:stage_skip", args=[job.pk]),
                {"reason": "The sections read well; I will edit them myself."})
    runs = run_all(job)
    job.refresh_from_db()
    assert job.status == "done", [(r.stage, r.status, r.error) for r in runs]
    revisions = list(StageRun.objects.filter(job=job, stage="revise").order_by("attempt"))
    # The first attempt and the runner's own retry of it looped; the attorney went on without a third.
    assert [(r.attempt, r.status) for r in revisions] == [(1, "failed"), (2, "failed"), (3, "done")]
    assert revisions[1].retry_change["automatic"] is True
    assert revisions[2].reason == ("Not run: alice went on without it after attempt 2 failed, because: The sections "
                                   "read well; I will edit them myself.")
    assert revisions[2].prompt == [] and revisions[2].output == ""  # no model was asked
    assert [r.status for r in StageRun.objects.filter(job=job, stage__in=("verify", "review", "extract"))] == [
        "done", "done", "done"]
    assert job.draft.latest_version.pk == drafted.pk  # the sections' document, as they wrote it
    assert drafted.findings.exists()  # and checked by the verifier
    entry = AuditEntry.objects.get(action="job.skip_stage")
    assert entry.detail["stage"] == "revise" and entry.detail["failed_attempt"] == 2
    assert "degenerate" in entry.detail["error"] and entry.actor == attorney.username
    assert job_actions(job, attorney).skip_label == ""


def test_only_a_failed_revision_of_a_job_with_a_draft_is_offered(matter, record, server, attorney):
    stage_server(server, {"summarize": lambda call: streamed(LOOPING)})
    register(server.url)
    summary = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                        enqueue=False)
    assert run_all(summary)[-1].status == "failed" and summary.draft_id is None
    assert job_actions(summary, attorney).skip_label == ""
    with pytest.raises(ValidationError, match="Only a failed revision"):
        stage_skip(job=summary, user=attorney, reason="The draft is good enough as it stands.", enqueue=False)

    stage_server(server, {"section": lambda call: streamed(LOOPING)})
    motion = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.",
                       user=attorney, enqueue=False)
    assert run_all(motion)[-1].stage == "section"
    assert job_actions(motion, attorney).skip_label.startswith("Go on without this section")
    stage_retry(job=motion, user=attorney, enqueue=False)
    assert job_actions(motion, attorney).skip_label == ""  # queued again: nothing failed to go on without


def test_a_section_the_drafter_cannot_write_is_left_as_a_marked_gap_and_the_motion_goes_on(
        matter, record, server, attorney):
    # The newcomer's conclusion looped on six attempts in a row, at every budget and penalty a retry sets.
    stage_server(server, {"section": lambda call: streamed(LOOPING) if call in (2, 3) else
                          "The lease was signed on March 3, 2021. SMITH000001."})
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.", user=attorney,
                    enqueue=False)
    register(server.url)
    runs = run_all(job)
    failed = runs[-1]
    assert (failed.stage, failed.section, failed.status, failed.attempt) == (
        "section", "03-statement_of_facts", "failed", 2)  # the runner's own retry looped too
    stage_skip(job=job, user=attorney, reason="I will write the facts myself.", enqueue=False)
    runs = run_all(job)
    job.refresh_from_db()
    assert job.status == "done", [(r.stage, r.section, r.status, r.error) for r in runs]
    gap = StageRun.objects.get(job=job, section="03-statement_of_facts", attempt=3)
    assert gap.status == "done" and gap.parsed["missing"] and gap.parsed["skipped"] and gap.prompt == []
    text = job.draft.latest_version.text
    facts = text[text.index("Statement of facts"):text.index("The landlord must repair the roof")]
    assert "[NOT WRITTEN: the drafter's answers for this section could not be used" in facts
    assert "alice went on without it" in facts and "Write this section yourself" in facts
    # The sections after it were drafted, and the document is whole around the gap.
    assert [r.status for r in runs if r.stage == "section"] == ["done"] * 4
    assert "Conclusion" in text and "Respectfully submitted" in text
    sections = job.draft.versions.order_by("number").first().provenance["sections"]
    assert next(s for s in sections if s["key"] == "03-statement_of_facts")["missing"] is True
    assert AuditEntry.objects.get(action="job.skip_stage").detail["stage"] == "section"
    # The gap is the attorney's to fill: the version holding it is not approved as it stands.
    with pytest.raises(ValidationError, match="still holds a section LawDesk could not write"):
        draft_approve(version=job.draft.latest_version, user=attorney, read_confirmed=True)
