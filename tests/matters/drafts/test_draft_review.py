"""The draft review page: findings and attacks on their spans, the side panel with the source page, waivers,
edits that make new versions, approval refused while a finding blocks, the audit page, and escaping."""

import re

import pytest
from django.urls import reverse

from matters.audit.services import audit_verify
from matters.drafts.markdown import render_html
from matters.drafts.review import margin, segments
from matters.drafts.services import draft_add_attacks, draft_create, draft_verify, finding_waive
from matters.models import AuditEntry, DraftVersion, Finding
from tests.support.record import pdf_pages

pytestmark = pytest.mark.django_db

TEXT = ("# Motion to compel repairs\n\n"
        "The lease was signed on March 3, 2021. SMITH000001. The roof was inspected on July 1, 2021. "
        "Landlords must repair. Brown v. Greenfield Props., 512 F.3d 441, 447 (9th Cir. 2008).\n")
ATTACKS = [
    {"quote": "The roof was inspected on July 1, 2021.", "attack": "No inspection report is in the record.",
     "severity": "high", "suggested_fix": "Cite the report or drop the sentence."},
    {"quote": "Landlords must repair", "attack": "Overstates the duty <b>badly</b>.", "severity": "low"},
]


@pytest.fixture
def version(matter, record):
    version = draft_create(matter=matter, title="Motion to compel repairs", text=TEXT, author_kind="model",
                           model_name="gemma-3-270m", server_name="embedded", kind="motion",
                           provenance={"job": 7, "stages": [{"stage": "draft", "server": "embedded"}]})
    draft_verify(version=version)
    draft_add_attacks(version=version, attacks=ATTACKS)
    return version


def review_url(version, **query):
    url = reverse("matters:draft_version", args=[version.draft.matter_id, version.draft_id, version.number])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def item_url(version, key):
    return reverse("matters:review_item", args=[version.draft.matter_id, version.draft_id, version.number, key])


@pytest.fixture
def logged_in(client, attorney):
    client.force_login(attorney)
    return client


# -- segments ------------------------------------------------------------------------------------------------------

class Span:
    def __init__(self, pk, start, end, status="grounded", severity="medium"):
        self.pk, self.start, self.end, self.status, self.severity = pk, start, end, status, severity
        self.kind = "date"


def test_overlapping_spans_cut_the_text_into_segments_that_join_back():
    text = "0123456789abcdef"
    findings = [Span(1, 2, 8, "grounded"), Span(2, 4, 6, "ungrounded"), Span(3, 16, 16)]
    attacks = [Span(9, 5, 12, severity="high")]
    cut = segments(text, findings, attacks)
    assert "".join(s.text for s in cut) == text
    assert [s.text for s in cut] == ["01", "23", "4", "5", "67", "89ab", "cdef", ""]
    assert cut[2].findings == [1, 2] and cut[2].status == "ungrounded" and cut[2].attacks == []
    assert cut[3].findings == [1, 2] and cut[3].attacks == [9] and cut[3].severity == "high"
    assert cut[4].findings == [1] and cut[4].attacks == [9] and cut[4].status == "grounded"
    assert cut[-1].anchors == ["f3"]  # an empty span at the end keeps its anchor
    order = [i.key for i in margin(findings, attacks + [Span(10, None, None)])]
    assert order == ["f1", "f2", "a9", "f3", "a10"]


# -- the page ------------------------------------------------------------------------------------------------------

def test_the_review_page_marks_every_finding_and_attack_on_its_span(logged_in, version):
    response = logged_in.get(review_url(version))
    assert response.status_code == 200
    html = response.content.decode()
    findings = list(version.findings.all())
    assert {f.status for f in findings} >= {"grounded", "ungrounded", "unverified_authority"}
    for finding in findings:
        spans = re.findall(rf'<span class="seg[^"]*" data-keys="[^"]*\bf{finding.pk}\b[^"]*"[^>]*>([^<]*)</span>', html)
        assert "".join(spans) == finding.text
        assert f'id="m-f{finding.pk}"' in html
    date = version.findings.get(text="July 1, 2021")
    assert re.search(rf'class="seg st-ungrounded atk atk-high" data-keys="f{date.pk} a\d+"', html)
    margin_keys = re.findall(r'id="m-([fa]\d+)"', html)
    starts = {f"f{f.pk}": f.start for f in findings} | {f"a{a.pk}": a.start for a in version.attacks.all()}
    assert [starts[k] for k in margin_keys] == sorted(starts[k] for k in margin_keys)  # reading order
    counts = response.context["counts"]
    assert (counts.blocking_open, counts.attacks_high, counts.attacks_low) == (2, 1, 1)
    assert re.search(r'id="count-blocking">2 blocking open<', html)
    assert 'id="approve-button"' in html and "2 blocking findings open" in html


def test_filters_by_kind_and_status(logged_in, version):
    html = logged_in.get(review_url(version, kind="date", status="ungrounded")).content.decode()
    keys = re.findall(r'id="m-([fa]\d+)"', html)
    assert keys == [f"f{version.findings.get(text='July 1, 2021').pk}"]
    attacks_only = logged_in.get(review_url(version, kind="attack")).content.decode()
    assert all(k.startswith("a") for k in re.findall(r'id="m-([fa]\d+)"', attacks_only))
    partial = logged_in.get(review_url(version, kind="date"), headers={"HX-Request": "true"})
    assert partial.content.decode().lstrip().startswith('<div id="review-body">')


def test_a_non_member_gets_404_and_an_assistant_sees_no_attorney_buttons(client, version, make_user, matter):
    outsider = make_user("mallory", "attorney")
    client.force_login(outsider)
    finding = version.findings.get(text="July 1, 2021")
    assert client.get(review_url(version)).status_code == 404
    assert client.get(item_url(version, f"f{finding.pk}"), headers={"HX-Request": "true"}).status_code == 404
    assert client.get(reverse("matters:audit", args=[matter.pk])).status_code == 404
    assistant = make_user("bob", "assistant")
    matter.members.add(assistant)
    client.force_login(assistant)
    html = client.get(review_url(version, item=f"f{finding.pk}")).content.decode()
    assert "approve-button" not in html and "resolve-form" not in html
    assert 'id="edit-text"' in html  # assistants edit drafts
    url = reverse("matters:finding_resolve", args=[matter.pk, version.draft_id, 1, finding.pk, "waive"])
    assert client.post(url, {"reason": "The report is on its way from the client."}).status_code == 403
    finding.refresh_from_db()
    assert finding.status == "ungrounded"  # the service refuses, not only the page
    approve = reverse("matters:draft_approve", args=[matter.pk, version.draft_id, 1])
    assert client.post(approve).status_code == 403


def test_the_panel_shows_the_source_page_with_the_words_marked(logged_in, version, matter):
    date = version.findings.get(text="March 3, 2021")
    response = logged_in.get(item_url(version, f"f{date.pk}") + "?open=1", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert date.message in html.replace("&#x27;", "'")
    lease = date.sources[0]
    assert reverse("matters:page_image", args=[matter.pk, lease["exhibit"], lease["page"], "full"]) in html
    assert len(re.findall(r'class="source-box"', html)) >= 1
    assert '<mark class="source-match">March 3, 2021</mark>' in html
    assert AuditEntry.objects.filter(matter=matter, action="page.view", detail__from="draft_review").exists()
    # A Bates cite opens the page it names, marking the facts of the sentence it supports.
    bates = version.findings.get(text="SMITH000001")
    html = logged_in.get(item_url(version, f"f{bates.pk}") + "?open=1", headers={"HX-Request": "true"}).content.decode()
    assert "SMITH000001" in html and '<mark class="source-match">March 3, 2021</mark>' in html
    # Without a source, the panel says so; an attack lists the findings inside its quoted span.
    attack = version.attacks.get(severity="high")
    html = logged_in.get(item_url(version, f"a{attack.pk}"), headers={"HX-Request": "true"}).content.decode()
    assert "No inspection report is in the record." in html and "July 1, 2021" in html


def test_waive_needs_a_reason_and_updates_the_counts(logged_in, version, matter):
    date = version.findings.get(text="July 1, 2021")
    url = reverse("matters:finding_resolve", args=[matter.pk, version.draft_id, 1, date.pk, "waive"])
    html = logged_in.post(url, {"reason": "ok"}, headers={"HX-Request": "true"}).content.decode()
    assert 'id="resolve-error"' in html and "at least 10 characters" in html
    date.refresh_from_db()
    assert date.status == "ungrounded"
    reason = "Inspection date from the client's calendar; report to follow."
    html = logged_in.post(url, {"reason": reason, "kind": "date"}, headers={"HX-Request": "true"}).content.decode()
    date.refresh_from_db()
    assert date.status == "waived" and date.resolution_reason == reason
    assert 'id="count-blocking">1 blocking open<' in html
    assert "Inspection date from the client&#x27;s calendar" in html
    entry = AuditEntry.objects.get(matter=matter, action="finding.waive")
    assert entry.detail["reason"] == reason and entry.actor == "alice"


def test_approval_is_refused_with_a_clear_message_while_a_finding_blocks(logged_in, version, matter):
    url = reverse("matters:draft_approve", args=[matter.pk, version.draft_id, 1])
    response = logged_in.post(url, follow=True)
    html = response.content.decode()
    assert "Not approved. 2 blocking finding(s) are open" in html
    version.refresh_from_db()
    assert version.approved_at is None


def test_an_edit_makes_a_person_version_verified_at_once_with_attacks_re_anchored(logged_in, version, matter, attorney):
    edited = (TEXT.replace(" The roof was inspected on July 1, 2021.", "")
              .replace("Brown v. Greenfield Props., 512 F.3d 441, 447 (9th Cir. 2008).", "Cf. the lease.")
              .replace("\n", "\r\n"))  # as a browser sends a textarea
    url = reverse("matters:draft_edit", args=[matter.pk, version.draft_id, 1])
    response = logged_in.post(url, {"text": edited})
    assert response.status_code == 302 and response["Location"].endswith("/v2/")
    new = DraftVersion.objects.get(draft=version.draft, number=2)
    assert new.text == edited.replace("\r\n", "\n")
    assert new.author_kind == "person" and new.author == attorney and new.verified_at is not None
    assert new.open_blocking().count() == 0
    for finding in new.findings.all():
        assert new.text[finding.start:finding.end] == finding.text
    attacks = {a.quote: a for a in new.attacks.all()}
    assert attacks["The roof was inspected on July 1, 2021."].outdated
    still = attacks["Landlords must repair"]
    assert new.text[still.start:still.end] == "Landlords must repair" and still.carried_from.version == version
    html = logged_in.get(review_url(new)).content.decode()
    assert "outdated" in html and "1 outdated" in html
    # An edit of a version that is no longer the latest is refused: nothing is overwritten.
    response = logged_in.post(url, {"text": TEXT + "More."}, follow=True)
    assert "was saved while you edited version 1" in response.content.decode()
    assert version.draft.versions.count() == 2
    # The history says who made each version, and the diff shows what changed.
    history = logged_in.get(reverse("matters:draft_versions", args=[matter.pk, version.draft_id])).content.decode()
    assert "gemma-3-270m on embedded" in history and "Person</span> alice" in history
    assert "<del>The roof was inspected on July 1, 2021. </del>" in history
    assert "<ins>Cf. the lease</ins>" in history
    approve = reverse("matters:draft_approve", args=[matter.pk, version.draft_id, 2])
    logged_in.post(approve)
    new.refresh_from_db()
    assert new.approved_by == attorney


def test_a_script_in_a_draft_or_a_page_shows_as_text(logged_in, matter, record, ingest, tmp_path):
    hostile_page = "<script>alert('page')</script> The landlord signed the <b>addendum</b> on May 2, 2021."
    exhibit = ingest(matter, pdf_pages([hostile_page], tmp_path / "addendum.pdf"))
    assert "<script>" in exhibit.pages.get().text
    text = ("<script>alert('draft')</script> The addendum was signed on May 2, 2021. "
            "<img src=x onerror=alert(1)> [link](javascript:alert(2))")
    version = draft_create(matter=matter, title="<script>alert('title')</script>", text=text, author_kind="model",
                           model_name="<i>m</i>")
    draft_verify(version=version)
    draft_add_attacks(version=version, attacks=[{"quote": "The addendum", "attack": "<script>alert('attack')</script>",
                                                 "severity": "high"}])
    html = logged_in.get(review_url(version)).content.decode()
    assert "<script>alert" not in html and "<img src=x" not in html and "<i>m</i>" not in html
    assert "&lt;script&gt;alert(&#x27;draft&#x27;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in html
    date = version.findings.get(text="May 2, 2021")
    panel = logged_in.get(item_url(version, f"f{date.pk}") + "?open=1", headers={"HX-Request": "true"}).content.decode()
    assert "<script>" not in panel and "&lt;script&gt;alert(&#x27;page&#x27;)&lt;/script&gt;" in panel
    assert "&lt;b&gt;addendum&lt;/b&gt;" in panel
    attack = version.attacks.get()
    panel = logged_in.get(item_url(version, f"a{attack.pk}"), headers={"HX-Request": "true"}).content.decode()
    assert "<script>" not in panel and "&lt;script&gt;alert(&#x27;attack&#x27;)" in panel


def test_markdown_keeps_only_formatting_tags():
    html = render_html("# Title\n\n*em* **strong** <script>x()</script> [a](https://example.com) "
                       "![i](https://example.com/i.png)\n\n<iframe src=x></iframe>\n\nNote.[^1]\n\n[^1]: A note.")
    assert "<h1>Title</h1>" in html and "<em>em</em>" in html and "<strong>strong</strong>" in html
    assert "<script" not in html and "<a " not in html and "<img" not in html and "<iframe" not in html
    assert "&lt;script&gt;" in html and "<sup>1</sup>" in html and "<li>A note.</li>" in html


def test_the_audit_page_shows_the_log_and_its_head_hash_and_a_rewrite_is_caught(logged_in, version, matter, attorney):
    finding_waive(finding=version.findings.get(text="July 1, 2021"), user=attorney,
                  reason="Inspection date from the client's calendar.")
    url = reverse("matters:audit", args=[matter.pk])
    html = logged_in.get(url).content.decode()
    check = audit_verify(matter=matter)
    assert check.ok and f'id="audit-head">{check.head_hash}<' in html
    for action in ("exhibit.upload", "production.done", "draft.version", "finding.waive"):
        assert f'data-action="{action}"' in html
    waivers = logged_in.get(url + "?what=waivers").content.decode()
    assert set(re.findall(r'data-action="([^"]+)"', waivers)) == {"finding.waive"}
    # Rewriting an entry behind the log's back (a database edit) breaks the chain, and the page says where.
    entry = AuditEntry.objects.get(matter=matter, action="finding.waive")
    AuditEntry.objects.filter(pk=entry.pk).update(detail={"reason": "nothing to see"})
    html = logged_in.get(url).content.decode()
    assert f"does not verify</strong> at entry {entry.seq}" in html
    assert not audit_verify(matter=matter).ok


def test_only_the_latest_version_takes_waivers(logged_in, version, matter, attorney):
    from matters.drafts.services import draft_version_create

    draft_version_create(draft=version.draft, text=TEXT + "\nMore.", author_kind="person", author=attorney)
    date = version.findings.get(text="July 1, 2021")
    url = reverse("matters:finding_resolve", args=[matter.pk, version.draft_id, 1, date.pk, "waive"])
    logged_in.post(url, {"reason": "Inspection date from the client's calendar."})
    date.refresh_from_db()
    assert date.status == Finding.Status.UNGROUNDED


def test_a_waiver_posted_for_a_finding_replaced_by_a_new_verification_says_so(logged_in, version, matter):
    date = version.findings.get(text="July 1, 2021")
    draft_verify(version=version)  # an approval attempt in another tab verified the version again
    url = reverse("matters:finding_resolve", args=[matter.pk, version.draft_id, 1, date.pk, "waive"])
    html = logged_in.post(url, {"reason": "Inspection date from the client's calendar."},
                          headers={"HX-Request": "true"}).content.decode()
    assert "replaced when the version was verified again" in html
    assert version.findings.get(text="July 1, 2021").status == "ungrounded"


def test_the_page_links_the_job_that_wrote_the_version_and_shows_its_records(logged_in, version):
    html = logged_in.get(review_url(version)).content.decode()
    assert 'href="/jobs/7/"' in html and "Job #7" in html
    assert "&quot;server&quot;: &quot;embedded&quot;" in html


def test_a_waiver_updates_the_versions_table_with_the_counts(logged_in, version, matter):
    before = logged_in.get(review_url(version)).content.decode()
    assert "(2 blocking)" in before and 'id="count-blocking">2 blocking open<' in before
    date = version.findings.get(text="July 1, 2021")
    url = reverse("matters:finding_resolve", args=[matter.pk, version.draft_id, 1, date.pk, "waive"])
    html = logged_in.post(url, {"reason": "Inspection date from the client's calendar."},
                          headers={"HX-Request": "true"}).content.decode()
    assert 'id="count-blocking">1 blocking open<' in html
    versions = html[html.index('id="versions" hx-swap-oob="true"'):]
    assert "(1 blocking)" in versions and "(2 blocking)" not in versions


def test_a_pin_that_cannot_be_checked_is_shown_counted_and_confirmed(logged_in, matter, record, attorney):
    # The record's opinion shows no reporter pages: a pin into it cannot be checked, which blocks nothing.
    text = "A landlord must repair. Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614, 620 (2013)."
    version = draft_create(matter=matter, title="Pin", text=text, author_kind="person", author=attorney)
    draft_verify(version=version)
    pin = version.findings.get(kind="case_citation")
    assert pin.status == "pin_unchecked"
    response = logged_in.get(review_url(version))
    html = response.content.decode()
    assert response.context["counts"].pin_unchecked == 1 and response.context["counts"].blocking_open == 0
    assert 'id="count-pin-unchecked">1 pin cite cannot be checked<' in html
    assert re.search(rf'class="seg st-pin_unchecked[^"]*" data-keys="f{pin.pk}"', html)
    assert "Cannot check the pin" in html
    url = reverse("matters:finding_resolve", args=[matter.pk, version.draft_id, 1, pin.pk, "confirm"])
    logged_in.post(url, {"reason": "Pin 620 checked in the U.S. Reports."}, headers={"HX-Request": "true"})
    pin.refresh_from_db()
    assert pin.status == "confirmed" and pin.verdict == "pin_unchecked"


def test_an_unverified_version_says_it_was_not_checked_rather_than_that_it_claims_nothing(logged_in, matter,
                                                                                        attorney):
    # A job that failed before its verifier leaves such a version; approving it verifies it first.
    version = draft_create(matter=matter, title="Motion", text=TEXT, author_kind="model", kind="motion")
    html = logged_in.get(review_url(version)).content.decode()
    assert "Not verified yet" in html and "has not checked this version yet" in html
    assert "found no claim to check" not in html
    draft_verify(version=version)
    version.findings.all().delete()  # a checked version with no claim in it
    html = logged_in.get(review_url(version)).content.decode()
    assert "Not verified yet" not in html and "The verifier found no claim to check" in html


def test_the_read_in_full_box_is_asked_for_only_where_the_verifier_grounded_nothing(logged_in, version, matter):
    # The fixture's version has grounded findings: approving it needs no confirmation, so none is offered.
    assert version.findings.filter(verdict="grounded").exists()
    assert 'id="read-confirmed"' not in logged_in.get(review_url(version)).content.decode()
    unchecked = draft_create(matter=matter, title="Plain", text="Judge Alsup presided over the hearing.",
                             author_kind="model", model_name="test-model")
    draft_verify(version=unchecked)
    assert not unchecked.findings.filter(verdict="grounded").exists()
    assert 'id="read-confirmed"' in logged_in.get(review_url(unchecked)).content.decode()


def test_a_reviewer_quote_anchors_on_whole_words_only():
    from matters.drafts.services import anchor_quote

    text = "The landlord renamed the account. The “roof”\nleaks."
    assert anchor_quote(text, "name") is None  # not the inside of "renamed"
    assert anchor_quote(text, "the roof leaks") == (text.index("The “roof”"), len(text) - 1)
    assert anchor_quote(text, "renamed the account") == (text.index("renamed"), text.index(" account") + 8)
