"""A job's due time (Job.due_at) from one of the matter's saved deadlines or as entered, set by the job-start
service and shown on the job pages."""

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from matters.deadlines.services import deadline_save
from matters.services import matter_create
from pipeline.job_models import Job
from pipeline.stages.control import job_start

pytestmark = pytest.mark.django_db


@pytest.fixture
def opposition(matter, attorney, settings):
    settings.TIME_ZONE = "America/Chicago"
    # 2037: a year still ahead (a job's due time may not have passed already). Event Monday 2037-03-02 + 14
    # days: Monday 03-16, due at 23:59:59 CDT (UTC-5): 04:59:59 UTC on 03-17.
    return deadline_save(matter=matter, user=attorney, title="Opposition to the motion to dismiss",
                         event_date=dt.date(2037, 3, 2), period=14)


def test_a_saved_deadline_becomes_the_jobs_due_time(matter, attorney, opposition):
    job = job_start(matter=matter, instructions="Draft the opposition.", kind="motion", user=attorney,
                    deadline=opposition, enqueue=False)
    job.refresh_from_db()
    assert job.due_at == dt.datetime(2037, 3, 17, 4, 59, 59, tzinfo=dt.UTC)
    assert job.due_at == opposition.due_at


def test_a_due_time_entered_is_read_in_the_courts_time_zone(matter, attorney, settings):
    settings.TIME_ZONE = "America/Chicago"
    job = job_start(matter=matter, instructions="Summarize.", kind="summary", user=attorney, enqueue=False,
                    due_at=dt.datetime(2037, 1, 15, 17, 0))
    # 17:00 CST (UTC-6) is 23:00 UTC.
    assert job.due_at == dt.datetime(2037, 1, 15, 23, 0, tzinfo=dt.UTC)


def test_no_due_time_leaves_the_job_without_one(matter, attorney):
    job = job_start(matter=matter, instructions="Summarize.", kind="summary", user=attorney, enqueue=False)
    assert job.due_at is None


def test_both_a_deadline_and_a_due_time_are_refused(matter, attorney, opposition):
    with pytest.raises(ValidationError) as refused:
        job_start(matter=matter, instructions="Summarize.", kind="summary", user=attorney, enqueue=False,
                  deadline=opposition, due_at=dt.datetime(2037, 1, 15, 17, 0))
    assert "deadline" in refused.value.message_dict
    assert not Job.objects.exists()


def test_a_deadline_of_another_matter_is_refused(matter, attorney, opposition):
    other = matter_create(name="Doe v. Roe", created_by=attorney)
    with pytest.raises(ValidationError, match="not one of this matter's"):
        job_start(matter=other, instructions="Summarize.", kind="summary", user=attorney, enqueue=False,
                  deadline=opposition)


def test_the_start_form_takes_a_saved_deadline_and_the_job_page_shows_it(client, matter, attorney, opposition):
    client.force_login(attorney)
    page = client.get(reverse("pipeline:jobs", args=[matter.pk])).content.decode()
    assert "Opposition to the motion to dismiss: due 2037-03-16" in page
    response = client.post(reverse("pipeline:jobs", args=[matter.pk]), {
        "kind": "motion", "instructions": "Draft the opposition.", "deadline": opposition.pk})
    job = Job.objects.get()
    assert response.status_code == 302 and job.due_at == opposition.due_at
    detail = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    assert "Due: <strong>Monday, March 16, 2037, 23:59 CDT</strong>" in detail
    listing = client.get(reverse("pipeline:jobs", args=[matter.pk])).content.decode()
    assert "2037-03-16 23:59 CDT" in listing


def test_the_start_form_refuses_another_matters_deadline_on_its_field(client, matter, attorney, opposition):
    other = matter_create(name="Doe v. Roe", created_by=attorney)
    client.force_login(attorney)
    response = client.post(reverse("pipeline:jobs", args=[other.pk]), {
        "kind": "summary", "instructions": "Summarize.", "deadline": opposition.pk})
    assert response.status_code == 200 and 'id="error-deadline"' in response.content.decode()
    assert not Job.objects.exists()


def test_the_start_form_refuses_both_on_the_deadline_field(client, matter, attorney, opposition):
    client.force_login(attorney)
    response = client.post(reverse("pipeline:jobs", args=[matter.pk]), {
        "kind": "summary", "instructions": "Summarize the lease.", "deadline": opposition.pk,
        "due_at": "2037-03-10T09:00"})
    page = response.content.decode()
    assert 'id="error-deadline"' in page and "not both" in page
    assert "Summarize the lease." in page
    assert not Job.objects.exists()
