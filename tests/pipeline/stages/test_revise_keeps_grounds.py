"""The reasoner's revision of a motion assembled from sections keeps what the sections grounded: a section whose
revised text drops one of its record cites, authority cites, quotations or amounts keeps its drafted text, and
the stage record says which marks were dropped; a revision that keeps them all is used."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.stages.control import job_start
from pipeline.stages.grounding import dropped_marks, grounding_marks
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

pytestmark = pytest.mark.django_db

FACTS = "The lease was signed on March 3, 2021 (SMITH000001). The monthly rent is $1,250.00 (SMITH000001)."
ARGUMENT = ("The tenant wrote that “we will not pay the rent for April, because the roof leaks” (SMITH000002). "
            "See Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013).")
PLAN = json.dumps({"title": "Motion to compel repairs", "sections": [
    {"kind": "statement_of_facts", "heading": "Statement of facts", "questions": ["When was the lease signed?"],
     "queries": ["lease signed"]},
    {"kind": "argument", "heading": "The landlord must repair the roof", "questions": ["Who must repair?"],
     "queries": ["roof leaks"]}]})
# The facts reworded with every mark kept; the argument reworded without its Bates number, quotation and case.
FACTS_REVISED = ("On March 3, 2021 the parties signed the lease (SMITH000001), which sets the monthly rent at "
                 "$1,250.00 (SMITH000001).")
ARGUMENT_REVISED = "The landlord has ignored the tenant's complaints about the roof and must repair it."


def _job(server, attorney, matter, revise: str):
    stage_server(server, {"plan": PLAN, "section": lambda call: FACTS if call == 1 else ARGUMENT, "revise": revise})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.", user=attorney,
                    enqueue=False)
    runs = run_all(job)
    assert job.status == "done", [(r.stage, r.error) for r in runs]
    assembled, revised = job.draft.versions.order_by("number")
    return next(r for r in runs if r.stage == "revise"), assembled, revised


def test_a_section_whose_revision_drops_its_cites_keeps_its_drafted_text(matter, record, server, attorney):
    answer = f"Statement of facts\n\n{FACTS_REVISED}\n\n**The landlord must repair the roof:**\n\n{ARGUMENT_REVISED}"
    revise, assembled, revised = _job(server, attorney, matter, answer)
    text = revised.text
    assert FACTS_REVISED in text and FACTS not in text  # the revision kept the facts' marks: it is used
    assert ARGUMENT in text and ARGUMENT_REVISED not in text  # it dropped the argument's: the draft stands
    kept = revised.provenance["kept_as_drafted"]
    assert [(k["key"], k["whole"]) for k in kept] == [("03-argument", False)]
    assert kept[0]["dropped"] == ["SMITH000002", "569 U.S. 614",
                                  "“we will not pay the rent for April, because the roof leaks”"]
    assert ("The revision dropped SMITH000002, 569 U.S. 614, “we will not pay the rent for April, because the roof "
            "leaks” from “The landlord must repair the roof”, so that section keeps its text as drafted."
            ) in revise.reason
    sections = {s["key"]: s for s in revised.provenance["sections"]}
    assert sections["02-statement_of_facts"]["revised"] is True and sections["03-argument"]["revised"] is False
    span = sections["03-argument"]
    assert text[span["start"]:span["end"]] == f"The landlord must repair the roof\n\n{ARGUMENT}"
    # The caption and the closing stay the record's.
    body = assembled.provenance["body"]
    assert text.startswith(assembled.text[:body[0]]) and text.endswith(assembled.text[body[1]:])
    assert text[revised.provenance["body"][0]:revised.provenance["body"][1]].startswith("Statement of facts\n\n")


def test_a_revision_keeping_every_mark_is_used_section_by_section(matter, record, server, attorney):
    argument = ("The landlord must act: the tenant wrote that “we will not pay the rent for April, because the roof "
                "leaks” (SMITH000002). Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013), "
                "requires no more.")
    answer = f"Statement of facts\n\n{FACTS_REVISED}\n\nThe landlord must repair the roof\n\n{argument}"
    revise, _, revised = _job(server, attorney, matter, answer)
    assert FACTS_REVISED in revised.text and argument in revised.text and ARGUMENT not in revised.text
    assert revised.provenance["kept_as_drafted"] == [] and "dropped" not in revise.reason
    assert all(s["revised"] for s in revised.provenance["sections"] if s["writer"] == "drafter")


def test_a_revision_without_headings_that_drops_a_cite_leaves_every_section_as_drafted(matter, record, server,
                                                                                        attorney):
    revise, assembled, revised = _job(server, attorney, matter, f"{FACTS_REVISED} {ARGUMENT_REVISED}")
    body = assembled.provenance["body"]
    assert revised.text == assembled.text  # nothing of the revision could be placed without losing a cite
    assert [(k["key"], k["whole"]) for k in revised.provenance["kept_as_drafted"]] == [
        ("02-statement_of_facts", True), ("03-argument", True)]
    assert "did not keep the sections' headings" in revise.reason and "SMITH000002" in revise.reason
    assert revised.provenance["body"] == body


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([FACTS, ARGUMENT, "Rent: $90.", "“three quoted words”", "SMITH 000123",
                                 "Ex. 4 at 2", "42 U.S.C. § 1983", "plain words", "\n", "“", "$", "v."]),
                max_size=8), st.text(max_size=80))
def test_a_text_never_drops_its_own_marks_and_an_empty_one_drops_them_all(parts, noise):
    text = " ".join(parts) + noise
    assert dropped_marks(text, text) == []
    assert dropped_marks(text, "") == list(grounding_marks(text).values())
