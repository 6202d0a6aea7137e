"""Every page an attorney opens, in a real browser against the real ASGI server: no empty card, no unlabelled
input, no raw MIME type, no console error; and the Bates prefix field's pattern is one Chromium compiles."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import sync_playwright

from matters.drafts.services import draft_create, draft_verify
from pipeline.job_models import Job
from pipeline.stages.control import job_start
from tests.support.browser import chromium, log_in
from tests.support.processes import free_port

# Run in each page: what a person would see wrong on it.
CHECKS = """() => {
  const controls = [...document.querySelectorAll('input, select, textarea')].filter(el =>
      !['hidden', 'submit', 'button', 'reset', 'image'].includes((el.type || '').toLowerCase()));
  const unlabelled = controls.filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
      && !el.getAttribute('aria-labelledby')).map(el => el.outerHTML.slice(0, 120));
  const emptyCards = [...document.querySelectorAll('.card')].filter(el => !el.innerText.trim()
      && !el.querySelector('input, select, textarea, button, img, svg, table'))
      .map(el => el.outerHTML.slice(0, 120));
  const mime = (document.body.innerText.match(/\\b(application|image|text|audio|video)\\/[a-z0-9.+-]+/gi) || []);
  return {unlabelled, emptyCards, mime, title: document.title};
}"""


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)  # committed data, so that the server process sees it
def test_walk_every_page_and_find_nothing_wrong(make_user, matter, ingest, corpus, processes):
    attorney = matter.members.get()
    attorney.is_staff = attorney.is_superuser = True
    attorney.save()
    filing = ingest(matter, corpus("court/ca7_3.pdf"))
    ingest(matter, corpus("odd/letter.docx"))
    version = draft_create(matter=matter, title="Motion to stay pending appeal", kind="motion",
                           text="The lease was signed on March 3, 2021. See Calvary Chapel of Bangor v. Mills, "
                                "52 F.4th 40, 47 (1st Cir. 2022).", author_kind="person", author=attorney)
    draft_verify(version=version)
    job = job_start(matter=matter, kind="extraction", instructions="List the amounts.", user=attorney,
                    enqueue=False)
    Job.objects.filter(pk=job.pk).update(status="done")
    port = free_port()
    processes.server(port)
    base = f"http://127.0.0.1:{port}"
    pages = [
        reverse("matters:list"), matter.get_absolute_url(), f"{matter.get_absolute_url()}?q=%22Seventh+Circuit%22",
        filing.get_absolute_url(), reverse("matters:page", args=[matter.pk, filing.pk, 1]),
        reverse("matters:productions", args=[matter.pk]), reverse("matters:drafts", args=[matter.pk]),
        reverse("matters:draft", args=[matter.pk, version.draft_id]),
        reverse("matters:draft_versions", args=[matter.pk, version.draft_id]),
        reverse("matters:audit", args=[matter.pk]), reverse("pipeline:jobs", args=[matter.pk]),
        reverse("pipeline:job", args=[job.pk]), reverse("pipeline:topology"), reverse("admin:index"),
    ]
    problems: list[str] = []
    with sync_playwright() as p:
        browser = chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.goto(f"{base}/login/")
            login = page.evaluate(CHECKS)
            problems += [f"/login/: {key}: {item}" for key in ("unlabelled", "emptyCards", "mime")
                         for item in login[key]]
            log_in(page, base)
            for path in pages:
                errors.clear()
                page.goto(base + path)
                page.wait_for_load_state("networkidle")
                found = page.evaluate(CHECKS)
                if not re.search(r"LawDesk", found["title"]):
                    problems.append(f"{path}: title {found['title']!r} does not say LawDesk")
                for key in ("unlabelled", "emptyCards", "mime"):
                    problems += [f"{path}: {key}: {item}" for item in found[key]]
                problems += [f"{path}: {error}" for error in errors]

            # The production form: the browser compiles the prefix pattern and checks it as the server would.
            page.goto(base + reverse("matters:productions", args=[matter.pk]))
            prefix = page.get_by_label("Bates prefix")
            for value, valid in (("SMITH", True), ("SMITH-DEF_", True), ("9SMITH", False), ("SMITH1", False)):
                prefix.fill(value)
                if prefix.evaluate("el => el.checkValidity()") != valid:
                    problems.append(f"prefix {value!r}: the browser says valid={not valid}")
            problems += [f"productions form: {error}" for error in errors]
        finally:
            browser.close()
    assert problems == [], "\n".join(problems)
