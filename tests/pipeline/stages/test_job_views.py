"""The job pages: starting a job queues its first stage for a worker (never runs it in the request); members only."""

import pytest
from django.urls import reverse

from pipeline.job_models import Job
from pipeline.stages.control import job_start

pytestmark = pytest.mark.django_db


def test_starting_a_job_from_the_page_queues_it_for_a_worker(client, matter, record, attorney,
                                                            django_capture_on_commit_callbacks):
    client.force_login(attorney)
    page = client.get(reverse("pipeline:jobs", args=[matter.pk]))
    assert page.status_code == 200 and b"Start a job" in page.content
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("pipeline:jobs", args=[matter.pk]), {
            "kind": "summary", "instructions": "Summarize the lease.", "exhibits": [record["lease"].pk]})
    job = Job.objects.get()
    assert response.status_code == 302 and response.url == reverse("pipeline:job", args=[job.pk])
    assert job.exhibits == [record["lease"].pk] and job.created_by == attorney
    assert [(r.stage, r.status) for r in job.stage_runs.all()] == [("summarize", "queued")]
    from django_tasks_db.models import DBTaskResult

    assert DBTaskResult.objects.filter(task_path="pipeline.tasks.run_stage", status="READY").count() == 1
    detail = client.get(reverse("pipeline:job", args=[job.pk]))
    assert b'ws-connect="/ws/jobs/%d/"' % job.pk in detail.content and b"summarize" in detail.content


def test_an_authority_is_not_evidence_a_job_may_be_restricted_to(client, matter, record, attorney):
    client.force_login(attorney)
    page = client.post(reverse("pipeline:jobs", args=[matter.pk]), {
        "kind": "summary", "instructions": "Summarize the opinion.", "exhibits": [record["opinion"].pk]})
    assert not Job.objects.exists()
    assert page.status_code == 200 and b"not ready evidence of this matter" in page.content


def test_non_members_get_404_for_jobs_and_job_pages(client, matter, record, attorney, make_user):
    job = job_start(matter=matter, kind="extraction", instructions="List amounts.", user=attorney, enqueue=False)
    client.force_login(make_user("mallory", "attorney", is_superuser=True, is_staff=True))
    assert client.get(reverse("pipeline:jobs", args=[matter.pk])).status_code == 404
    assert client.get(reverse("pipeline:job", args=[job.pk])).status_code == 404
    assert client.post(reverse("pipeline:job_cancel", args=[job.pk])).status_code == 404


def test_cancel_from_the_page_cancels_a_queued_job(client, matter, record, attorney):
    job = job_start(matter=matter, kind="extraction", instructions="List amounts.", user=attorney, enqueue=False)
    client.force_login(attorney)
    client.post(reverse("pipeline:job_cancel", args=[job.pk]))
    job.refresh_from_db()
    assert job.status == "cancelled" and job.stage_runs.get().status == "cancelled"


def test_a_finished_job_draws_no_empty_actions_card(client, matter, record, attorney):
    from tests.html_checks import empty_cards

    job = job_start(matter=matter, kind="extraction", instructions="List amounts.", user=attorney, enqueue=False)
    client.force_login(attorney)
    url = reverse("pipeline:job", args=[job.pk])
    assert 'class="card actions"' in client.get(url).content.decode()  # queued: Cancel is offered
    type(job).objects.filter(pk=job.pk).update(status="done")
    job.stage_runs.update(status="done")
    page = client.get(url).content.decode()
    assert 'class="card actions"' not in page and "Cancel</button>" not in page and empty_cards(page) == []
