"""Drawing a redaction box on the page viewer, in a real browser against LawDesk's ASGI server."""

import pytest
from playwright.sync_api import expect, sync_playwright

from matters.models import Redaction
from tests.support.browser import chromium, log_in
from tests.support.processes import free_port


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)  # committed data, so that the server process sees it
def test_attorney_drags_a_box_over_the_page_image_and_it_is_saved_in_points(attorney, matter, corpus, ingest,
                                                                            processes):
    """A drag over the page image fills in the box in points on the page (the image is scaled to the column), and
    the saved box is drawn back over the image with its reason code."""
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    page_record = exhibit.pages.get(number=1)
    port = free_port()
    processes.server(port)
    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            log_in(page, base)
            page.goto(f"{base}/matters/{matter.pk}/exhibits/{exhibit.pk}/pages/1/")
            image = page.locator("#page-figure img")
            expect(image).to_be_visible()
            box = image.bounding_box()
            # From a quarter to a half of the image's width, a tenth to a fifth of its height.
            page.mouse.move(box["x"] + box["width"] * 0.25, box["y"] + box["height"] * 0.10)
            page.mouse.down()
            page.mouse.move(box["x"] + box["width"] * 0.40, box["y"] + box["height"] * 0.15, steps=5)
            page.mouse.move(box["x"] + box["width"] * 0.50, box["y"] + box["height"] * 0.20, steps=5)
            page.mouse.up()
            expect(page.locator(".redaction-draft")).to_be_visible()
            page.get_by_label("Reason code").select_option("PII")
            page.get_by_role("button", name="Add redaction").click()
            expect(page.locator(".redaction-box")).to_have_text("PII")
        finally:
            browser.close()
    saved = Redaction.objects.get()
    width, height = page_record.width_pt, page_record.height_pt
    assert saved.reason == "PII" and saved.created_by == attorney
    assert saved.x0 == pytest.approx(0.25 * width, abs=3) and saved.x1 == pytest.approx(0.50 * width, abs=3)
    assert saved.y0 == pytest.approx(0.10 * height, abs=3) and saved.y1 == pytest.approx(0.20 * height, abs=3)
