"""The upload flow end to end, in a real browser against LawDesk's real processes (the ASGI server and a db_worker)."""

import re

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.support.browser import chromium, log_in
from tests.support.processes import free_port

PROCESSING_TIMEOUT_MS = 120_000  # OCR of the scan runs on two cores
ROWS = "#exhibit-rows tr[data-status]"

# Words the OCR reads from odd/scan-1p.pdf (a scanned Tennessee Workers' Compensation Appeals Board opinion).
SCAN_WORDS = ["Morristown", "Tennessee", "summary judgment", "Goodwin"]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)  # committed data, so that the server and the worker processes see it
def test_attorney_uploads_files_and_watches_them_become_ready_live(make_user, corpus, processes, tmp_path):
    """An attorney logs in, creates a matter through the "New matter" form and drops three files on it at once
    (two born-digital court filings and a one-page scan). Without any reload, the exhibit list follows the worker
    over the page's WebSocket until all three rows are ``ready``; the scan's page 1 then shows its image and the
    words Tesseract read from it, and says that its text came from OCR."""
    make_user("alice", "attorney")
    processes.worker()
    port = free_port()
    processes.server(port)
    base = f"http://127.0.0.1:{port}"
    files = [corpus("court/ca7_3.pdf"), corpus("court/ca4_17.pdf"), corpus("odd/scan-1p.pdf")]

    with sync_playwright() as p:
        browser = chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            frames: list[str] = []  # what the server pushed over the progress WebSocket
            page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))

            # Log in.
            log_in(page, base)
            expect(page.get_by_role("heading", name="Matters", exact=True)).to_be_visible()

            # Create a matter; the form lands on the matter's page, which opens the progress WebSocket.
            page.get_by_label("Caption / name").fill("Goodwin v. Morristown Driver's Services")
            page.get_by_label("Court").fill("Tenn. Workers' Comp. App. Bd.")
            page.get_by_label("Case number").fill("2017-03-1235")
            with page.expect_websocket(predicate=lambda ws: "/progress/" in ws.url):
                page.get_by_role("button", name="Create matter").click()
            expect(page).to_have_url(re.compile(rf"^{re.escape(base)}/matters/\d+/$"))
            matter_url = page.url
            expect(page.get_by_role("heading", level=1)).to_have_text("Goodwin v. Morristown Driver's Services")
            expect(page.locator("#exhibit-rows")).to_contain_text("No case materials yet.")

            # Upload the three files together (origin left at its default, Client).
            page.evaluate("window.__marker = 1")  # lost if the page reloads
            expect(page.locator("#upload-origin")).to_have_value("client")
            page.locator("#upload-input").set_input_files(files)

            progress = page.locator("#upload-progress li")
            expect(progress).to_have_count(3)
            for item in progress.all():
                expect(item).to_have_attribute("data-status", "queued")
                expect(item.locator(".note")).to_have_text("uploaded; processing is shown in the exhibit list")
            expect(page.locator(ROWS)).to_have_count(3)

            # The rows become ready through the WebSocket's swaps alone.
            page.wait_for_function(
                """selector => {
                    const rows = [...document.querySelectorAll(selector)];
                    return rows.length >= 3 && rows.every(row => row.dataset.status === "ready");
                }""",
                arg=ROWS,
                timeout=PROCESSING_TIMEOUT_MS,
            )
            rows = page.locator(ROWS)
            ids = [row.get_attribute("id") for row in rows.all()]
            assert len(ids) == 3 and len(set(ids)) == 3, f"expected one row per uploaded file, got {ids}"
            expect(rows).to_have_count(3)
            for row in rows.all():
                expect(row).to_have_attribute("data-status", "ready")
                expect(row.locator(".status")).to_have_text("ready")
            assert page.evaluate("window.__marker") == 1, "the matter page was reloaded"
            assert page.url == matter_url
            assert any('data-status="ready"' in frame for frame in frames), "no ready row came over the WebSocket"

            # Labels follow the order in which the files were chosen.
            for number, name in enumerate(("ca7_3", "ca4_17", "scan-1p"), start=1):
                row = rows.filter(has_text=f"{name}.pdf")
                expect(row.locator("td").first).to_have_text(f"Exhibit {number}")

            scan_row = rows.filter(has_text="scan-1p.pdf")
            expect(scan_row).to_have_count(1)
            expect(scan_row).to_contain_text("(1 OCR)")
            page.screenshot(path=tmp_path / "matter-page.png", full_page=True)

            # The scanned exhibit, then its page 1.
            scan_row.locator("td a").first.click()
            expect(page.get_by_role("heading", level=1)).to_contain_text("Exhibit")
            expect(page.locator("dl.facts")).to_contain_text("scan-1p.pdf")
            expect(page.locator("dl.facts")).to_contain_text("1 (0 from the PDF text layer, 1 by OCR)")
            # Page images come from a later task; the link to page 1 is there either way.
            page.locator(".thumbs a").filter(has_text="1 · ocr").click()

            expect(page).to_have_url(re.compile(r"/pages/1/$"))
            expect(page.get_by_role("heading", level=1)).to_have_text("Page 1 of 1")
            image = page.get_by_role("img", name="Image of page 1")
            expect(image).to_be_visible(timeout=PROCESSING_TIMEOUT_MS)  # the figure asks until its image exists
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
            text = page.locator("#page-text")
            for word in SCAN_WORDS:
                expect(text).to_contain_text(word)
            expect(page.locator(".viewer")).to_contain_text("Text from OCR (Tesseract)")
            page.screenshot(path=tmp_path / "scan-page-1.png", full_page=True)
        finally:
            browser.close()
