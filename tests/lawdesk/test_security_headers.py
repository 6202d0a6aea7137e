"""Every page LawDesk makes carries a Content-Security-Policy that allows scripts only from its own static files,
and is never stored by a browser or a proxy (Cache-Control: private, no-store)."""

import re

import pymupdf
import pytest
from django.urls import reverse

from lawdesk.middleware import CONTENT_SECURITY_POLICY
from matters.drafts.services import draft_create

pytestmark = pytest.mark.django_db

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
EVENT_ATTRIBUTE = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)


def _directives(header: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def test_the_policy_allows_scripts_only_from_our_own_files():
    directives = _directives(CONTENT_SECURITY_POLICY)
    assert directives["script-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'none'"]
    assert directives["default-src"] == ["'self'"] and directives["base-uri"] == ["'none'"]


@pytest.fixture
def case_pages(matter, attorney, ingest, tmp_path):
    pdf = tmp_path / "lease.pdf"
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 100), "Lease signed on March 3, 2021 between Smith and Jones, rent $1,200.")
        doc.save(pdf)
    exhibit = ingest(matter, pdf)
    version = draft_create(matter=matter, title="Motion", text="The lease was signed on March 3, 2021.",
                           author_kind="person", author=attorney)
    return [
        reverse("matters:list"),
        reverse("matters:detail", args=[matter.pk]),
        reverse("matters:exhibit", args=[matter.pk, exhibit.pk]),
        reverse("matters:page", args=[matter.pk, exhibit.pk, 1]),
        reverse("matters:page_image", args=[matter.pk, exhibit.pk, 1, "full"]),
        reverse("matters:exhibit_original", args=[matter.pk, exhibit.pk]),
        reverse("matters:drafts", args=[matter.pk]),
        reverse("matters:draft_version", args=[matter.pk, version.draft_id, version.number]),
        reverse("matters:productions", args=[matter.pk]),
        reverse("matters:audit", args=[matter.pk]),
        reverse("pipeline:jobs", args=[matter.pk]),
        reverse("matters:exhibit_rows", args=[matter.pk]),
    ]


def test_case_material_is_never_stored_and_carries_the_policy(client, attorney, case_pages):
    client.force_login(attorney)
    for url in case_pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Cache-Control"] == "private, no-store", url
        assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, url
        if response["Content-Type"].startswith("text/html"):
            html = response.content.decode()
            assert not INLINE_SCRIPT.search(html), url
            assert not EVENT_ATTRIBUTE.search(html), url


def test_the_login_page_and_a_refusal_carry_the_headers_too(client, matter, make_user):
    response = client.get(reverse("login"))
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert not INLINE_SCRIPT.search(response.content.decode())
    client.force_login(make_user("eve", "assistant"))
    refused = client.get(reverse("matters:detail", args=[matter.pk]))
    assert refused.status_code == 404 and refused["Cache-Control"] == "private, no-store"
