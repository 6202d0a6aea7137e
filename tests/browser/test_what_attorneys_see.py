"""What an attorney reads on the pages, in a real browser against LawDesk's real ASGI server, one test per kind of
fault a newcomer saw: stored values instead of words (a status's code name, an amount's key, a date's readings,
"box(es)", a one-page Bates range written twice), quoted input quoted again, titles cut mid-word, placeholders cut
off, controls out of line in their row, a tiny instructions box, and a model's long output widening the page."""

import re
import threading

import pytest
from django.db import connection
from playwright.sync_api import expect

from matters.drafts.services import draft_create, draft_verify
from matters.models import Exhibit
from pipeline.job_models import StageRun, StageStatus
from pipeline.stages.control import job_start
from tests.factories import ExhibitFactory, ProductionFactory
from tests.support.browser import logged_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]  # committed: the server sees it

WIDTH = 1100

# The placeholder's width in the input's own font, against the room inside the input.
PLACEHOLDERS_CUT = """() => [...document.querySelectorAll('input[placeholder]')]
    .filter(el => el.offsetParent).map(el => {
  const style = getComputedStyle(el);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {name: el.name, text: el.placeholder, needs: ctx.measureText(el.placeholder).width, room};
}).filter(p => p.needs > p.room)"""


def test_stored_values_read_as_words(matter, attorney, ingest, corpus, processes):
    locked = ExhibitFactory(matter=matter, status=Exhibit.Status.NEEDS_PASSWORD,
                            reason="The PDF is encrypted: give its password to read it.")
    lease = ingest(matter, corpus("court/ca7_3.pdf"))
    one_page = ProductionFactory(matter=matter, prefix="X", first_number=117, pages=[lease.pages.get(number=1)])
    version = draft_create(matter=matter, title="Motion", author_kind="person", author=attorney,
                           text="On November 19, 2018 the tenant paid $2,500.00 to the landlord.")
    findings = {f.kind: f for f in draft_verify(version=version)}
    with logged_in_page(processes, width=WIDTH) as (page, base):
        page.goto(f"{base}/matters/{matter.pk}/exhibits/{locked.pk}/")
        expect(page.locator("dd .status").first).to_have_text("needs a password")

        page.goto(f"{base}/matters/{matter.pk}/productions/")
        row = page.locator(f"#production-{one_page.pk}")
        expect(row.locator("td").first).to_have_text(one_page.first)  # X000117, not X000117–X000117
        expect(row.locator(".status")).to_have_text("done")

        # Redact by search: the count and the pages with their plurals.
        page.goto(f"{base}/matters/{matter.pk}/exhibits/{lease.pk}/")
        form = page.locator("#redact-search form")
        form.get_by_label("Words or pattern").fill("court")
        form.get_by_role("button", name="Redact every match").click()
        message = page.locator(".messages li").first.inner_text()
        match = re.fullmatch(r"(\d+) redaction (box|boxes) added on (page|pages) ([\d, and]+)\.", message)
        assert match, message
        assert (match[2] == "box") == (match[1] == "1") and (match[3] == "page") == ("," not in match[4]
                                                                                    and "and" not in match[4])

        # A finding's detail: labelled words, the amount as a brief writes it, the date written out.
        for kind, shown in (("amount", "$2,500.00"), ("date", "November 19, 2018")):
            page.goto(f"{base}/matters/{matter.pk}/drafts/{version.draft_id}/v1/?item=f{findings[kind].pk}")
            facts = page.locator("#panel dl.facts")
            expect(facts).to_contain_text(shown)
            text = facts.inner_text()
            assert "USD:" not in text and "readings" not in text and "['" not in text, text


def test_job_pages_quote_once_cut_at_words_and_wrap_long_output(matter, attorney, processes):
    instructions = ("Draft a memorandum summarising the repeated failures of the landlord to repair the roof, with "
                    "every notice the tenant sent and the dates the landlord received them, for the damages hearing.")
    job = job_start(matter=matter, instructions=instructions, kind="summary", user=attorney, enqueue=False)
    run = job.stage_runs.get()
    run.role, run.status, run.duration_ms = "summarizer", StageStatus.DONE, 111_068
    run.decode_tok_s = 3.0238220603621215
    run.output = "A" * 3000 + " and the rest of the summary."
    run.retrieval = {"evidence_pages": 1, "evidence": {"queries": [
        {"query": '"quiet enjoyment"', "terms": ["quiet", "enjoyment"], "methods": ["lexical"]}], "pages": []}}
    run.save()
    with logged_in_page(processes, width=WIDTH) as (page, base):
        page.goto(f"{base}/matters/{matter.pk}/jobs/")
        cell = page.locator(f"td[title='{instructions}']")
        shown = cell.inner_text()
        assert shown.endswith("…") and len(shown) < len(instructions)
        kept = shown[:-1]
        assert instructions.startswith(kept) and not instructions[len(kept)].isalnum(), shown  # cut between words

        box = page.locator("#job-start textarea[name=instructions]").bounding_box()
        assert box["height"] >= 140 and box["width"] >= 500, box  # room for a paragraph of instructions

        page.goto(f"{base}/jobs/{job.pk}/")
        query = page.locator(".retrieval ol li span").first.text_content()
        assert query == "“quiet enjoyment”", query
        stage = page.locator(f"tr[data-stage='{run.stage}']")
        expect(stage).to_contain_text("3.0 tok/s")
        expect(stage).to_contain_text("1 min 51 s")

        # The finished stage's output wraps inside the page. Found, opened and measured in one step, since a live
        # update may redraw the section meanwhile (the page's first update always does).
        sizes = page.evaluate("""stage => {
            const details = document.querySelector(`details[data-stream-stage='${stage}']`);
            details.open = true;
            const stream = details.querySelector('pre.stream');
            return {right: stream.getBoundingClientRect().right, height: stream.getBoundingClientRect().height,
                    page: document.documentElement.scrollWidth, viewport: window.innerWidth};
        }""", run.stage)
        assert sizes["height"] > 0 and sizes["right"] <= WIDTH and sizes["page"] <= sizes["viewport"], sizes

        # Each new stage redraws every stage's output, drawn open only while running; what the attorney opened or
        # shut stays as the attorney left it.
        outputs = {stage: page.locator(f"details[data-stream-stage='{stage}']") for stage in (run.stage, "extract",
                                                                                             "review")}
        begin_stage(run, "extract", 1)
        expect(outputs["extract"]).to_have_count(1)
        expect(outputs["extract"]).to_have_attribute("open", "")
        expect(outputs[run.stage]).not_to_have_attribute("open", "")
        outputs[run.stage].locator("summary").click()  # opened to read
        outputs["extract"].locator("summary").click()  # shut
        begin_stage(run, "review", 2)
        expect(outputs["review"]).to_have_count(1)
        expect(outputs["review"]).to_have_attribute("open", "")
        expect(outputs[run.stage]).to_have_attribute("open", "")
        expect(outputs["extract"]).not_to_have_attribute("open", "")


def begin_stage(run, stage: str, after: int) -> None:
    """Add a running stage to ``run``'s job, ``after`` places after it, from another thread: Playwright's sync API
    runs an event loop in the test's own, where Django refuses database access."""

    def add() -> None:
        try:
            StageRun.objects.create(job_id=run.job_id, stage=stage, role="extractor", order=run.order + after,
                                    status=StageStatus.RUNNING)
        finally:
            connection.close()

    thread = threading.Thread(target=add)
    thread.start()
    thread.join()


def test_form_controls_show_their_placeholders_and_line_up(matter, attorney, ingest, corpus, processes):
    lease = ingest(matter, corpus("court/ca7_3.pdf"))
    with logged_in_page(processes, width=WIDTH) as (page, base):
        for path in (f"/matters/{matter.pk}/", f"/matters/{matter.pk}/exhibits/{lease.pk}/",
                     f"/matters/{matter.pk}/productions/", f"/matters/{matter.pk}/jobs/"):
            page.goto(base + path)
            assert page.evaluate(PLACEHOLDERS_CUT) == [], path

        # A row of the production form: its controls start on one line, and a cell holding two (the designation
        # and its custom text) stacks them as one column of one width and height, not one ragged under the other.
        page.goto(f"{base}/matters/{matter.pk}/productions/")
        order = page.locator(f"input[name='order-{lease.pk}']").bounding_box()
        select = page.locator(f"select[name='confidentiality-{lease.pk}']").bounding_box()
        custom = page.locator(f"input[name='custom-{lease.pk}']").bounding_box()
        assert abs(order["y"] - select["y"]) <= 2 and abs(order["height"] - select["height"]) <= 2, (order, select)
        assert (abs(select["x"] - custom["x"]) <= 1 and abs(select["width"] - custom["width"]) <= 1
                and abs(select["height"] - custom["height"]) <= 2), (select, custom)
        # The hold form's reason and its button share a height.
        page.goto(f"{base}/matters/{matter.pk}/")
        reason = page.locator("#retention input[name=reason]").bounding_box()
        button = page.locator("#retention form button").first.bounding_box()
        assert abs(reason["height"] - button["height"]) <= 2, (reason, button)
