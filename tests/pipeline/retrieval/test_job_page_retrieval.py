"""The job page says what each stage was given: the queries, each page's reason, what was left out, the law, and
any warning about retrieval (an embedder missing or down)."""

import json
import re

import pytest
from django.urls import reverse

from matters.models import Origin
from pipeline.job_models import StageRun
from pipeline.stages.control import job_start
from tests.factories import ExhibitFactory
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

pytestmark = pytest.mark.django_db(transaction=True)

FILLER = ("The clerk entered the scheduling order and counsel filed a joint status report about discovery. " * 30)


def test_the_job_page_shows_why_each_page_was_given_and_what_was_left_out(client, matter, attorney, server):
    for n in range(25):
        ExhibitFactory(matter=matter, origin=Origin.COURT, pages=[FILLER + f" Filing {n}."] * 2)
    roof = ExhibitFactory(matter=matter, origin=Origin.COURT,
                          pages=["The roof leaked over the bedroom all winter and the landlord sent nobody. " * 20])
    # The plan gives its one drafted section the gate's question and query; that section's packet is under test.
    stage_server(server, {"gate": json.dumps({"has_grounds": True, "reasons": ["The roof leaked."],
                                               "cited_pages": [f"Ex. {roof.label} at 1"],
                                               "questions": [{"question": "Did the landlord repair it?",
                                                              "query": "landlord sent nobody"}]}),
                          "plan": json.dumps({"title": "Motion to compel repairs", "sections": [
                              {"kind": "argument", "heading": "The landlord must repair the roof",
                               "questions": ["Did the landlord repair it?"], "queries": ["landlord sent nobody"]}]})})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel the roof repairs: the leaks.",
                    user=attorney, enqueue=False)
    run_all(job)
    section_run = StageRun.objects.get(job=job, stage="section")
    assert section_run.retrieval["omitted_pages"] > 0 and section_run.retrieval["authorities"] == []
    # The section's question is its first query, its search the second.
    assert [q["query"] for q in section_run.retrieval["evidence"]["queries"]][:2] == [
        "Did the landlord repair it?", "landlord sent nobody"]
    client.force_login(attorney)
    page = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    section = page[page.index('data-retrieval-stage="section"'):]
    section = section[:section.index("</details>")]
    assert re.search(r"section \S+ — what it was given: \d+ pages of evidence, 0 pages of law; \d+ not sent",
                     section)
    assert f"Ex. {roof.label} at 1</td>\n    <td>query 1, rank 1</td>" in section
    # No other page matched: the room left holds other filings in exhibit order, and says so.
    assert "room left: exhibit order" in section
    assert "No server holds the embedder role: pages were ranked by their words alone." in section
    assert "The matter holds no authorities" in section
    assert section_run.retrieval["evidence"]["left_out_ranked"] == 0 and "Left out for space" not in section
