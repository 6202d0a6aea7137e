"""Real ``db_worker`` processes, as several hosts would run them, share model servers through the database: a
server that refuses any completion beyond its slots never sees more than its slots at once. Two workers against a
one-slot server take the jobs in the queue's order (moved to the front, then by deadline, then the job without one);
four, two per host, keep a two-slot server's both slots busy and refused nothing.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from pipeline.job_models import Job, ServerSlot, StageRun
from pipeline.stages.control import job_move_to_front, job_start
from tests.faults.conftest import lease_pid, wait_for
from tests.support.jobs import register
from tests.support.scripted_server import ScriptedServer
from tests.support.slot_server import slot_server

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

SUMMARY = "The lease was signed on March 3, 2021 (SMITH000001). The rent is $1,250.00 (SMITH000001)."


def test_two_workers_never_send_a_server_more_than_its_slots_and_take_jobs_by_deadline(
        matter, record, attorney, processes):
    now = timezone.now()
    with ScriptedServer() as server:
        counter = slot_server(server, slots=1, tag=r"Summary ([A-Z])\b", answer=SUMMARY, pause_s=0.05)
        register(server.url)  # parallel_slots 1
        # Submitted in this order; the queue must not take them in it.
        plan = [("A", None), ("B", now + timedelta(days=3)), ("C", now + timedelta(hours=5)),
                ("D", now + timedelta(days=1)), ("E", now + timedelta(hours=2)), ("F", now + timedelta(days=2))]
        jobs = {}
        for name, due_at in plan:
            job = job_start(matter=matter, kind="summary", instructions=f"Summary {name} of the lease.",
                            user=attorney)
            Job.objects.filter(pk=job.pk).update(due_at=due_at)
            jobs[name] = job
        job_move_to_front(job=jobs["D"], user=attorney, reason="The judge moved the hearing to this afternoon.")

        workers = [processes.worker(), processes.worker()]
        wait_for(lambda: Job.objects.filter(pk__in=[j.pk for j in jobs.values()]).exclude(
            status__in=["done", "failed"]).count() == 0 or None, timeout_s=180, what="every job to end")

    assert all(w.poll() is None for w in workers)
    assert counter.refused == 0 and counter.peak == 1
    assert counter.started == ["D", "E", "C", "F", "B", "A"]
    assert set(Job.objects.filter(pk__in=[j.pk for j in jobs.values()]).values_list("status", flat=True)) == {"done"}
    summaries = StageRun.objects.filter(job__in=jobs.values(), stage="summarize")
    assert summaries.count() == 6 and not summaries.exclude(status="done").exists()
    # Both workers took part: the admission is shared, not one worker's own.
    assert len({lease_pid(run.lease_owner) for run in summaries}) == 2
    assert not ServerSlot.objects.filter(run__isnull=False).exists()  # every claim freed when its attempt ended


def test_four_workers_as_two_hosts_of_two_never_send_a_two_slot_server_more_than_two(
        matter, record, attorney, processes):
    # Two workers per host, as the scheduling design asks. The workers' lease owners are host:pid:random with the
    # host from socket.gethostname(), which no setting overrides: all four run on this machine and are told apart
    # by their process ids. The admission they share is the database's, which is all a second host would share.
    with ScriptedServer() as server:
        # Each answer streams for about two seconds, so four workers with six jobs keep both slots busy at once.
        counter = slot_server(server, slots=2, tag=r"Summary ([A-Z])\b", answer=SUMMARY, pause_s=0.1)
        model = register(server.url)
        model.parallel_slots = 2
        model.save()
        jobs = [job_start(matter=matter, kind="summary", instructions=f"Summary {name} of the lease.", user=attorney)
                for name in "ABCDEF"]
        workers = [processes.worker() for _ in range(4)]
        wait_for(lambda: Job.objects.filter(pk__in=[j.pk for j in jobs]).exclude(
            status__in=["done", "failed"]).count() == 0 or None, timeout_s=300, what="every job to end")

    assert all(w.poll() is None for w in workers)
    assert counter.refused == 0 and counter.peak == 2
    assert set(counter.started) == set("ABCDEF")
    assert set(Job.objects.filter(pk__in=[j.pk for j in jobs]).values_list("status", flat=True)) == {"done"}
    summaries = StageRun.objects.filter(job__in=jobs, stage="summarize")
    assert summaries.count() == 6 and not summaries.exclude(status="done").exists()
    assert len({lease_pid(run.lease_owner) for run in summaries}) >= 2  # two at once needs two workers
    assert not ServerSlot.objects.filter(run__isnull=False).exists()
