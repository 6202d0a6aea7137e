"""Exports of approved versions: DOCX (headings, paragraphs, footnotes), PDF, the verification report; each one
generated material, audited, and carrying the audit chain's head hash."""

import io
import shutil
import subprocess
import zipfile

import docx
import pymupdf
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from matters.audit.services import audit_verify
from matters.drafts.exports import draft_export, pdf_text
from matters.drafts.services import (
    draft_add_attacks,
    draft_approve,
    draft_create,
    draft_verify,
    finding_confirm,
    finding_waive,
)
from matters.models import AuditEntry, GeneratedDocument
from matters.provenance import sha256_bytes
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db

TEXT = """# Motion to compel repairs

## Facts

The lease was signed on March 3, 2021. SMITH000001. The roof was inspected on July 1, 2021.[^1]

The tenant wrote that “[w]e will not pay the rent for April, because the roof leaks.” SMITH000002.

## Argument

Landlords must repair. Brown v. Greenfield Props., 512 F.3d 441, 447 (9th Cir. 2008).[^2]

- The rent was $1,250.00 a month (Ex. 1 at 1).
- *Relief requested*: an order to repair.

[^1]: The client's calendar; the inspection report is to follow.
[^2]: Checked for the duty to repair.
"""


@pytest.fixture
def approved(matter, record, attorney):
    version = draft_create(matter=matter, title="Motion to compel repairs", text=TEXT, author_kind="model",
                           model_name="gemma-3-270m", server_name="embedded", kind="motion")
    draft_verify(version=version)
    draft_add_attacks(version=version, attacks=[{"quote": "Landlords must repair", "attack": "Overstates it.",
                                                 "severity": "medium"}])
    finding_waive(finding=version.findings.get(text="July 1, 2021"), user=attorney,
                  reason="Inspection date from the client's calendar.")
    finding_confirm(finding=version.findings.get(kind="case_citation"), user=attorney,
                    reason="Checked in Westlaw on 2026-11-30: good law.")
    return draft_approve(version=version, user=attorney)


@pytest.fixture
def approved_brief(matter, record, attorney):
    """The motion approved with the opinion it cites in the matter as an authority: the Word export, which
    carries the brief's table of authorities, lists only authorities the matter holds."""
    ExhibitFactory(matter=matter, origin="authority", title="Brown v. Greenfield Properties", pages=[
        "BROWN v. GREENFIELD PROPERTIES, 512 F.3d 441 (9th Cir. 2008). Opinion of the court."])
    version = draft_create(matter=matter, title="Motion to compel repairs", text=TEXT, author_kind="model",
                           model_name="gemma-3-270m", server_name="embedded", kind="motion")
    draft_verify(version=version)
    finding_waive(finding=version.findings.get(text="July 1, 2021"), user=attorney,
                  reason="Inspection date from the client's calendar.")
    return draft_approve(version=version, user=attorney)


def page_texts(content: bytes) -> list[str]:
    with pymupdf.open("pdf", content) as document:
        return [page.get_text() for page in document]


def test_docx_has_the_headings_paragraphs_and_footnotes(approved_brief, attorney, matter):
    approved = approved_brief
    export = draft_export(version=approved, user=attorney, kind="docx")
    document = docx.Document(io.BytesIO(export.content))
    paragraphs = [(p.style.name, p.text) for p in document.paragraphs]
    assert ("Heading 1", "Motion to compel repairs") in paragraphs
    assert ("Heading 2", "Argument") in paragraphs
    assert ("Normal", "The lease was signed on March 3, 2021. SMITH000001. The roof was inspected on July 1, 2021.") \
        in paragraphs
    assert ("List Bullet", "Relief requested: an order to repair.") in paragraphs
    body = [p.text for p in document.paragraphs].index("Motion to compel repairs")
    italic = [r.text for p in document.paragraphs[body:] for r in p.runs if r.italic]
    assert italic == ["Relief requested"]  # the table of authorities before it italicises its case name
    assert "[^1]" not in export.content.decode("latin-1")
    with zipfile.ZipFile(io.BytesIO(export.content)) as package:
        footnotes = package.read("word/footnotes.xml").decode()
        body = package.read("word/document.xml").decode()
        assert "footnotes+xml" in package.read("[Content_Types].xml").decode()
    assert "The client's calendar; the inspection report is to follow." in footnotes.replace("&apos;", "'")
    assert body.count("<w:footnoteReference") == 2
    footer = document.sections[0].footer.paragraphs[0].text
    assert approved.sha256 in footer and export.audit_head in footer
    assert len(export.audit_head) == 64


def test_docx_footnotes_sit_at_the_foot_of_the_page_in_libreoffice(approved_brief, attorney, tmp_path):
    """Word and LibreOffice read the footnotes part; LibreOffice, which is installed, proves it renders."""
    soffice = shutil.which("soffice")
    if soffice is None:
        pytest.skip("LibreOffice is not installed")
    export = draft_export(version=approved_brief, user=attorney, kind="docx")
    path = tmp_path / "motion.docx"
    path.write_bytes(export.content)
    subprocess.run([soffice, "--headless", f"-env:UserInstallation=file://{tmp_path}/lo", "--convert-to", "pdf",
                    "--outdir", str(tmp_path), str(path)], check=True, capture_output=True, timeout=120)
    text = pdf_text((tmp_path / "motion.pdf").read_bytes())
    assert "1 The client's calendar; the inspection report is to follow." in text
    assert text.index("Relief requested") < text.index("2 Checked for the duty to repair.")


def test_pdf_has_the_text_and_the_audit_head_on_every_page(approved, attorney):
    export = draft_export(version=approved, user=attorney, kind="pdf")
    pages = page_texts(export.content)
    text = "\n".join(pages)
    assert "Motion to compel repairs" in text and "Relief requested" in text
    assert "The client's calendar; the inspection report is to follow." in text  # the notes at the end
    assert all(export.audit_head in page for page in pages)
    assert approved.sha256 in pages[0]


def test_the_verification_report_lists_every_claim_with_its_status_and_source_page(approved, attorney):
    export = draft_export(version=approved, user=attorney, kind="report")
    text = " ".join(pdf_text(export.content).split())
    findings = list(approved.findings.all())
    assert len(findings) >= 8
    for finding in findings:
        assert " ".join(finding.text.split())[:30] in text
    assert "SMITH000001 (Exhibit 1, p. 1)" in text and "SMITH000002 (Exhibit 1, p. 2)" in text
    assert "Waived: “Inspection date from the client's calendar.” (alice" in text
    assert "Confirmed: “Checked in Westlaw on 2026-11-30: good law.”" in text
    assert "Ungrounded" in text and "Unverified authority" in text  # the verdicts stay visible
    assert "Overstates it." in text
    assert export.audit_head in text and approved.sha256 in text


def test_exports_are_generated_material_audited_and_the_chain_still_verifies(approved_brief, attorney, matter,
                                                                            client):
    approved = approved_brief
    client.force_login(attorney)
    url = reverse("matters:draft_export", args=[matter.pk, approved.draft_id, approved.number, "docx"])
    head_before = audit_verify(matter=matter).head_hash
    response = client.post(url)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="motion-to-compel-repairs-v1.docx"'
    assert response["X-LawDesk-Audit-Head"] == head_before
    digest = sha256_bytes(response.content)
    generated = GeneratedDocument.objects.get(sha256=digest)
    assert generated.origin == "export" and generated.matter == matter
    entry = AuditEntry.objects.get(matter=matter, action="draft.export")
    assert entry.file_sha256 == digest and entry.detail["audit_head"] == head_before
    assert entry.prev_hash == head_before  # the hash the file carries is the entry just before its own
    assert audit_verify(matter=matter).ok
    assert client.get(url).status_code == 405  # an export is a recorded act, never a link prefetch


def test_only_an_approved_version_exports_and_never_from_a_rewritten_log(matter, record, attorney, make_user):
    version = draft_create(matter=matter, title="Draft", text="The lease was signed on March 3, 2021. SMITH000001.",
                           author_kind="person", author=attorney)
    draft_verify(version=version)
    with pytest.raises(ValidationError, match="not approved"):
        draft_export(version=version, user=attorney, kind="docx")
    approved = draft_approve(version=version, user=attorney)
    with pytest.raises(ValidationError, match="Unknown export"):
        draft_export(version=approved, user=attorney, kind="html")
    from django.core.exceptions import PermissionDenied
    with pytest.raises(PermissionDenied):
        draft_export(version=approved, user=make_user("mallory", "attorney"), kind="docx")
    entry = AuditEntry.objects.filter(matter=matter).order_by("seq")[1]
    AuditEntry.objects.filter(pk=entry.pk).update(actor="someone else")
    with pytest.raises(ValidationError, match="does not verify"):
        draft_export(version=approved, user=attorney, kind="pdf")
