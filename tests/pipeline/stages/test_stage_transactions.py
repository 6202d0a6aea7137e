"""A job's verifier checks run before the transaction that marks their stage done: on SQLite that transaction
holds the one write lock from its start, and a page view's audit entry would wait for the whole check."""

import pytest
from django.db import connection

from matters.drafts import services as draft_services
from pipeline.stages import kinds, record_fields
from pipeline.stages.control import job_start
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server


@pytest.mark.django_db(transaction=True)
def test_the_verifier_runs_outside_the_transaction_that_marks_its_stage_done(matter, record, server, attorney,
                                                                             monkeypatch):
    in_transaction = []

    def watched(check):
        def run(**kwargs):
            in_transaction.append(connection.in_atomic_block)
            return check(**kwargs)
        return run

    for module in (kinds, record_fields, draft_services):
        monkeypatch.setattr(module, "verify_text", watched(module.verify_text))
    stage_server(server)
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.",
                    user=attorney, enqueue=False)
    runs = run_all(job)
    assert [(r.stage, r.status) for r in runs] == [
        ("gate", "done"), ("plan", "done"), *[("section", "done")] * 4, ("revise", "done"), ("verify", "done"),
        ("review", "done"), ("extract", "done")]
    assert in_transaction == [False, False]  # the verify stage's check, then the extract stage's rows
    version = job.draft.versions.order_by("-number").first()
    assert runs[7].parsed["blocking"] == 0 and version.findings.filter(status="grounded").count() >= 3
    assert runs[9].parsed["items"][0]["status"] == "grounded"
