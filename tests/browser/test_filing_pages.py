"""The filing around a draft in a real browser against LawDesk's real ASGI server: a deadline counted and saved on
the matter page (its counting shown step by step, a refusal on its field), and the table of authorities' preview
with its Constitutional Provisions."""

import datetime as dt

import pytest
from playwright.sync_api import expect

from matters.drafts.services import draft_create
from matters.models import Deadline
from tests.factories import ExhibitFactory
from tests.support.browser import logged_in_page


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)  # committed data, so that the server process sees it
def test_an_attorney_counts_and_saves_a_deadline_on_the_matter_page(matter, processes, tmp_path):
    with logged_in_page(processes) as (page, base):
        page.goto(f"{base}/matters/{matter.pk}/")
        section = page.locator("#deadlines")
        expect(section).to_contain_text("No deadlines saved for this matter.")
        form = page.locator("#deadline-form")

        # A period in hours needs the time of the event: refused on that field, what was typed kept.
        form.get_by_label("What is due").fill("Opposition to the motion to dismiss")
        form.get_by_label("Event date").fill("2025-08-16")
        form.get_by_label("Period").fill("14")
        form.locator("select[name=unit]").select_option("hours")
        form.get_by_role("button", name="Count and save").click()
        expect(page.locator("#error-event_time")).to_contain_text("counted from the time of the event")
        expect(page.locator("#deadline-form").get_by_label("What is due")).to_have_value(
            "Opposition to the motion to dismiss")

        # In days: Saturday 2025-08-16 + 14 = Saturday 08-30; Sunday 08-31; Labor Day 09-01: Tuesday 09-02.
        page.locator("#deadline-form select[name=unit]").select_option("days")
        page.locator("#deadline-form").get_by_role("button", name="Count and save").click()
        expect(page.locator("#deadline-notice")).to_have_text(
            "Opposition to the motion to dismiss saved. Due: Tuesday, September 2, 2025.")
        entry = page.locator("#deadlines li.deadline")
        expect(entry).to_have_count(1)
        expect(entry.locator(".deadline-due")).to_have_text("Tuesday, September 2, 2025")
        steps = entry.locator(".deadline-steps li")
        expect(steps.first).not_to_be_visible()
        entry.locator("summary").click()
        expect(steps.nth(0)).to_have_text("Event: Saturday, August 16, 2025. Period: 14 days after it, counted "
                                          "under Fed. R. Civ. P. 6.")
        expect(entry.locator(".deadline-steps")).to_contain_text(
            "Monday, September 1, 2025 is a legal holiday: Labor Day")
        expect(steps.last).to_have_text("Due: Tuesday, September 2, 2025.")
        page.screenshot(path=tmp_path / "deadline.png", full_page=True)

        # It stays after a reload (saved, not only shown).
        page.reload()
        expect(page.locator("#deadlines .deadline-due")).to_have_text("Tuesday, September 2, 2025")
    assert Deadline.objects.get().due_date == dt.date(2025, 9, 2)


US_CONSTITUTION = [
    "THE CONSTITUTION OF THE UNITED STATES\nArticle I\nSection 8. The Congress shall have Power ...",
    "Article III\nSection 2. The judicial Power shall extend to all Cases, in Law and Equity ...",
]
BRIEF = ("# Brief\n\nJurisdiction lies. U.S. Const. art. III, § 2.\n\n"
         "Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013), decides the point.\n\n"
         "Congress may regulate it. U.S. Const. art. I, § 8, cl. 3.\n")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_table_of_authorities_preview_lists_constitutional_provisions(matter, attorney, processes):
    constitution = ExhibitFactory(matter=matter, origin="authority", title="United States Constitution",
                                  pages=US_CONSTITUTION)
    ExhibitFactory(matter=matter, origin="authority", title="Tarrant", pages=[
        "TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL. 569 U.S. 614 (2013). Decided June 13, 2013."])
    version = draft_create(matter=matter, title="Brief", text=BRIEF, author_kind="person", author=attorney)
    with logged_in_page(processes) as (page, base):
        page.goto(f"{base}/matters/{matter.pk}/drafts/{version.draft_id}/v1/authorities/")
        table = page.locator("#toa")
        expect(table).to_be_visible(timeout=60_000)
        headings = table.locator("th[scope=rowgroup]")
        expect(headings).to_have_text(["Cases", "Constitutional Provisions"])
        rows = table.locator("tr.toa-entry")
        expect(rows).to_have_count(3)
        expect(rows.nth(0)).to_contain_text("Tarrant Regional Water Dist. v. Herrmann")
        expect(rows.nth(0).locator("em")).to_have_text("Tarrant Regional Water Dist. v. Herrmann")
        expect(rows.nth(1).locator("td").first).to_have_text("U.S. Const. art. I, § 8, cl. 3")
        expect(rows.nth(2).locator("td").first).to_have_text("U.S. Const. art. III, § 2")
        expect(rows.nth(1).locator(".toa-pages")).to_have_text("1")
        expect(rows.nth(2).get_by_role("link")).to_have_text(f"Exhibit {constitution.label}")
