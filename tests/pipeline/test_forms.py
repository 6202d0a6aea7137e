"""The forms of the job, digest and topology pages (pipeline/forms.py, pipeline/digests/forms.py): each refusal,
the form's own or the service's, is on the field at fault, and nothing was written."""

import pytest
from django.urls import reverse

from matters.forms import ButtonForm
from matters.models import AuditEntry
from matters.validation import form_submit
from pipeline.digests.forms import DigestRequestForm
from pipeline.digests.models import ExhibitDigest
from pipeline.forms import DiscoverForm, JobContinueForm, JobFrontForm
from pipeline.job_models import Job
from pipeline.models import Host
from pipeline.stages.control import job_cancel, job_continue, job_move_to_front, job_start
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(matter, attorney):
    ExhibitFactory(matter=matter, pages=["The tenant paid $4,812.55 on March 3, 2019."])
    return job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                     enqueue=False)


def audits(matter) -> int:
    return AuditEntry.objects.filter(matter=matter).count()


def test_front_form_needs_a_reason(job):
    form = JobFrontForm({"reason": ""})
    assert not form.is_valid() and form.errors == {"reason": ["Say why this job should go ahead of the others."]}


def test_front_form_shows_a_reason_of_nothing_visible_on_the_reason(job, attorney, matter):
    before = audits(matter)
    form = JobFrontForm({"reason": "\u200b" * 12})
    form_submit(form, lambda data: job_move_to_front(job=job, user=attorney, **data))
    assert "at least 10 characters" in form.errors["reason"][0]
    assert audits(matter) == before


def test_continue_form_shows_a_short_reason_on_the_reason_and_the_page_says_it(client, job, attorney, matter):
    before = audits(matter)
    form = JobContinueForm({"reason": "go on"})
    form_submit(form, lambda data: job_continue(job=job, user=attorney, enqueue=False, **data))
    assert "Write why the job should go on" in form.errors["reason"][0]
    client.force_login(attorney)
    response = client.post(reverse("pipeline:job_continue", args=[job.pk]), {"reason": "go on"}, follow=True)
    assert "Write why the job should go on" in response.content.decode()
    job.refresh_from_db()
    assert job.gate_override_reason == "" and audits(matter) == before


def test_cancel_button_shows_the_services_refusal(client, job, attorney):
    job_cancel(job=job, user=attorney)
    job.refresh_from_db()
    status = job.status
    form = ButtonForm({})
    form_submit(form, lambda _: job_cancel(job=job, user=attorney))
    assert "it has no stage queued" in form.non_field_errors()[0]
    client.force_login(attorney)
    response = client.post(reverse("pipeline:job_cancel", args=[job.pk]), follow=True)
    assert "it has no stage queued" in response.content.decode()
    assert Job.objects.get(pk=job.pk).status == status


def test_discover_form_refuses_a_host_name_past_its_length(client, make_user):
    form = DiscoverForm({"host": "h" * 201})
    assert not form.is_valid() and "at most 200 characters" in form.errors["host"][0]
    client.force_login(make_user("olga", "operator"))
    response = client.post(reverse("pipeline:topology_discover"), {"host": "h" * 201}, follow=True)
    assert "at most 200 characters" in response.content.decode() and "Nothing was changed." in response.content.decode()
    assert not Host.objects.exists()


def test_digest_request_refused_to_an_operator_is_said_and_queues_nothing(client, matter, make_user):
    ExhibitFactory(matter=matter, pages=["The tenant paid rent."])
    operator = make_user("olga", "operator")
    matter.members.add(operator)
    assert DigestRequestForm({"again": "on"}).is_valid()
    client.force_login(operator)
    response = client.post(reverse("pipeline:digests_request", args=[matter.pk]), {"again": "on"}, follow=True)
    assert "may not ask for digests" in response.content.decode()
    assert not ExhibitDigest.objects.exists()
