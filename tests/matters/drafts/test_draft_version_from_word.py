"""The brief back from Word as a new version: the approved version exported, edited in Word with tracked
changes and a comment, uploaded on the review page. Only the paragraphs Word changed are verified again; the
others keep their findings and waivers; the file is kept byte for byte; a file that is no version of the draft
is refused with the reason."""

import io
import zipfile

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from matters import storage
from matters.drafts.export_docx import docx_bytes
from matters.drafts.exports import draft_export
from matters.drafts.services import (
    draft_approve,
    draft_create,
    draft_verify,
    draft_version_create,
    draft_version_from_word,
    finding_waive,
)
from matters.drafts.verifier import memo as memos
from matters.models import AuditEntry, DraftVersion, GeneratedDocument
from tests.matters.drafts.word_files import WordEdit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_memo():
    """The verifier's memo is the process's: an earlier test's matter (same id, same evidence) would lend this one
    findings for the changed paragraph too."""
    memos.shared.clear()

PARAGRAPHS = [
    "# Motion to Compel",
    "On March 3, 2019 the tenant paid $4,812.55 to the landlord for the months of rent then owing.",
    "The landlord refused the payment and kept the deposit of $1,200 for a further six months.",
    "The tenant wrote to the landlord again on April 2, 2019, asking for the deposit back.",
    "Nothing in the lease allows the landlord to keep a deposit once the rent has been paid in full.",
    "The Court should order the landlord to answer the interrogatories within fourteen days.",
]
BRIEF = "\n\n".join(PARAGRAPHS) + "\n"


def approved_export(matter, attorney, text=BRIEF) -> tuple[DraftVersion, bytes]:
    """Version 1 of a draft, verified, its blocking findings waived, approved and exported as DOCX."""
    version = draft_create(matter=matter, title="Motion to compel", text=text, author_kind="person",
                           author=attorney)
    for finding in draft_verify(version=version):
        if finding.blocking:
            finding_waive(finding=finding, user=attorney, reason="Checked against the bank statement.")
    draft_approve(version=version, user=attorney)
    return version, draft_export(version=version, user=attorney, kind="docx").content


def upload(base, content: bytes, user, name="Motion (DW edits).docx"):
    return draft_version_from_word(base=base, upload=io.BytesIO(content), original_name=name, user=user)


def test_a_word_round_trip_re_checks_only_the_paragraph_word_changed(matter, attorney):
    base, exported = approved_export(matter, attorney)
    edited = (WordEdit(exported).track_replace("The landlord refused", "six months", "nine months")
              .comment("The tenant wrote", "Attach the letter of April 2 as an exhibit.").bytes())
    made = upload(base, edited, attorney)
    version = made.version
    assert version.number == 2 and version.author == attorney
    assert version.text == BRIEF.replace("six months", "nine months")
    assert (made.merged.kept, made.merged.changed, made.merged.added, made.merged.removed) == (5, 1, 0, 0)
    # Six paragraphs; the one Word changed is judged, the five others come from what version 1's check kept.
    assert (made.paragraphs, made.checked_paragraphs) == (6, 1)
    # The findings of unchanged paragraphs are version 1's, waivers included; the changed one's are new.
    before = {(f.kind, f.text, f.status) for f in base.findings.all() if "six months" not in f.text}
    after = {(f.kind, f.text, f.status) for f in version.findings.all()}
    assert before <= after
    waived = [f for f in version.findings.all() if f.status == "waived"]
    assert waived and all(f.carried_from is not None for f in waived)
    # The comment is stored with the version, beside its paragraph.
    [comment] = version.word["comments"]
    assert comment["text"] == "Attach the letter of April 2 as an exhibit." and comment["author"] == "Dana Whitfield"
    assert version.text[comment["start"]:comment["end"]] == PARAGRAPHS[3]
    assert version.word["exported_from"] == base.sha256 and version.word["insertions"] == 1


def test_the_upload_is_kept_byte_for_byte_and_named_in_the_audit_log(matter, attorney):
    base, exported = approved_export(matter, attorney)
    edited = WordEdit(exported).track_replace("Nothing in the lease", "in full", "in full and on time").bytes()
    version = upload(base, edited, attorney).version
    sha = version.word["sha256"]
    assert storage.blob_path(sha).read_bytes() == edited
    entry = AuditEntry.objects.filter(action="draft.version").order_by("-id").first()
    assert entry.detail["word"] == {"sha256": sha, "name": "Motion (DW edits).docx", "size_bytes": len(edited),
                                    "exported_from": base.sha256}
    # The Word file coming back as an exhibit is recognised as the draft it is.
    assert GeneratedDocument.objects.filter(matter=matter, sha256=sha, origin="draft").exists()


def test_a_docx_that_is_no_version_of_the_draft_is_refused_and_kept(matter, attorney):
    base, _ = approved_export(matter, attorney)
    unrelated = docx_bytes(text="# Motion to Compel\n\nThe buyer never received the shipment of steel pipe it "
                                "ordered in June.\n\nThe seller's invoice of July 9 is unpaid for that reason.",
                           title="Other", footer="")
    with pytest.raises(ValidationError, match="has no paragraph in common with version 1"):
        upload(base, unrelated, attorney, name="other.docx")
    assert base.draft.versions.count() == 1
    entry = AuditEntry.objects.get(action="draft.word_refused")
    assert "no paragraph in common" in entry.detail["reason"] and entry.detail["name"] == "other.docx"
    assert storage.blob_path(entry.file_sha256, quarantined=True).read_bytes() == unrelated


def test_another_drafts_export_is_refused_naming_it(matter, attorney):
    base, _ = approved_export(matter, attorney)
    # A second draft that began as a copy of the first: most paragraphs in common, yet another document.
    other, other_docx = approved_export(matter, attorney, BRIEF.replace("fourteen", "twenty-one"))
    other.draft.title = "Reply brief"
    other.draft.save()
    with pytest.raises(ValidationError, match="is the export of “Reply brief”, version 1"):
        upload(base, other_docx, attorney)


def test_an_export_older_than_an_edit_made_since_is_refused(matter, attorney):
    base, exported = approved_export(matter, attorney)
    later = draft_version_create(draft=base.draft, text=BRIEF.replace("fourteen", "seven"), author_kind="person",
                                 author=attorney)
    edited = WordEdit(exported).track_replace("The landlord refused", "six", "nine").bytes()
    with pytest.raises(ValidationError, match="version 2 was made since, outside this Word file"):
        upload(later, edited, attorney)


def test_a_second_round_in_the_same_word_file_is_accepted(matter, attorney):
    base, exported = approved_export(matter, attorney)
    first = WordEdit(exported).track_replace("The landlord refused", "six", "nine")
    v2 = upload(base, first.bytes(), attorney).version
    second = first.track_replace("The Court should", "fourteen", "seven").bytes()
    v3 = upload(v2, second, attorney).version
    assert v3.text == BRIEF.replace("six months", "nine months").replace("fourteen", "seven")


def test_a_word_file_without_changes_or_comments_makes_no_version(matter, attorney):
    base, exported = approved_export(matter, attorney)
    with pytest.raises(ValidationError, match="word for word, and it has no comments"):
        upload(base, exported, attorney)


def review(client, version):
    return reverse("matters:draft_version", args=[version.draft.matter_id, version.draft_id, version.number])


def word_url(version):
    return reverse("matters:draft_word_upload", args=[version.draft.matter_id, version.draft_id, version.number])


def test_the_review_page_takes_the_file_and_shows_the_comments(client, matter, attorney):
    base, exported = approved_export(matter, attorney)
    client.force_login(attorney)
    page = client.get(review(client, base)).content.decode()
    assert 'id="word-upload"' in page and word_url(base) in page
    edited = (WordEdit(exported).track_replace("The landlord refused", "six months", "nine months")
              .comment("The landlord refused", "Is <b>nine</b> right?").bytes())
    response = client.post(word_url(base), {"file": SimpleUploadedFile("edits.docx", edited)}, follow=True)
    page = response.content.decode()
    assert "Saved “edits.docx” as version 2: 1 paragraph changed, 0 added, 0 removed, 5 unchanged" in page
    assert "1 of 6 verified again" in page
    assert 'id="word-comments"' in page and "Is &lt;b&gt;nine&lt;/b&gt; right?" in page
    assert "?a=1&amp;b=2" in page  # the diff of what Word changed
    diff = client.get(reverse("matters:draft_versions", args=[matter.pk, base.draft_id]) + "?a=1&b=2")
    assert "<del>six</del><ins>nine</ins>" in diff.content.decode().replace(" months", "")


@pytest.mark.parametrize(("data", "message"), [
    ({}, "Choose the Word file (DOCX) to upload."),
    ({"file": ("brief.pdf", b"%PDF-1.4\n%%EOF\n")}, "This file is a PDF document, not a Word document (DOCX)."),
    ({"file": ("brief.docx", b"PK\x03\x04 cut short")}, "is damaged and could not be read"),
])
def test_the_forms_errors_are_shown_on_the_field(client, matter, attorney, data, message):
    base, _ = approved_export(matter, attorney)
    client.force_login(attorney)
    files = {name: SimpleUploadedFile(*value) for name, value in data.items()}
    response = client.post(word_url(base), files)
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="word-error"' in page and message in page
    assert base.draft.versions.count() == 1


def test_an_operator_may_not_upload_and_a_non_member_finds_nothing(client, matter, attorney, make_user):
    base, exported = approved_export(matter, attorney)
    operator = make_user("olga", "operator")
    matter.members.add(operator)
    client.force_login(operator)
    assert client.post(word_url(base), {"file": SimpleUploadedFile("e.docx", exported)}).status_code == 403
    client.force_login(make_user("otto", "attorney"))
    assert client.post(word_url(base), {"file": SimpleUploadedFile("e.docx", exported)}).status_code == 404
    assert base.draft.versions.count() == 1


def test_the_export_and_its_edit_are_real_word_packages():
    """The test's own edit keeps the file a package Word opens: every part is still listed and parses."""
    content = WordEdit(docx_bytes(text=BRIEF, title="T", footer="F")).comment("The landlord", "x").bytes()
    with zipfile.ZipFile(io.BytesIO(content)) as package:
        assert package.testzip() is None
        assert b"comments.xml" in package.read("[Content_Types].xml")
