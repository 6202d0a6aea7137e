"""Draft review end to end in a real browser against LawDesk's real ASGI server: step through the findings with
the keyboard, open a source page, waive one finding, fix another by editing, approve, download the DOCX."""

import io
import re

import docx
import pytest
from playwright.sync_api import expect, sync_playwright

from matters.audit.services import audit_verify
from matters.drafts.services import draft_add_attacks, draft_create, draft_verify
from tests.support.browser import chromium, log_in
from tests.support.processes import free_port

# Planted: a grounded date and Bates cite, an inspection date found nowhere (to waive), and a rent amount with
# two digits swapped (to fix by editing).
TEXT = ("# Motion to compel repairs\n\n"
        "The lease was signed on March 3, 2021. SMITH000001. "
        "The roof was inspected on July 1, 2021. "
        "The monthly rent was $1,520.00. SMITH000001.\n")
WAIVER = "Inspection date from the client's calendar; the report follows."


def key_of(version, text):
    return f"f{version.findings.filter(text=text).order_by('start').first().pk}"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)  # committed data, so that the server process sees it
def test_attorney_reviews_waives_fixes_approves_and_downloads(matter, record, processes, tmp_path):
    version = draft_create(matter=matter, title="Motion to compel repairs", text=TEXT, author_kind="model",
                           model_name="gemma-3-270m", server_name="embedded", kind="motion")
    draft_verify(version=version)
    draft_add_attacks(version=version, attacks=[
        {"quote": "The roof was inspected on July 1, 2021.", "attack": "No inspection report is in the record.",
         "severity": "high", "suggested_fix": "Cite the report."}])
    assert version.open_blocking().count() == 2
    march, bates = key_of(version, "March 3, 2021"), key_of(version, "SMITH000001")
    july = key_of(version, "July 1, 2021")
    port = free_port()
    processes.server(port)
    base = f"http://127.0.0.1:{port}"

    with sync_playwright() as p:
        browser = chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000}, accept_downloads=True)
            log_in(page, base)

            # From the matter page to the draft.
            page.goto(f"{base}/matters/{matter.pk}/")
            page.locator("#drafts").get_by_role("link", name="Motion to compel repairs").click()
            expect(page.get_by_role("heading", level=1)).to_contain_text("Motion to compel repairs")
            expect(page.locator("#count-blocking")).to_have_text("2 blocking open")
            expect(page.locator("#count-attacks")).to_contain_text("1 high")
            panel = page.locator("#panel .panel-body")

            # j / k step through the margin in reading order; the panel follows.
            page.keyboard.press("j")
            expect(panel).to_have_attribute("data-key", march)
            expect(page.locator(f"#m-{march}")).to_have_class(re.compile(r"\bcurrent\b"))
            expect(page.locator("#draft-text .seg.current")).to_have_text("March 3, 2021")
            page.keyboard.press("j")
            expect(panel).to_have_attribute("data-key", bates)
            page.keyboard.press("k")
            expect(panel).to_have_attribute("data-key", march)

            # o opens the source page: its image with the date marked, and its text.
            page.keyboard.press("o")
            expect(panel).to_have_attribute("data-key", march)
            image = page.locator("#source-figure img")
            expect(image).to_be_visible()
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
            expect(page.locator("#source-figure .source-box").first).to_be_visible()
            expect(page.locator("#source-text mark.source-match").first).to_have_text("March 3, 2021")
            expect(panel).to_contain_text("March 3, 2021 is on the cited page")
            page.screenshot(path=tmp_path / "review-source.png", full_page=True)

            # Step on to the inspection date (ungrounded) and waive it with a reason: w opens the reason form.
            for _ in range(10):
                if panel.get_attribute("data-key") == july:
                    break
                page.keyboard.press("j")
                page.wait_for_timeout(150)
            expect(panel).to_have_attribute("data-key", july)
            expect(panel).to_contain_text("blocks approval")
            page.keyboard.press("w")
            reason = page.locator("#resolve-reason")
            expect(reason).to_be_focused()
            page.keyboard.type(WAIVER)
            page.locator("#resolve-button").click()
            expect(page.locator("#count-blocking")).to_have_text("1 blocking open")
            expect(page.locator(f"#m-{july} .badge")).to_have_text("Waived")
            expect(page.locator("#panel")).to_contain_text(WAIVER)

            # Approval is refused while the rent amount blocks.
            page.locator("#approve-button").click()
            expect(page.locator(".messages")).to_contain_text("Not approved. 1 blocking finding(s) are open")
            # (Approval verified the version again, so its findings are new rows: find the amount by its text.)
            rent = page.locator("#margin .margin-item", has_text="$1,520.00")
            rent.locator("a").click()
            expect(panel).to_have_attribute("data-key", rent.get_attribute("data-key"))
            expect(panel).to_contain_text("$1,520.00")

            # Fix the amount by editing: a new version, verified at once, the waiver carried over.
            page.locator("#edit summary").click()
            editor = page.locator("#edit-text")
            editor.fill(editor.input_value().replace("$1,520.00", "$1,250.00"))
            page.locator("#save-version").click()
            expect(page).to_have_url(re.compile(r"/v2/$"))
            expect(page.locator(".messages")).to_contain_text(
                "Saved as version 2 and verified: 0 blocking findings open.")
            expect(page.locator("#count-blocking")).to_have_text("0 blocking open")
            expect(page.locator("#versions")).to_contain_text("Person: alice")

            # Approve, then download the DOCX.
            page.locator("#approve-button").click()
            expect(page.locator("#approved")).to_contain_text("Approved by alice")
            with page.expect_download() as download_info:
                page.locator("#export-docx").click()
            download = download_info.value
            assert download.suggested_filename == "motion-to-compel-repairs-v2.docx"
            path = tmp_path / download.suggested_filename
            download.save_as(path)
        finally:
            browser.close()

    document = docx.Document(io.BytesIO(path.read_bytes()))
    text = "\n".join(p.text for p in document.paragraphs)
    heading = document.paragraphs[0]
    assert heading.style.name == "Heading 1" and heading.text == "Motion to compel repairs"
    assert "The monthly rent was $1,250.00. SMITH000001." in text and "$1,520.00" not in text
    footer = document.sections[0].footer.paragraphs[0].text
    assert re.search(r"Audit log head [0-9a-f]{64}", footer)
    head = re.search(r"Audit log head ([0-9a-f]{64})", footer).group(1)
    from matters.models import AuditEntry
    assert AuditEntry.objects.filter(matter=matter, hash=head).exists() and audit_verify(matter=matter).ok
