"""Driving Debian's Chromium with Playwright: the launch arguments and the login every browser test starts with."""

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from tests.support.accounts import PASSWORD
from tests.support.processes import free_port

CHROMIUM = "/usr/bin/chromium"  # Debian's Chromium; Playwright never downloads a browser here
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium(playwright: Playwright) -> Browser:
    """Launch headless Debian Chromium; the caller closes it."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def log_in(page: Page, base: str, username: str = "alice", password: str = PASSWORD) -> None:
    """Log ``username`` in through the login form of the server at ``base`` (``http://127.0.0.1:PORT``) and wait
    until the login has landed on the matters list. A page already on the login form is used as it is, so a test
    may look at the form first."""
    if page.url != f"{base}/login/":
        page.goto(f"{base}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{base}/")


@contextmanager
def logged_in_page(processes, *, width: int = 1300, height: int = 1000) -> Iterator[tuple[Page, str]]:
    """Start the server process on a free port, open Chromium, log the attorney in and yield ``(page, base)``;
    the browser is closed afterwards, whatever the test did."""
    port = free_port()
    processes.server(port)
    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as playwright:
        browser = chromium(playwright)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            log_in(page, base)
            yield page, base
        finally:
            browser.close()
