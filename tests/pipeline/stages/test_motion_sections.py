"""A motion written section by section against a scripted llama-server: the plan and its record, one drafter run
per section, the caption from the matter record, a section with nothing to write from, bad outlines, and a worker
killed in the middle of a section."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from pipeline.job_models import StageRun
from pipeline.stages.control import job_start, stage_recover
from pipeline.stages.runner import stage_execute
from tests.support.jobs import register, run_all
from tests.support.stage_server import DEFAULT, stage_server

pytestmark = pytest.mark.django_db

SECTIONS = ["02-introduction", "03-statement_of_facts", "04-argument", "05-conclusion"]


def _plan(*sections, title="Motion to compel repairs") -> str:
    return json.dumps({"title": title, "sections": [
        {"kind": kind, "heading": heading, "questions": questions, "queries": queries}
        for kind, heading, questions, queries in sections]})


def _motion(matter, attorney):
    return job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.", user=attorney,
                     enqueue=False)


def test_the_plan_is_recorded_and_each_section_is_drafted_from_its_own_packet_into_one_document(
        matter, record, server, attorney, client):
    attorney.first_name, attorney.last_name = "Alice", "Counsel"
    attorney.save()
    matter.client, matter.opposing_party = "Jane Roe", "Acme Holdings LLC"
    matter.save()
    # Each section cites the stored opinion, so none is given a quotation of it; the revision keeps every mark.
    law = " Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013)."
    calls = stage_server(server, {"section": DEFAULT["section"] + law, "revise": DEFAULT["revise"] + law})
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    assert job.status == "done", [(r.stage, r.error) for r in runs]
    plan = runs[1]
    assert plan.stage == "plan" and plan.role == "reasoner" and plan.prompt_template == "plan.v1.txt"
    # The plan read the exhibit list, the authorities and the matter's first dated facts, and no packet.
    prompt = plan.prompt[1]["content"]
    assert "Exhibit 1: lease (2 pages)" in prompt and "Exhibit 2: invoice" in prompt and "<<<EVIDENCE" not in prompt
    assert "tarrant" in prompt.lower() and "March 3, 2021" in prompt
    assert [(s["key"], s["writer"]) for s in plan.parsed["sections"]] == [
        ("01-caption", "matter"), *((key, "drafter") for key in SECTIONS), ("06-signature_block", "matter"),
        ("07-certificate_of_service", "matter")]
    assert plan.parsed["sections"][3]["queries"] == ["duty to repair"]
    assert "certificate of service" in plan.reason  # the plan left it out; LawDesk added it
    sections = [r for r in runs if r.stage == "section"]
    assert [s.section for s in sections] == SECTIONS and calls.count("section") == 4
    facts = sections[1]
    assert 'Write the section "Statement of facts"' in facts.prompt[1]["content"]
    assert "When was the lease signed?" in facts.prompt[1]["content"]
    assert facts.parsed["text"].startswith("The lease was signed") and len(facts.packet_sha256) == 64
    assembled, revised = job.draft.versions.order_by("number")
    text = assembled.text
    assert text.startswith("D. MASS.\n\nSmith v. Jones\nCase No. 1:24-cv-01234\n\nMOTION TO COMPEL REPAIRS\n")
    places = [text.index(h) for h in ("Introduction\n", "Statement of facts\n", "The landlord must repair",
                                      "Conclusion\n", "Respectfully submitted", "CERTIFICATE OF SERVICE")]
    assert places == sorted(places)
    assert "Alice Counsel" in text and "Counsel for Jane Roe" in text and "counsel for Acme Holdings LLC" in text
    records = {s["key"]: s for s in assembled.provenance["sections"]}
    assert records["03-statement_of_facts"]["run"] == facts.pk
    assert records["03-statement_of_facts"]["packet_sha256"] == facts.packet_sha256
    assert records["01-caption"]["writer"] == "matter" and "run" not in records["01-caption"]
    span = records["03-statement_of_facts"]
    assert text[span["start"]:span["end"]].startswith("Statement of facts\n\nThe lease was signed")
    # The reasoner revised the body whole; the caption and closing stay LawDesk's.
    assert revised.provenance["stage"] == "revise" and revised.text.startswith(text[:assembled.provenance["body"][0]])
    assert DEFAULT["revise"] + law in revised.text and revised.text.endswith(text[assembled.provenance["body"][1]:])
    revise = next(r for r in runs if r.stage == "revise")
    assert "Statement of facts" in revise.prompt[1]["content"] and "Case No." not in revise.prompt[1]["content"]
    # The caption's case number and court are the record's, not a model's assertion needing a cite.
    assert not revised.findings.filter(status="needs_record_cite").exists()
    client.force_login(attorney)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert 'id="job-sections"' in page and page.count('data-section-status="done"') == 4
    assert "Statement of facts" in page and "from the matter record" in page
    review = client.get(f"/matters/{matter.pk}/drafts/{job.draft_id}/").content.decode()
    assert 'id="draft-sections"' in review and f"/jobs/{job.pk}/#section-03-statement_of_facts" in review


def test_a_plan_with_no_sections_fails_with_the_reason_and_keeps_the_gate(matter, record, server, attorney):
    calls = stage_server(server, {"plan": json.dumps({"title": "Motion", "sections": []})})
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    assert [(r.stage, r.status) for r in runs] == [("gate", "done"), ("plan", "failed")]
    assert "plan has no sections" in runs[1].error and job.status == "failed" and job.draft is None
    assert "section" not in calls and runs[1].output  # the model's answer stays in the record


def test_a_plan_naming_only_what_the_record_writes_gets_the_standard_outline_and_says_so(
        matter, record, server, attorney):
    calls = stage_server(server, {"plan": _plan(("caption", "Caption", [], []),
                                                ("signature_block", "Signature", [], []))})
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    plan = runs[1]
    assert plan.status == "done" and job.status == "done"
    assert "named no section for the drafter to write (it named caption, signature block)" in plan.reason
    assert [s["key"] for s in plan.parsed["sections"]] == ["01-caption", *SECTIONS[:1], "03-statement_of_facts",
                                                           "04-argument", "05-conclusion", "06-signature_block",
                                                           "07-certificate_of_service"]
    # Each standard section is searched for the request's own words.
    assert plan.parsed["sections"][2]["queries"][0] == "Move to compel repairs of the roof."
    assert calls.count("section") == 4


def test_a_broken_outline_fails_after_one_repair_request(matter, record, server, attorney):
    calls = stage_server(server, {"plan": "Sections: 1. Introduction 2. Facts {\"sections\": [oops"})
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    assert [(r.stage, r.status) for r in runs] == [("gate", "done"), ("plan", "failed")]
    assert calls.count("plan") == 2  # the answer and the client's one repair request
    assert "schema twice" in runs[1].error and "oops" in runs[1].output


def test_a_model_writing_its_own_caption_never_changes_the_caption(matter, record, server, attorney):
    fake = ("IN THE SUPREME COURT OF NOWHERE\nACME CORP., Plaintiff,\nv.\nNOBODY, Defendant.\nCase No. 99-cv-99999\n\n"
            "{body}\n\nRespectfully submitted,\n/s/ Fake Lawyer, Bar No. 12345")
    stage_server(server, {
        "plan": _plan(("caption", "IN THE SUPREME COURT OF NOWHERE, Case No. 99-cv-99999", [], []),
                      ("statement_of_facts", "Statement of facts", ["When was the lease signed?"], ["lease signed"]),
                      title="IN THE SUPREME COURT OF NOWHERE Case No. 99-cv-99999"),
        "section": fake.format(body="The lease was signed on March 3, 2021. SMITH000001."),
        "revise": fake.format(body="The lease was signed on March 3, 2021 (SMITH000001)."),
    })
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    assert job.status == "done", [(r.stage, r.error) for r in runs]
    section = next(r for r in runs if r.stage == "section")
    assert section.parsed["removed"] == ["caption", "closing"] and "caption the model wrote" in section.reason
    for version in job.draft.versions.all():
        assert version.text.startswith("D. MASS.\n\nSmith v. Jones\nCase No. 1:24-cv-01234\n\nMOTION\n")
        for invented in ("NOWHERE", "99-cv-99999", "Fake Lawyer", "12345", "ACME CORP"):
            assert invented not in version.text


def test_markup_and_noise_a_small_model_copies_never_reach_the_filing(matter, record, server, attorney):
    # What the embedded model wrote, as measured (docs/jobs.md): a title with the prompt's braces, a heading of noise,
    # and a fence copied from its packet at the head of the section.
    stage_server(server, {
        "plan": _plan(("statement_of_facts", "17-3984_0256DKLN 2/FBAC:SECTIONX;TALESY,", ["When was the lease signed?"],
                       ["lease signed"]), title="{MATTER} SMITH V. JONES"),
        "section": '<<<END EXAMPLICATION>>"The lease was signed on March 3, 2021 (SMITH000001).',
    })
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    assert job.status == "done", [(r.stage, r.error) for r in runs]
    plan = next(r for r in runs if r.stage == "plan")
    assert [s["heading"] for s in plan.parsed["sections"] if s["writer"] == "drafter"][0] == "Statement of facts"
    assert plan.parsed["title"] == "" and any("is not words" in note for note in plan.parsed["notes"])
    section = next(r for r in runs if r.stage == "section")
    assert "markup" in section.parsed["removed"] and "copied from its prompt" in section.reason
    text = job.draft.latest_version.text
    assert text.startswith("D. MASS.\n\nSmith v. Jones\nCase No. 1:24-cv-01234\n\nMOTION\n")
    for noise in ("{MATTER}", "<<<", ">>", "SECTIONX"):
        assert noise not in text, noise
    assert '"The lease was signed on March 3, 2021 (SMITH000001).' in text


@pytest.mark.parametrize("heading, plain", [
    ("I. The Court Should Consolidate the Appeals", True), ("§ 1028A applies", True),
    ("Rule 12(b)(6) does not bar the claim", True), ("U.S. v. Smith, 123 F.3d 456", True),
    ("17-3984 2/FBAC:SECTIONX;TALESY,", False), ("{MATTER} SMITH V. JONES", False), ("1234 5678", False),
    ("<<<EVIDENCE>>> Facts", False), ("[Matter: Tofaute v. Fed Ex Ground Package System, Inc.", False)])
def test_a_heading_is_words_or_parts_of_a_cite(heading, plain):
    from pipeline.stages.motion import plain_words

    assert plain_words(heading) is plain


def test_a_section_whose_retrieval_finds_nothing_says_what_is_missing(matter, record, server, attorney):
    calls = stage_server(server, {"plan": _plan(
        ("statement_of_facts", "Statement of facts", ["When was the lease signed?"], ["lease signed"]),
        ("argument", "The bond was posted", ["Was a preliminary injunction bond posted?"], ["injunction bond"]))})
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    assert job.status == "done", [(r.stage, r.error) for r in runs]
    facts, bond = [r for r in runs if r.stage == "section"]
    assert calls.count("section") == 1  # nothing was asked of the model for the bond
    assert bond.status == "done" and bond.parsed["missing"] is True and bond.completion_tokens is None
    assert bond.first_request_at is None and bond.prompt  # the prompt it would have sent, and no request
    assert "Nothing in the record answered" in bond.reason
    assert bond.output.startswith("[NOT WRITTEN") and "Was a preliminary injunction bond posted?" in bond.output
    assembled = job.draft.versions.order_by("number").first()
    assert "The bond was posted\n\n[NOT WRITTEN" in assembled.text and facts.parsed["text"] in assembled.text
    assert {s["key"]: s.get("missing") for s in assembled.provenance["sections"]}["03-argument"] is True


def test_a_killed_worker_resumes_at_the_section_it_was_writing(matter, record, server, attorney):
    calls = stage_server(server)
    register(server.url)
    job = _motion(matter, attorney)
    for _ in range(3):  # gate, plan, the first section
        stage_execute(StageRun.objects.get(job=job, status="queued").pk, enqueue_next=False)
    writing = StageRun.objects.get(job=job, status="queued")
    assert writing.section == "03-statement_of_facts"
    # A worker claimed the second section and died: its lease went stale with nothing written.
    StageRun.objects.filter(pk=writing.pk).update(status="running", lease_owner="dead-worker",
                                                  lease_expires_at=timezone.now() - timedelta(seconds=5))
    [again] = stage_recover(enqueue=False)
    assert (again.stage, again.section, again.attempt) == ("section", "03-statement_of_facts", 2)
    runs = run_all(job)
    assert job.status == "done" and [r.section for r in runs if r.stage == "section"] == SECTIONS
    attempts = list(StageRun.objects.filter(job=job, stage="section").values_list("section", "attempt", "status"))
    assert sorted(attempts) == [("02-introduction", 1, "done"), ("03-statement_of_facts", 1, "interrupted"),
                                ("03-statement_of_facts", 2, "done"), ("04-argument", 1, "done"),
                                ("05-conclusion", 1, "done")]
    assert calls.count("plan") == 1 and calls.count("section") == 4  # nothing done before the kill was redone


FACTS = ("The lease was signed on March 3, 2021 (SMITH000001). The monthly rent is $1,250.00, due on the first day "
         "of each month (SMITH000001). On April 5, 2021 the tenant wrote that the roof leaks and nobody has come to "
         "repair it (SMITH000002). The invoice for the roof repair is dated June 15, 2021 (SMITH000003). The tenant "
         "asked for the repair in writing before withholding any rent, and the landlord did not answer the letter. "
         "Water came through the bedroom ceiling every time it rained, and the tenant kept a log of each leak.")


def test_a_body_too_large_for_the_reasoner_is_kept_as_drafted_and_says_so(matter, record, server, attorney):
    calls = stage_server(server, {"section": FACTS})
    # A context of 2,700 tokens holds the plan's answer budget (2,560) but not a body of about 700 tokens, a
    # revision at least as long and the prompt.
    scripted = register(server.url)
    scripted.context_tokens = 2700
    scripted.save()
    job = _motion(matter, attorney)
    runs = run_all(job)
    revise = next(r for r in runs if r.stage == "revise")
    assert job.status == "done" and revise.status == "done" and "revise" not in calls
    assert "would not fit the reasoner's context, so it was not revised" in revise.reason
    assert job.draft.versions.count() == 1 and runs[-1].stage == "extract"  # verify, review and extract went on


def test_the_revision_is_given_a_budget_for_the_whole_body(matter, record, server, attorney):
    from pipeline.stages import kinds

    stage_server(server, {"section": FACTS})
    register(server.url)
    job = _motion(matter, attorney)
    runs = run_all(job)
    revise = next(r for r in runs if r.stage == "revise")
    body = job.draft.versions.order_by("number").first().provenance["body"]
    budget = revise.sampling["max_tokens"]
    assert budget == (body[1] - body[0]) // 3 * 5 // 4 + 256 and budget > kinds.REGISTRY["revise"].spec.max_tokens


def test_the_request_as_a_query_is_cut_at_a_word():
    from pipeline.stages.motion import QUERY_MAX_CHARS, query_of

    request = ("Draft a motion for summary judgment arguing the defendant breached the lease and owes the unpaid "
               "rent.")
    assert len(request) > QUERY_MAX_CHARS
    assert query_of(request) == ("Draft a motion for summary judgment arguing the defendant breached the lease "
                                 "and owes the unpaid")
    assert query_of("  short\nrequest ") == "short request"
    assert query_of("x" * 150) == "x" * QUERY_MAX_CHARS  # one long word: cut where it must be
