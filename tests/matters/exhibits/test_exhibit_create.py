"""exhibit_create: content-addressed storage, sniffing by content, labels, duplicates, quarantine."""

import hashlib
import io

import pytest
from django.core.exceptions import ValidationError

from matters import storage
from matters.exhibits.services import exhibit_create, exhibit_update, format_label
from matters.models import Exhibit, Matter
from matters.services import matter_create

pytestmark = pytest.mark.django_db


def upload(matter, data: bytes, name: str, origin: str = "client", user=None) -> Exhibit:
    return exhibit_create(
        matter=matter, stream=io.BytesIO(data), original_name=name, origin=origin, uploaded_by=user, enqueue=False
    )


def test_original_is_stored_byte_for_byte_under_its_sha256(matter, corpus):
    data = corpus("court/ca7_3.pdf").read_bytes()
    exhibit = upload(matter, data, "ca7_3.pdf")
    digest = hashlib.sha256(data).hexdigest()
    assert exhibit.sha256 == digest
    assert exhibit.size_bytes == len(data)
    stored = storage.blob_path(digest)
    assert stored.read_bytes() == data
    assert stored.name == digest
    assert exhibit.status == Exhibit.Status.QUEUED
    assert (exhibit.kind, exhibit.mime_type) == ("pdf", "application/pdf")


def test_type_comes_from_content_not_the_name(matter, corpus):
    pdf_named_jpg = upload(matter, corpus("court/ca7_3.pdf").read_bytes(), "photo.jpg")
    zip_named_pdf = upload(matter, corpus("odd/simple.zip").read_bytes(), "brief.pdf")
    docx = upload(matter, corpus("odd/letter.docx").read_bytes(), "letter.bin")
    assert pdf_named_jpg.kind == "pdf"
    assert zip_named_pdf.status == Exhibit.Status.REJECTED
    assert "ZIP archive" in zip_named_pdf.reason
    assert docx.kind == "docx"


def test_hostile_file_name_is_data_only(matter, corpus):
    data = corpus("court/ca7_3.pdf").read_bytes()
    exhibit = upload(matter, data, "../../../etc/passwd.pdf")
    assert exhibit.original_name == "../../../etc/passwd.pdf"
    assert exhibit.title == "passwd"
    assert storage.blob_path(exhibit.sha256).read_bytes() == data


def test_rejected_upload_is_quarantined_unchanged_and_unlabelled(matter, corpus):
    data = corpus("odd/simple.zip").read_bytes()
    exhibit = upload(matter, data, "simple.zip")
    assert exhibit.status == Exhibit.Status.REJECTED
    assert exhibit.quarantined and exhibit.label == ""
    assert storage.blob_path(exhibit.sha256, quarantined=True).read_bytes() == data
    assert not storage.blob_path(exhibit.sha256).exists()


def test_empty_file_fails_with_a_reason_and_is_kept(matter):
    exhibit = upload(matter, b"", "empty.pdf")
    assert exhibit.status == Exhibit.Status.FAILED
    assert "empty (0 bytes)" in exhibit.reason
    assert storage.blob_path(exhibit.sha256, quarantined=True).read_bytes() == b""


def test_exact_duplicate_points_to_the_existing_exhibit_and_is_not_stored_twice(matter, corpus):
    data = corpus("court/ca7_3.pdf").read_bytes()
    first = upload(matter, data, "a.pdf")
    second = upload(matter, data, "copy of a.pdf")
    assert second.status == Exhibit.Status.DUPLICATE
    assert second.duplicate_of_id == first.pk
    assert second.label == ""
    assert "Exhibit 1" in second.reason
    originals = list(storage.data_path("originals").rglob("*"))
    assert sum(p.is_file() for p in originals) == 1


def test_same_file_in_another_matter_is_not_a_duplicate(matter, attorney, corpus):
    other = matter_create(name="Other v. Matter", created_by=attorney)
    data = corpus("court/ca7_3.pdf").read_bytes()
    upload(matter, data, "a.pdf")
    assert upload(other, data, "a.pdf").status == Exhibit.Status.QUEUED


def test_labels_follow_upload_order_numeric_and_alpha(attorney, corpus):
    files = [corpus(f"court/{name}").read_bytes() for name in ("ca7_3.pdf", "ca4_17.pdf", "ca9_19.pdf")]
    numeric = matter_create(name="N", created_by=attorney)
    alpha = matter_create(name="A", created_by=attorney, label_style=Matter.LabelStyle.ALPHA)
    assert [upload(numeric, d, "x.pdf").label for d in files] == ["1", "2", "3"]
    assert [upload(alpha, d, "x.pdf").label for d in files] == ["A", "B", "C"]


def test_alpha_labels_continue_past_z():
    assert [format_label(n, "alpha") for n in (1, 26, 27, 52, 53, 702, 703)] == [
        "A", "Z", "AA", "AZ", "BA", "ZZ", "AAA"]


def test_label_edit_must_stay_unique_and_next_label_skips_an_edited_one(matter, attorney, corpus):
    first = upload(matter, corpus("court/ca7_3.pdf").read_bytes(), "a.pdf")
    exhibit_update(exhibit=first, updated_by=attorney, title="Order of the Seventh Circuit", label="2")
    second = upload(matter, corpus("court/ca4_17.pdf").read_bytes(), "b.pdf")
    assert second.label == "3"
    with pytest.raises(ValidationError, match="already exists"):
        exhibit_update(exhibit=second, updated_by=attorney, title="b", label="2")
    first.refresh_from_db()
    assert (first.label, first.title) == ("2", "Order of the Seventh Circuit")


def test_generated_origin_is_refused_for_uploads(matter, corpus):
    with pytest.raises(ValidationError, match="not an origin for uploaded material"):
        upload(matter, corpus("court/ca7_3.pdf").read_bytes(), "x.pdf", origin="draft")


def test_upload_is_audited_with_the_file_hash(matter, attorney, corpus):
    exhibit = upload(matter, corpus("court/ca7_3.pdf").read_bytes(), "a.pdf", user=attorney)
    entry = matter.audit_entries.filter(action="exhibit.upload").get()
    assert entry.file_sha256 == exhibit.sha256
    assert entry.actor == "alice"
    assert entry.detail["original_name"] == "a.pdf"
