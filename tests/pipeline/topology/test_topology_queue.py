"""The topology page's slots and queue: per server, the stage runs LawDesk has on its slots now (live claims, from
any host's workers) and the runs waiting for it in queue order, each with its job's due time and how many are
ahead of it, as the job page counts them."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from pipeline.job_models import Job, ServerSlot, StageRun
from pipeline.stages.admission import slot_claim, slot_release
from pipeline.stages.control import job_move_to_front, job_start
from pipeline.stages.queue import queue_place
from tests.support.jobs import register


def rows_of(page: str, server) -> list[str]:
    """The text of each row of ``server``'s queue table, tags dropped and spaces folded."""
    section = page[page.index(f'id="queue-{server.pk}"'):]
    section = section[:section.index("</section>")]
    rows = re.findall(r"<tr class=\"[^\"]*\">(.*?)</tr>", section, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in rows]


def due(at) -> str:
    return f"due {timezone.localtime(at):%Y-%m-%d %H:%M}"


@pytest.mark.django_db
def test_the_page_shows_each_servers_runs_on_its_slots_and_its_queue_with_due_times(matter, attorney, client,
                                                                                    make_user):
    drafter = register("http://127.0.0.1:9", name="drafter")
    drafter.parallel_slots = 2
    drafter.save()
    idle = register("http://127.0.0.1:10", name="spare", roles=())
    now = timezone.now().replace(microsecond=0)
    plan = {"A": now + timedelta(days=1), "B": None, "C": None, "D": now + timedelta(hours=2),
            "E": now + timedelta(days=3)}
    jobs = {}
    for name, due_at in plan.items():  # submitted in this order
        jobs[name] = job_start(matter=matter, kind="summary", instructions=f"Summary {name} of the lease.",
                               user=attorney, enqueue=False)
        Job.objects.filter(pk=jobs[name].pk).update(due_at=due_at)
    # A and B hold both slots, claimed by workers of two hosts, and run.
    for name, owner in (("A", "host-a:101:x"), ("B", "host-b:202:y")):
        run = jobs[name].stage_runs.get()
        assert slot_claim(server=drafter, run_id=run.pk, owner=owner) is not None
        StageRun.objects.filter(pk=run.pk).update(status="running")
    job_move_to_front(job=jobs["E"], user=attorney, reason="The judge moved the hearing to this afternoon.")

    client.force_login(make_user("otto", "operator"))
    page = client.get(reverse("pipeline:topology")).content.decode()

    ids = {name: job.pk for name, job in jobs.items()}
    since = {claim.slot: f"running since {timezone.localtime(claim.claimed_at):%H:%M:%S}"
             for claim in ServerSlot.objects.filter(server=drafter)}
    assert rows_of(page, drafter) == [
        f"slot 0 job {ids['A']} (summary) summarize (summarizer) {due(plan['A'])} {since[0]}",
        f"slot 1 job {ids['B']} (summary) summarize (summarizer) no due time {since[1]}",
        f"waiting job {ids['E']} (summary) summarize (summarizer) {due(plan['E'])} next; moved to the front",
        f"waiting job {ids['D']} (summary) summarize (summarizer) {due(plan['D'])} 1 ahead",
        f"waiting job {ids['C']} (summary) summarize (summarizer) no due time 2 ahead",
    ]
    assert "2 of 2 slots in use by LawDesk, 3 waiting" in page
    # The page counts "ahead" as the job page does.
    assert str(queue_place(jobs["C"].stage_runs.get())) == "waiting for the summarizer (drafter): 2 ahead"
    assert rows_of(page, idle) == []
    assert "0 of 1 slot in use by LawDesk, 0 waiting" in page
    assert "No request of LawDesk's on its slots, none waiting." in page

    # A slot freed and its run done: B's job moves on, E takes the slot, and the queue closes up.
    StageRun.objects.filter(job=jobs["B"]).update(status="done")
    slot_release(run_id=jobs["B"].stage_runs.get().pk, owner="host-b:202:y")
    run_e = jobs["E"].stage_runs.get()
    assert slot_claim(server=drafter, run_id=run_e.pk, owner="host-a:101:z") == 1
    StageRun.objects.filter(pk=run_e.pk).update(status="running")
    rows = rows_of(client.get(reverse("pipeline:topology")).content.decode(), drafter)
    assert [row.split(" running since")[0] for row in rows[:2]] == [
        f"slot 0 job {ids['A']} (summary) summarize (summarizer) {due(plan['A'])}",
        f"slot 1 job {ids['E']} (summary) summarize (summarizer) {due(plan['E'])}"]
    assert rows[2:] == [f"waiting job {ids['D']} (summary) summarize (summarizer) {due(plan['D'])} next",
                        f"waiting job {ids['C']} (summary) summarize (summarizer) no due time 1 ahead"]
