"""A model's sentence that holds a checked claim (a date, an amount) is exempt only where the claim's finding
covers it: a person, a court or a number it asserts besides gets its finding unless the sentence cites a source."""

import pytest

from matters.drafts.services import draft_create, draft_verify


def _asserted(findings, needle, draft):
    """The uncited-fact finding whose span holds ``needle`` of ``draft``, or None."""
    at = draft.index(needle)
    return next((f for f in findings if f.detail.get("asserts") and f.start <= at < f.end), None)


@pytest.mark.django_db
def test_a_checked_claim_exempts_only_its_own_span_of_a_models_sentence(matter, record):
    draft = ("On March 3, 2021, Judge Harold Fakename granted the motion. "
             "On March 3, 2021, the tenant paid 14 installments. "
             "On March 3, 2021, the Ninth Circuit heard the appeal. "
             "The lease was signed on March 3, 2021. "
             "On March 3, 2021, the lease was signed by Mr. Smith. SMITH000001.")
    version = draft_create(matter=matter, title="Summary", text=draft, author_kind="model", model_name="test-model")
    findings = draft_verify(version=version)
    for needle, what in (("Judge Harold", "a person"), ("14 installments", "a number"), ("Ninth Circuit", "a court")):
        finding = _asserted(findings, needle, draft)
        assert finding is not None and finding.detail["asserts"] == what, (needle, [(f.text, f.status)
                                                                                    for f in findings])
        assert finding.status == "needs_record_cite"
    # The date is its own claim: its digits assert no number besides it; a sentence citing a record page is cited.
    assert _asserted(findings, "The lease was signed on", draft) is None
    assert _asserted(findings, "by Mr. Smith", draft) is None


@pytest.mark.django_db
def test_what_lawdesk_wrote_from_the_matter_record_is_not_read_as_a_models_assertion(matter, record):
    caption = "UNITED STATES DISTRICT COURT\n\nSmith v. Jones\nCase No. 1:24-cv-01234\n\nMOTION\n\n"
    body = "Judge Harold Fakename granted the motion."
    draft = caption + body + "\n\nRespectfully submitted,\n\nCounsel for 14 tenants\n"
    end = len(caption) + len(body)
    spans = [[0, len(caption)], [end, len(draft)]]
    version = draft_create(matter=matter, title="Motion", text=draft, author_kind="model", model_name="test-model",
                           provenance={"record_spans": spans})
    findings = draft_verify(version=version)
    # The caption's court and number and the closing's number are the record's; the body's judge is still the
    # model's assertion, and no sentence runs from the caption into it.
    assert _asserted(findings, "DISTRICT COURT", draft) is None and _asserted(findings, "14 tenants", draft) is None
    judge = _asserted(findings, "Judge Harold", draft)
    assert judge is not None and judge.status == "needs_record_cite" and judge.start >= len(caption)
    plain = draft_create(matter=matter, title="Motion", text=draft, author_kind="model", model_name="test-model")
    assert _asserted(draft_verify(version=plain), "DISTRICT COURT", draft) is not None
