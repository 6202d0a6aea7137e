"""The notice on an upload whose bytes LawDesk generated never reveals another matter."""

import io

import pytest

from matters.exhibits.services import exhibit_create
from matters.provenance import generated_record
from matters.services import matter_create

pytestmark = pytest.mark.django_db


def test_bytes_generated_in_another_matter_are_only_said_to_be_generated(matter, attorney, make_user):
    bob = make_user("bob", "attorney")
    other = matter_create(name="Doe v. Roe", created_by=bob)
    content = b"%PDF-1.4\n% production volume of another client\n"
    generated_record(matter=other, origin="production", title="DOE-VOL003 combined", content=content)

    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(content), original_name="found.pdf", origin="client",
                             uploaded_by=attorney, enqueue=False)

    assert exhibit.generated_reason.startswith("LawDesk generated this file itself")
    for revealing in ("another matter", "Doe", "DOE-VOL003", "production", "matter"):
        assert revealing not in exhibit.generated_reason
    logged = exhibit.matter.audit_entries.get(action="exhibit.upload").detail["generated"]
    assert "DOE-VOL003" not in logged and "another matter" not in logged


def test_bytes_generated_in_the_same_matter_are_named(matter, attorney):
    content = b"%PDF-1.4\n% our own production\n"
    generated_record(matter=matter, origin="production", title="SMITH-VOL001 combined", content=content)
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(content), original_name="ours.pdf", origin="client",
                             uploaded_by=attorney, enqueue=False)
    assert "SMITH-VOL001 combined" in exhibit.generated_reason


def test_notices_kept_from_before_are_rewritten(matter, attorney):
    from importlib import import_module

    from django.apps import apps

    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(b"%PDF-1.4\n% old\n"), original_name="old.pdf",
                             origin="client", uploaded_by=attorney, enqueue=False)
    old = ("This file is byte for byte LawDesk's own production (a document of another matter). It is kept but is "
           "not evidence; an attorney can override this with a reason.")
    type(exhibit).objects.filter(pk=exhibit.pk).update(generated_reason=old)
    import_module("matters.migrations.0016_generated_notice_reveals_no_matter").rewrite(apps, None)
    exhibit.refresh_from_db()
    assert exhibit.generated_reason.startswith("LawDesk generated this file itself")
