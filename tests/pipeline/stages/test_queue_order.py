"""The queue's order (deadline, submission, aging, moved to the front), the slot claims it admits by, and what the
job page says of a run that waits."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.utils import timezone

from matters.models import AuditEntry
from pipeline.job_models import Job, ServerSlot, StageRun
from pipeline.models import GPU, Board, Host
from pipeline.stages.admission import slot_claim, slot_release, slot_renew, slots_busy
from pipeline.stages.control import job_cancel, job_move_to_front, job_start
from pipeline.stages.order import Waiting, in_queue_order
from pipeline.stages.queue import queue_place, waiting_in_order
from pipeline.stages.runner import stage_dispatch
from tests.support.jobs import register
from tests.support.scripted_server import ScriptedServer
from tests.support.stage_server import stage_server

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def names(entries):
    return [entry.ref for entry in entries]


def test_deadline_first_then_submission_and_no_deadline_last():
    entries = [Waiting(submitted_at=T0, job=1, ref="summary, no deadline"),
               Waiting(submitted_at=T0 + HOUR, job=2, due_at=T0 + 30 * HOUR, ref="motion due later"),
               Waiting(submitted_at=T0 + 2 * HOUR, job=3, due_at=T0 + 20 * HOUR, ref="motion due first"),
               Waiting(submitted_at=T0 + 3 * HOUR, job=4, due_at=T0 + 20 * HOUR, ref="same deadline, later"),
               Waiting(submitted_at=T0 + 4 * HOUR, job=5, ref="another summary")]
    ordered = in_queue_order(entries, now=T0 + 4 * HOUR, aging_s=10 * 3600)
    assert names(ordered) == ["motion due first", "same deadline, later", "motion due later",
                              "summary, no deadline", "another summary"]


def test_a_job_waiting_past_the_aging_limit_goes_ahead_of_newer_work_oldest_first():
    entries = [Waiting(submitted_at=T0, job=1, ref="old summary"),
               Waiting(submitted_at=T0 + HOUR, job=2, ref="older motion", due_at=T0 + 50 * HOUR),
               Waiting(submitted_at=T0 + 5 * HOUR, job=3, due_at=T0 + 6 * HOUR, ref="urgent motion")]
    now = T0 + 5 * HOUR
    # Under a limit longer than anyone has waited, the deadline decides.
    assert names(in_queue_order(entries, now=now, aging_s=10 * 3600)) == [
        "urgent motion", "older motion", "old summary"]
    # Past a two-hour limit the two old jobs move up, oldest first.
    assert names(in_queue_order(entries, now=now, aging_s=2 * 3600)) == [
        "old summary", "older motion", "urgent motion"]
    # Exactly at the limit a job has not yet waited longer than it; a second later it has.
    assert names(in_queue_order(entries, now=now, aging_s=5 * 3600))[-1] == "old summary"
    assert names(in_queue_order(entries, now=now, aging_s=5 * 3600 - 1))[0] == "old summary"


def test_a_stream_of_urgent_jobs_does_not_starve_an_old_one():
    old = Waiting(submitted_at=T0, job=1, ref="old")
    # Every half hour another job due within the hour arrives; by the limit the old one is first of all.
    place = []
    for step in range(6):
        now = T0 + step * HOUR / 2
        fresh = [Waiting(submitted_at=now - k * HOUR / 2, job=10 + k, due_at=now + HOUR, ref=f"urgent {k}")
                 for k in range(step)]
        place.append(names(in_queue_order([old, *fresh], now=now, aging_s=2 * 3600)).index("old"))
    assert place == [0, 1, 2, 3, 4, 0]


def test_moved_to_the_front_goes_first_the_last_moved_first():
    entries = [Waiting(submitted_at=T0, job=1, due_at=T0 + HOUR, ref="due soon"),
               Waiting(submitted_at=T0 - 9 * HOUR, job=2, ref="aged"),
               Waiting(submitted_at=T0, job=3, front_at=T0 + HOUR, ref="moved first"),
               Waiting(submitted_at=T0, job=4, front_at=T0 + 2 * HOUR, ref="moved last")]
    assert names(in_queue_order(entries, now=T0 + 2 * HOUR, aging_s=2 * 3600)) == [
        "moved last", "moved first", "aged", "due soon"]


def test_an_earlier_stage_of_one_job_goes_first_and_ties_end_on_the_job():
    entries = [Waiting(submitted_at=T0, job=7, step=3, ref="7/3"), Waiting(submitted_at=T0, job=7, step=2, ref="7/2"),
               Waiting(submitted_at=T0, job=5, step=9, ref="5/9")]
    assert names(in_queue_order(entries, now=T0, aging_s=3600)) == ["5/9", "7/2", "7/3"]


@pytest.mark.django_db
def test_slot_claims_admit_at_most_the_servers_slots_and_expire_with_their_lease(matter, attorney, settings):
    server = register("http://127.0.0.1:9", name="drafter")
    server.parallel_slots = 2
    server.save()
    runs = [job_start(matter=matter, kind="extraction", instructions=f"List amounts {n}.", user=attorney,
                      enqueue=False).stage_runs.get() for n in range(3)]
    assert slot_claim(server=server, run_id=runs[0].pk, owner="host-a:1:x") == 0
    assert slot_claim(server=server, run_id=runs[1].pk, owner="host-b:2:y") == 1
    assert slot_claim(server=server, run_id=runs[2].pk, owner="host-a:1:z") is None
    assert slots_busy(server) == 2
    slot_release(run_id=runs[0].pk, owner="host-b:2:y")  # not its claim: nothing freed
    assert slots_busy(server) == 2
    slot_release(run_id=runs[0].pk, owner="host-a:1:x")
    assert slot_claim(server=server, run_id=runs[2].pk, owner="host-a:1:z") == 0
    # A worker that died stops renewing: once the lease has run out its slot is free for another.
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.LAWDESK_STAGE_LEASE_S + 1)):
        assert slot_renew(run_id=runs[1].pk, owner="host-b:2:y") == 1  # a live worker's renewal keeps it
        assert slot_claim(server=server, run_id=runs[0].pk, owner="host-c:3:w") == 0  # runs[2]'s claim ran out
        assert slot_claim(server=server, run_id=runs[0].pk, owner="host-c:3:v") is None
    # A lowered slot count admits no new claim on the slot above it.
    server.parallel_slots = 1
    server.save()
    ServerSlot.objects.update(run=None, lease_owner="", lease_expires_at=None)
    assert slot_claim(server=server, run_id=runs[0].pk, owner="a:1:a") == 0
    assert slot_claim(server=server, run_id=runs[1].pk, owner="a:1:b") is None


def add_board(server, name="Board A"):
    host = Host.objects.create(name="threadripper", address="threadripper")
    gpu = GPU.objects.create(host=host, index=4, name="Tesla V100-SXM2-32GB", memory_total_mib=32768)
    Board.objects.create(host=host, name=name).gpus.add(gpu)
    server.gpus.add(gpu)


@pytest.mark.django_db
def test_the_job_page_says_what_a_run_waits_for_and_how_many_are_ahead(matter, attorney, client):
    server = register("http://127.0.0.1:9", name="drafter")
    add_board(server)
    jobs = [job_start(matter=matter, kind="summary", instructions=f"Summarize exhibit {n}.", user=attorney,
                      enqueue=False) for n in range(3)]
    Job.objects.filter(pk=jobs[0].pk).update(due_at=timezone.now() + timedelta(days=2))
    Job.objects.filter(pk=jobs[2].pk).update(due_at=timezone.now() + timedelta(days=1))
    last = jobs[1].stage_runs.get()
    place = queue_place(last)
    assert (place.ahead, place.board, place.slots) == (2, "Board A", 1)
    assert str(place) == "waiting for the summarizer on Board A: 2 ahead"
    first = jobs[2].stage_runs.get()
    assert str(queue_place(first)) == "waiting for the summarizer on Board A: next"
    slot_claim(server=server, run_id=jobs[0].stage_runs.get().pk, owner="w:1:a")
    assert str(queue_place(first)) == "waiting for the summarizer on Board A: next, when one of its 1 slot is free"
    client.force_login(attorney)
    page = client.get(f"/jobs/{jobs[1].pk}/").content.decode()
    assert "waiting for the summarizer on Board A: 2 ahead" in page


@pytest.mark.django_db
def test_moving_a_job_to_the_front_is_audited_and_refused_when_it_cannot_be(matter, attorney, make_user):
    register("http://127.0.0.1:9")
    first, second = (job_start(matter=matter, kind="summary", instructions=f"Summary {n}.", user=attorney,
                               enqueue=False) for n in range(2))
    assert [run.job_id for run in waiting_in_order()] == [first.pk, second.pk]
    with pytest.raises(ValidationError):
        job_move_to_front(job=second, user=attorney, reason=" ")
    outsider = make_user("outsider", "assistant")
    with pytest.raises(PermissionDenied):
        job_move_to_front(job=second, user=outsider, reason="The hearing is today.")
    moved = job_move_to_front(job=second, user=attorney, reason="The hearing is today.")
    assert moved.front_by == attorney and moved.front_at is not None
    assert [run.job_id for run in waiting_in_order()] == [second.pk, first.pk]
    entry = AuditEntry.objects.get(action="job.front")
    assert entry.detail["reason"] == "The hearing is today." and entry.actor == attorney.username
    job_cancel(job=first, user=attorney)
    with pytest.raises(ValidationError, match="no queue to move it in"):
        job_move_to_front(job=first, user=attorney, reason="Too late for this one.")


@pytest.mark.django_db
def test_a_run_waiting_out_a_backoff_is_not_taken_before_its_time(matter, attorney):
    register("http://127.0.0.1:9")
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney,
                    enqueue=False)
    StageRun.objects.filter(job=job).update(status="waiting_for_server",
                                            retry_at=timezone.now() + timedelta(seconds=20))
    assert waiting_in_order() == []
    assert [run.job_id for run in waiting_in_order(ready_only=False)] == [job.pk]
    with time_machine.travel(timezone.now() + timedelta(seconds=21)):
        assert [run.job_id for run in waiting_in_order()] == [job.pk]


@pytest.mark.django_db
def test_the_job_page_moves_a_job_to_the_front_through_its_form(matter, attorney, client):
    register("http://127.0.0.1:9")
    job = job_start(matter=matter, kind="summary", instructions="Summary of the lease.", user=attorney,
                    enqueue=False)
    client.force_login(attorney)
    page = client.post(f"/jobs/{job.pk}/front/", {"reason": ""}, follow=True).content.decode()
    assert "Say why this job should go ahead of the others." in page
    assert Job.objects.get(pk=job.pk).front_at is None
    page = client.post(f"/jobs/{job.pk}/front/", {"reason": "Hearing moved to today."}, follow=True).content.decode()
    assert Job.objects.get(pk=job.pk).front_by == attorney and 'id="job-front"' in page


@pytest.mark.django_db
def test_the_job_start_form_takes_a_due_time_and_refuses_one_already_passed(matter, attorney, client):
    client.force_login(attorney)
    page = client.post(f"/matters/{matter.pk}/jobs/", {"kind": "summary", "instructions": "Summary of the lease.",
                                                        "due_at": "2020-01-02T17:00"}, follow=True).content.decode()
    assert "has already passed" in page and not Job.objects.exists()
    page = client.post(f"/matters/{matter.pk}/jobs/", {"kind": "summary", "instructions": "Summary of the lease.",
                                                        "due_at": "tomorrow"}, follow=True).content.decode()
    assert "Give the due date and time as" in page and not Job.objects.exists()
    due = (timezone.now() + timedelta(days=1)).replace(second=0, microsecond=0)
    client.post(f"/matters/{matter.pk}/jobs/", {"kind": "summary", "instructions": "Summary of the lease.",
                                                "due_at": due.strftime("%Y-%m-%dT%H:%M")})
    job = Job.objects.get()
    assert job.due_at == due
    assert AuditEntry.objects.get(action="job.start").detail["due_at"] == due.isoformat()


@pytest.mark.django_db(transaction=True)
def test_a_task_runs_the_first_run_of_the_order_not_its_own_and_waits_while_no_slot_is_free(matter, attorney,
                                                                                             record):
    with ScriptedServer() as server:
        calls = stage_server(server)
        scripted = register(server.url)
        later, sooner = (job_start(matter=matter, kind="extraction", instructions=f"Amounts {n}.", user=attorney,
                                   enqueue=False) for n in range(2))
        Job.objects.filter(pk=later.pk).update(due_at=timezone.now() + timedelta(days=3))
        Job.objects.filter(pk=sooner.pk).update(due_at=timezone.now() + timedelta(hours=3))
        # Another host's worker holds the one slot: the task waits, sending nothing.
        slot_claim(server=scripted, run_id=later.stage_runs.get().pk, owner="other-host:1:a")
        done = []
        def dispatch():
            try:
                done.append(stage_dispatch(later.stage_runs.get().pk))
            finally:
                connection.close()  # the thread's own connection, so the test database can be dropped

        task = threading.Thread(target=dispatch)
        task.start()
        task.join(timeout=1.5)
        assert task.is_alive() and calls == []
        slot_release(run_id=later.stage_runs.get().pk, owner="other-host:1:a")
        task.join(timeout=30)
        assert not task.is_alive()
        # The task was queued for the later job's run; it ran the run due first.
        assert done[0].job_id == sooner.pk and done[0].status == "done" and calls == ["extract"]
        assert StageRun.objects.get(job=later).status == "queued"
        assert not ServerSlot.objects.filter(run__isnull=False).exists()
        assert stage_dispatch(0).job_id == later.pk  # any task runs what waits
        assert stage_dispatch(0) is None  # nothing waits: the task ends at once


def test_the_slots_a_server_listed_at_its_probe_bound_what_its_record_says(matter, attorney):
    from pipeline.models import ProbeResult
    from pipeline.stages.admission import server_slots
    from pipeline.topology.probe import SLOTS_FROM_LAWDESK, SLOTS_FROM_SERVER

    server = register("http://127.0.0.1:9", name="drafter")
    server.parallel_slots = 4
    server.save()
    assert server_slots(server) == 4
    # Counted by LawDesk itself (Ollama, --no-slots): says nothing of the server's own count.
    ProbeResult.objects.create(server=server, status="up", slots={"source": SLOTS_FROM_LAWDESK, "busy": [False]})
    assert server_slots(server) == 4
    # llama-server started with --parallel 1 lists one slot: one request at a time, whatever the record says.
    ProbeResult.objects.create(server=server, status="up", slots={"source": SLOTS_FROM_SERVER, "busy": [False]})
    assert server_slots(server) == 1
    runs = [job_start(matter=matter, kind="extraction", instructions=f"List amounts {n}.", user=attorney,
                      enqueue=False).stage_runs.get() for n in range(2)]
    assert slot_claim(server=server, run_id=runs[0].pk, owner="host-a:1:x") == 0
    assert slot_claim(server=server, run_id=runs[1].pk, owner="host-b:2:y") is None
