"""The review page of a long draft: built in one pass (the margin's links and the text's spans), so its queries
do not grow with the findings, and a finding's new status shows on the next request."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from matters.drafts.review import version_history
from matters.drafts.services import draft_add_attacks, draft_create, draft_version_create, finding_waive
from matters.models import Finding

pytestmark = pytest.mark.django_db

SENTENCE = "On March 3, 2021 the court ordered payment. "
DATE = "March 3, 2021"


def long_draft(matter, attorney, sentences: int):
    """A version of ``sentences`` sentences with one ungrounded date finding on each, and one reviewer attack."""
    version = draft_create(matter=matter, title=f"Motion of {sentences} sentences", text=SENTENCE * sentences,
                           author_kind="person", author=attorney)
    add_date_findings(version, sentences)
    draft_add_attacks(version=version, attacks=[
        {"quote": "the court ordered payment", "attack": "Which court <i>exactly</i>?", "severity": "high"}])
    return version


def draft_create_version(draft, attorney, sentences: int):
    """A new version of ``draft``, of ``sentences`` sentences each with its ungrounded date finding."""
    version = draft_version_create(draft=draft, text=SENTENCE * sentences, author_kind="person", author=attorney)
    add_date_findings(version, sentences)
    return version


def add_date_findings(version, sentences: int) -> None:
    offset = SENTENCE.index(DATE)
    Finding.objects.bulk_create(
        Finding(version=version, kind=Finding.Kind.DATE, status=Finding.Status.UNGROUNDED,
                verdict=Finding.Status.UNGROUNDED, start=n * len(SENTENCE) + offset,
                end=n * len(SENTENCE) + offset + len(DATE), text=DATE, message="No page of the record has it.",
                key=f"date-{n}")
        for n in range(sentences))


def review_url(version):
    return reverse("matters:draft_version", args=[version.draft.matter_id, version.draft_id, version.number])


def queries_for(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_the_review_page_costs_the_same_queries_for_10_or_300_findings(client, matter, attorney):
    client.force_login(attorney)
    short, long = long_draft(matter, attorney, 10), long_draft(matter, attorney, 300)
    client.get(review_url(short))  # the first request of a session reads what later ones have cached
    assert queries_for(client, review_url(short)) == queries_for(client, review_url(long))
    html = client.get(review_url(long)).content.decode()
    assert len(re.findall(r'<li class="margin-item st-ungrounded"', html)) == 300
    assert len(re.findall(r'<span class="seg st-ungrounded" data-keys="f\d+" data-starts="f\d+">March 3, 2021<',
                          html)) == 300


def test_every_margin_item_links_its_own_panel(client, matter, attorney):
    client.force_login(attorney)
    version = long_draft(matter, attorney, 3)
    html = client.get(review_url(version)).content.decode()
    keys = [f"f{f.pk}" for f in version.findings.order_by("start")]
    attack = version.attacks.get()
    keys.insert(1, f"a{attack.pk}")  # the attack quotes the first sentence's second half
    for key in keys:
        item = reverse("matters:review_item",
                       args=[version.draft.matter_id, version.draft_id, version.number, key])
        assert (f'id="m-{key}" data-key="{key}" data-url="{item}"><a href="{review_url(version)}?item={key}'
                f'&amp;open=1" hx-get="{item}?open=1" hx-target="#panel">') in html
        panel = client.get(item, headers={"HX-Request": "true"})
        assert panel.status_code == 200 and f'data-key="{key}"' in panel.content.decode()
    assert re.findall(r'id="m-([fa]\d+)"', html) == keys
    assert "Which court &lt;i&gt;exactly&lt;/i&gt;?" in html


def test_a_waived_finding_shows_waived_on_the_next_request(client, matter, attorney):
    client.force_login(attorney)
    version = long_draft(matter, attorney, 300)
    finding = version.findings.order_by("start")[150]
    before = client.get(review_url(version)).content.decode()
    assert f'<li class="margin-item st-ungrounded" id="m-f{finding.pk}"' in before
    finding_waive(finding=finding, user=attorney, reason="The order's date is on the docket sheet.")
    after = client.get(review_url(version)).content.decode()
    assert f'<li class="margin-item st-waived" id="m-f{finding.pk}"' in after
    assert re.search(rf'<span class="seg st-waived" data-keys="f{finding.pk}"', after)
    assert 'id="count-blocking">299 blocking open<' in after


def counts_line(html: str) -> str:
    return re.search(r'<p class="review-counts" id="review-counts">.*?</p>', html, re.S).group()


def test_the_counts_cover_the_whole_version_whatever_the_filter_shows(client, matter, attorney):
    client.force_login(attorney)
    version = long_draft(matter, attorney, 30)
    finding_waive(finding=version.findings.order_by("start")[0], user=attorney, reason="On the docket sheet.")
    whole = counts_line(client.get(review_url(version)).content.decode())
    assert 'id="count-blocking">29 blocking open<' in whole and "1 waived or confirmed" in whole
    assert "Attacks: 1 high, 0 medium, 0 low" in whole
    for query in ("?status=waived", "?kind=amount", "?kind=attack", "?status=ungrounded&kind=date"):
        assert counts_line(client.get(review_url(version) + query).content.decode()) == whole, query


def test_the_version_history_counts_every_version_in_two_queries(matter, attorney, django_assert_num_queries):
    first = long_draft(matter, attorney, 3)
    draft = first.draft
    second = draft_create_version(draft, attorney, sentences=5)
    finding_waive(finding=second.findings.order_by("start")[0], user=attorney, reason="On the docket sheet.")
    with django_assert_num_queries(2):
        rows = version_history(draft)
    assert [(row.version.number, row.findings, row.blocking_open) for row in rows] == [(2, 5, 4), (1, 3, 3)]
