"""Jobs given hostile or out-of-turn requests: exhibit ids no row can have, and a cancel of a job that has ended.
Each gets a message; none is a 500, and none rewrites what a job did."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from matters.models import AuditEntry
from pipeline.job_models import Job
from pipeline.stages.control import job_cancel, job_start
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

pytestmark = pytest.mark.django_db

HUGE = 10**20  # past any database integer key


def test_an_exhibit_id_past_any_key_is_refused_with_a_message(client, matter, record, attorney):
    with pytest.raises(ValidationError, match="not ready evidence"):
        job_start(matter=matter, kind="summary", instructions="Summarize.", exhibits=[record["lease"].pk, HUGE],
                  enqueue=False)
    with pytest.raises(CommandError, match="not ready evidence"):
        call_command("run_job", "--matter", str(matter.pk), "--instructions", "Summarize.", "--exhibit", str(HUGE))
    client.force_login(attorney)
    page = client.post(reverse("pipeline:jobs", args=[matter.pk]), {
        "kind": "summary", "instructions": "Summarize.", "exhibits": [str(HUGE)]})
    assert page.status_code == 200 and b"not ready evidence of this matter" in page.content
    assert not Job.objects.exists()


def test_cancelling_a_job_that_has_ended_says_so_and_leaves_it_as_it_ended(client, matter, record, server, attorney):
    stage_server(server)
    register(server.url)
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", enqueue=False)
    run_all(job)
    assert job.status == "done"
    with pytest.raises(ValidationError, match="nothing to cancel"):
        job_cancel(job=job, user=attorney)
    client.force_login(attorney)
    page = client.post(reverse("pipeline:job_cancel", args=[job.pk]), follow=True)
    assert page.status_code == 200 and b"nothing to cancel" in page.content
    job.refresh_from_db()
    assert job.status == "done" and not job.cancel_requested
    assert not AuditEntry.objects.filter(matter=matter, action="job.cancel").exists()
