"""Model output that cannot be true: the prompt echoed, loops, placeholders, cites outside the packet, extraction
rows not on their source page, and approval of a version that is mostly its prompt."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from matters.drafts.services import draft_approve, draft_create
from matters.models import AuditEntry
from pipeline.stages.control import job_start
from pipeline.stages.degenerate import (
    echo_share,
    extraction_verdict,
    free_text_verdict,
    placeholder_attack,
    repeated_run_share,
)
from pipeline.stages.prompts import render
from tests.support.jobs import register, run_all
from tests.support.stage_server import stage_server

pytestmark = pytest.mark.django_db

REQUEST = "Move to compel repairs of the roof."


def revise_prompt_echo() -> str:
    """What the embedded model gave back: the revise prompt's own instructions and request, as a "draft"."""
    messages = render("revise.v2.txt", matter="Smith v. Jones", instructions=REQUEST, packet="", draft="")
    return "\n".join(m.content for m in messages)


def test_the_revise_prompt_echoed_back_fails_the_stage_and_makes_no_version(matter, record, server, attorney):
    stage_server(server, {"revise": revise_prompt_echo()})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions=REQUEST, user=attorney, enqueue=False)
    runs = {r.stage: r for r in run_all(job)}
    assert runs["revise"].status == "failed"
    assert "the prompt coming back" in runs["revise"].error
    job.refresh_from_db()
    assert job.status == "failed" and job.draft.versions.count() == 1  # no "Approve version 2" to offer


@pytest.mark.parametrize("answer, reason", [
    ("MOTION TO COMPEL.\n" + "The roof leaks. SMITH000001.\n" * 8, "one line is repeated 8 times"),
    ("amount a, source a; " * 60, "repeats one pattern"),
    ("   ", "returned no text"),
    # One paragraph written four times, each numbered and wrapped its own way: no line repeats and it compresses
    # like prose (the newcomer's motion run passed such a section).
    ("".join(f"{n}. The tenant withheld rent because the roof leaked through the winter,{' and' * n}\nthe landlord "
             f"was told of the leak in writing on three occasions before any rent was withheld. SMITH00000{n}.\n"
             for n in range(1, 5)), "repeats passages written before it"),
])
def test_degenerate_sections_fail_with_the_reason(matter, record, server, attorney, answer, reason):
    stage_server(server, {"section": answer})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions=REQUEST, user=attorney, enqueue=False)
    runs = {r.stage: r for r in run_all(job)}
    assert runs["section"].status == "failed" and reason in runs["section"].error, runs["section"].error


def test_a_draft_with_placeholders_is_done_with_a_visible_warning(matter, record, server, attorney):
    stage_server(server, {"summarize": "The lease was signed on [insert date] by [Name of tenant] (SMITH000001)."})
    register(server.url)
    job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", enqueue=False)
    summarize = run_all(job)[0]
    assert summarize.status == "done"
    assert "placeholder text ([Name of tenant], [insert date])" in summarize.reason


def test_record_cite_fields_are_constrained_to_the_packet_cites(matter, record, server, attorney):
    stage_server(server)
    register(server.url)
    bodies = []
    completion = server.routes["/v1/chat/completions"]
    server.routes["/v1/chat/completions"] = lambda body: (bodies.append(body), completion(body))[1]
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", enqueue=False)
    assert run_all(job)[0].status == "done"
    schema = bodies[0]["response_format"]["json_schema"]["schema"]
    source = schema["properties"]["items"]["items"]["properties"]["source"]
    assert source["enum"] == ["SMITH000001", "SMITH000002", "SMITH000003"]


def test_every_extraction_row_is_verified_and_its_status_shown(matter, record, server, attorney, client):
    items = [{"type": "amount", "value": "$1,250.00", "source": "SMITH000001"},
             {"type": "amount", "value": "$9,999.00", "source": "SMITH000001"},  # it is on SMITH000003
             {"type": "date", "value": "June 15, 2021", "source": "SMITH000003"},
             {"type": "party", "value": "Acme Holdings LLC", "source": "SMITH000001"},
             {"type": "party", "value": "Roofing Partners Inc", "source": "SMITH000002"}]
    stage_server(server, {"extract": json.dumps({"items": items})})
    register(server.url)
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney,
                    enqueue=False)
    extract = run_all(job)[0]
    assert extract.status == "done"
    statuses = [(i["value"], i["status"]) for i in extract.parsed["items"]]
    assert statuses == [("$1,250.00", "grounded"), ("$9,999.00", "ungrounded"), ("June 15, 2021", "grounded"),
                        ("Acme Holdings LLC", "grounded"), ("Roofing Partners Inc", "ungrounded")]
    assert "2 of 5 rows are not shown on their source page" in extract.reason
    client.force_login(attorney)
    page = client.get(reverse("pipeline:job", args=[job.pk])).content.decode()
    assert page.count('class="status status-ungrounded"') == 2 and page.count('class="status status-grounded"') == 3


def test_twelve_placeholder_rows_fail_the_extraction(matter, record, server, attorney):
    items = [{"type": "amount", "value": "a", "source": "SMITH000001"}] * 12
    stage_server(server, {"extract": json.dumps({"items": items})})
    register(server.url)
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", enqueue=False)
    extract = run_all(job)[0]
    assert extract.status == "failed" and "Every one of the 12 rows is a placeholder" in extract.error


def test_a_passage_written_twice_warns_and_court_prose_passes():
    paragraph = ("The tenant withheld rent because the roof leaked through the winter, and the landlord was told of "
                 "the leak in writing on three occasions before any rent was withheld (SMITH000002). ")
    twice = free_text_verdict(paragraph + "\n\n" + paragraph, instructions="Draft.", finish_reason="stop",
                              max_tokens=512)
    assert twice.fail == "" and "repeats passages written before it" in twice.warning
    assert repeated_run_share(paragraph) == 0.0
    # A quotation repeated once in a longer section is prose, not a loop.
    section = paragraph + (
        "The lease required the landlord to keep the structure sound and to make repairs within a reasonable time "
        "after notice. Missouri courts read such a covenant as dependent on the tenant's duty to pay, so a tenant "
        "deprived of the premises' use may withhold what the breach cost. The landlord's own letters admit the "
        "notices and promise a roofer who never came. Nothing in the record suggests the tenant caused the damage "
        "or refused access; the inspector's report of March 2021 places the failure in flashing the landlord "
        "installed. Summary judgment for the landlord on the rent claim should therefore be denied.")
    assert free_text_verdict(section + " " + paragraph[:80], instructions="Draft.", finish_reason="stop",
                             max_tokens=512) == free_text_verdict(section, instructions="Draft.", finish_reason="stop",
                                                                  max_tokens=512)


def test_verdicts_on_their_own():
    prompt = revise_prompt_echo()
    assert echo_share(prompt, prompt) == 1.0
    assert free_text_verdict("The tenant withheld rent because the roof leaked. SMITH000002.", instructions=prompt,
                             finish_reason="stop", max_tokens=1024).fail == ""
    assert "cut off" in free_text_verdict("The lease was signed on", instructions=prompt, finish_reason="length",
                                          max_tokens=64).warning
    assert extraction_verdict([{"type": "date", "value": "x", "source": "S1"},
                               {"type": "date", "value": "May 1, 2020", "source": "S1"}], finish_reason="stop",
                              max_tokens=64).warning == "Check this answer: 1 of 2 rows are placeholders."


def test_a_version_mostly_its_prompt_is_approved_only_with_a_reason(matter, record, attorney):
    text = "The lease was signed on March 3, 2021. SMITH000001."
    version = draft_create(matter=matter, title="Motion", text=text, author_kind="model",
                           provenance={"prompt_echo_share": 0.35})
    with pytest.raises(ValidationError, match="35% of version 1 repeats the instructions"):
        draft_approve(version=version, user=attorney)
    draft_approve(version=version, user=attorney, override_reason="Read in full: the request is restated on purpose.")
    version.refresh_from_db()
    assert version.approved_at is not None
    entry = AuditEntry.objects.filter(action="draft.approve").latest("seq")
    assert entry.detail["prompt_echo_override"].startswith("Read in full")


def test_a_reviewer_attack_that_is_a_template_slot_is_left_out_with_a_note(matter, record, server, attorney):
    # The newcomer's motion showed "[<address>]" under "medium" as if it were a finding about the draft.
    real = {"quote": "The lease was signed on March 3, 2021.", "attack": "The signature date is not disputed.",
            "severity": "low", "suggested_fix": "Drop it."}
    slots = [{"quote": "[<address>]", "attack": "[<address>]", "severity": "medium", "suggested_fix": ""},
             {"quote": "<county>", "attack": "The county of the premises is not stated anywhere.", "severity": "high",
              "suggested_fix": ""}]
    # A draft that holds a slot itself is rightly attacked for it: that attack stays (the signature block's
    # "[Bar number, address, telephone, e-mail]" holds the word).
    kept_slot = {"quote": "[<address>]", "attack": "The draft leaves the premises' address as a template slot.",
                 "severity": "high", "suggested_fix": "State the address."}
    stage_server(server, {"review": json.dumps({"attacks": [real, *slots, kept_slot]})})
    register(server.url)
    job = job_start(matter=matter, kind="motion", instructions=REQUEST, user=attorney, enqueue=False)
    runs = run_all(job)
    review = next(r for r in runs if r.stage == "review")
    assert review.status == "done", review.error
    assert review.reason.startswith("2 of the reviewer's 4 attacks were template placeholders, not criticism")
    job.refresh_from_db()
    stored = job.draft.latest_version.attacks.order_by("pk")
    assert [(a.attack, a.start is not None) for a in stored] == [(real["attack"], True), (kept_slot["attack"], True)]
    assert json.loads(review.output)["attacks"][1]["attack"] == "[<address>]"  # the output keeps what was written
    assert placeholder_attack({"quote": "The lease was signed.", "attack": "N/A"}, anchored=True)
    assert placeholder_attack({"quote": "[insert date]", "attack": "No date is given for it."}, anchored=False)
    assert not placeholder_attack({"quote": "[insert date]", "attack": "No date is given for it."}, anchored=True)
