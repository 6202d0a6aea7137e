"""Legal hold and purge: a hold stops every deletion; a purge removes exactly the matter's rows and the files no
other matter uses, and its audit chain ends with what was purged and still verifies."""

import hashlib
import io

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import CommandError, call_command
from django.db import transaction

from matters import storage
from matters.audit.services import audit_verify
from matters.exhibits.services import exhibit_create
from matters.models import AuditEntry, Draft, Exhibit, Matter, Page
from matters.retention.purge import _rows_of, matter_models, matter_purge
from matters.retention.services import MatterOnHold, matter_hold, matter_hold_lift
from matters.services import matter_create
from pipeline.job_models import Job
from tests.support.retention import row_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_matters(furnish, attorney, corpus, ingest):
    """Acme v. Roe, furnished; Baker v. Cole sharing Acme's one-page order (same bytes) and holding a filing of
    its own."""
    acme = furnish("Acme v. Roe")
    baker = matter_create(name="Baker v. Cole", created_by=attorney)
    shared = ingest(baker, corpus("court/ca7_3.pdf"))
    own = ingest(baker, corpus("court/ca6_1-3.pdf"))
    assert shared.sha256 == acme.exhibits[0].sha256
    return acme, baker, shared, own


def test_a_hold_blocks_purge_and_every_deletion_until_an_attorney_lifts_it(two_matters, attorney, make_user,
                                                                          client):
    acme = two_matters[0]
    assistant = make_user("bob", "assistant")
    acme.matter.members.add(assistant)
    with pytest.raises(PermissionDenied):
        matter_hold(matter=acme.matter, user=assistant, reason="preservation letter")
    with pytest.raises(ValidationError, match="Say why"):
        matter_hold(matter=acme.matter, user=attorney, reason=" ")
    matter = matter_hold(matter=acme.matter, user=attorney, reason="Preservation letter of 2 May")
    assert Matter.objects.get(pk=matter.pk).legal_hold

    with pytest.raises(MatterOnHold, match="Acme v. Roe is on legal hold"):
        matter_purge(matter=matter, user=attorney, confirm_name="Acme v. Roe")
    # Rows nothing else protects: without the hold these deletions would go through (the last lines show it).
    empty = exhibit_create(matter=matter, stream=io.BytesIO(b""), original_name="empty.pdf", origin="client",
                           uploaded_by=attorney, enqueue=False)
    assert empty.status == "failed"
    for delete in (lambda: Exhibit.objects.get(pk=empty.pk).delete(),
                   lambda: Job.objects.filter(matter=matter).delete(),
                   lambda: Draft.objects.create(matter=matter, title="Notes").delete()):
        with pytest.raises(MatterOnHold, match="cannot be deleted until an attorney lifts the hold"):
            with transaction.atomic():  # the refusal rolls back the deletion's own transaction
                delete()
    with pytest.raises(CommandError, match="on legal hold"):
        call_command("purge_matter", matter=matter.pk, confirm="Acme v. Roe")
    attorney.is_staff = attorney.is_superuser = True  # the admin's own permissions allow everything
    attorney.save()
    client.force_login(attorney)
    assert client.get(f"/admin/matters/matter/{matter.pk}/delete/").status_code == 403
    assert client.get(f"/admin/matters/exhibit/{acme.exhibits[0].pk}/delete/").status_code == 403
    assert Exhibit.objects.filter(matter=matter).count() == 3 and storage.production_dir(acme.production.pk).is_dir()

    with pytest.raises(PermissionDenied):
        matter_hold_lift(matter=matter, user=assistant, reason="case settled")
    matter_hold_lift(matter=matter, user=attorney, reason="Case settled; release signed")
    actions = list(AuditEntry.objects.filter(matter=matter, action__startswith="matter.hold")
                   .values_list("action", "actor", "detail__reason"))
    assert actions == [("matter.hold", "alice", "Preservation letter of 2 May"),
                       ("matter.hold_lift", "alice", "Case settled; release signed")]
    assert audit_verify(matter=matter).ok
    Job.objects.filter(matter=matter).delete()
    Exhibit.objects.get(pk=empty.pk).delete()


def test_purge_removes_exactly_the_matters_rows_and_unshared_files(two_matters, attorney, data_dir,
                                                                    django_capture_on_commit_callbacks):
    acme, baker, shared, own = two_matters
    matter = acme.matter
    expected = {
        "matters.exhibit": 2, "matters.page": Page.objects.filter(exhibit__matter=matter).count(),
        "matters.production": 1, "matters.productiondocument": 2,
        "matters.batespage": acme.production.page_count, "matters.matter_members": 1,
        "pipeline.job": 1, "pipeline.stagerun": 1,
    }
    before = row_counts()
    order_pdf = storage.blob_path(acme.exhibits[0].sha256)
    filing_pdf = storage.blob_path(acme.exhibits[1].sha256)
    acme_derived = [storage.derived_dir(e.pk) for e in acme.exhibits]
    baker_files = {p: p.read_bytes() for p in data_dir.rglob("*") if p.is_file() and (
        p.is_relative_to(storage.derived_dir(shared.pk)) or p.is_relative_to(storage.derived_dir(own.pk)))}
    assert all(d.is_dir() for d in acme_derived) and baker_files

    with pytest.raises(ValidationError, match="Type the matter's name exactly"):
        matter_purge(matter=matter, user=attorney, confirm_name="Acme v Roe")
    assert row_counts() == before

    with django_capture_on_commit_callbacks(execute=True):  # files go once the rows' removal has committed
        report = matter_purge(matter=matter, user=attorney, confirm_name="  Acme v. Roe ")
    after = row_counts()
    removed = {label: before[label] - after[label] for label in before if before[label] != after[label]}
    assert removed == {**{k: v for k, v in report.rows.items()}, "matters.auditentry": -3}  # erasure, system
    for label, count in expected.items():
        assert report.rows[label] == count, label
    for model, paths in matter_models():
        assert not _rows_of(model, paths, matter).exists(), model
    assert Matter.objects.get(pk=matter.pk).purged_at is not None
    assert Exhibit.objects.filter(matter=baker).count() == 2

    assert order_pdf.exists() and order_pdf == storage.blob_path(shared.sha256)  # Baker still uses it
    assert not filing_pdf.exists()
    assert not any(d.exists() for d in acme_derived) and not storage.production_dir(acme.production.pk).exists()
    assert all(p.read_bytes() == content for p, content in baker_files.items())
    assert report.originals_kept_shared == [shared.sha256]
    assert report.originals_removed == [acme.exhibits[1].sha256]

    erasure, last = AuditEntry.objects.filter(matter=matter).order_by("-seq")[:2]
    assert erasure.action == "audit.erase" and erasure.actor == "alice"
    assert last.action == "matter.purge" and last.actor == "alice"
    assert last.detail["rows"] == report.rows and last.detail["files"] == len(report.files) > 4
    assert last.detail["originals"] == sorted(e.sha256 for e in acme.exhibits)
    removal = AuditEntry.objects.get(chain="system", action="original.remove")
    assert removal.detail["originals_removed"] == [acme.exhibits[1].sha256]
    # The digest covers the SHA-256 of each removed file, the removed original among them.
    assert report.files[f"originals/{filing_pdf.parent.name}/{filing_pdf.name}"] == acme.exhibits[1].sha256
    lines = "".join(f"{d}  {p}\n" for p, d in sorted(report.files.items()))
    assert last.detail["files_sha256"] == hashlib.sha256(lines.encode()).hexdigest()
    assert audit_verify(matter=matter).ok and audit_verify(matter=baker).ok
    with pytest.raises(ValidationError, match="purged already"):
        matter_purge(matter=matter, user=None, confirm_name="Acme v. Roe")


def test_the_matter_page_holds_lifts_and_purges_for_attorneys_only(furnish, attorney, make_user, client):
    acme = furnish("Acme v. Roe")
    assistant = make_user("bob", "assistant")
    acme.matter.members.add(assistant)
    client.force_login(assistant)
    page = client.get(f"/matters/{acme.matter.pk}/").content.decode()
    assert 'id="retention"' in page and "Put on legal hold" not in page
    assert client.post(f"/matters/{acme.matter.pk}/hold/", {"reason": "x"}).status_code == 403
    assert client.post(f"/matters/{acme.matter.pk}/purge/", {"confirm_name": "Acme v. Roe"}).status_code == 403

    client.force_login(attorney)
    section = client.post(f"/matters/{acme.matter.pk}/hold/", {"action": "hold", "reason": "Litigation hold notice"},
                          HTTP_HX_REQUEST="true").content.decode()
    assert "on legal hold" in section and "Lift the legal hold" in section and "Purge this matter" not in section
    refused = client.post(f"/matters/{acme.matter.pk}/purge/", {"confirm_name": "Acme v. Roe"},
                          HTTP_HX_REQUEST="true").content.decode()
    assert "is on legal hold" in refused and Exhibit.objects.filter(matter=acme.matter).count() == 2
    client.post(f"/matters/{acme.matter.pk}/hold/", {"action": "lift", "reason": "Settled"}, HTTP_HX_REQUEST="true")
    wrong = client.post(f"/matters/{acme.matter.pk}/purge/", {"confirm_name": "acme"}, HTTP_HX_REQUEST="true")
    assert "Type the matter&#x27;s name exactly" in wrong.content.decode()
    done = client.post(f"/matters/{acme.matter.pk}/purge/", {"confirm_name": "Acme v. Roe"}, HTTP_HX_REQUEST="true")
    assert done.status_code == 204 and done["HX-Redirect"] == "/"
    assert not Exhibit.objects.filter(matter=acme.matter).exists()
    assert client.get(f"/matters/{acme.matter.pk}/").status_code == 404  # no members are left


def test_commands_hold_lift_and_purge(furnish, capsys):
    acme = furnish("Acme v. Roe")
    call_command("legal_hold", matter=acme.matter.pk, reason="Order of 3 June", by="alice")
    assert capsys.readouterr().out.strip() == f'{{"matter": {acme.matter.pk}, "legal_hold": true}}'
    call_command("legal_hold", matter=acme.matter.pk, reason="Order vacated", lift=True)
    with pytest.raises(CommandError, match="Type the matter's name exactly"):
        call_command("purge_matter", matter=acme.matter.pk, confirm="Acme")
    capsys.readouterr()
    call_command("purge_matter", matter=acme.matter.pk, confirm="Acme v. Roe")
    assert '"matters.exhibit": 2' in capsys.readouterr().out
    assert audit_verify(matter=acme.matter).ok


@pytest.mark.django_db(transaction=True)
def test_a_purge_commits_for_real_with_every_foreign_key_checked(furnish, attorney):
    """Committed, not rolled back: the database checks its deferred foreign keys at commit, and the files go only
    once the commit is done."""
    acme = furnish("Acme v. Roe")
    draft = Draft.objects.create(matter=acme.matter, title="Motion")
    Job.objects.filter(pk=acme.job.pk).update(draft=draft)  # a nullable key between two rows of the matter
    report = matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")
    assert report.rows["matters.draft"] == 1 and report.rows["pipeline.job"] == 1
    assert not Exhibit.objects.filter(matter=acme.matter).exists() and not Job.objects.exists()
    assert not storage.production_dir(acme.production.pk).exists()
    assert not any(storage.blob_path(e.sha256).exists() for e in acme.exhibits)
    assert audit_verify(matter=acme.matter).ok


@pytest.mark.django_db(transaction=True)
def test_a_row_of_another_matter_pointing_into_the_purged_one_stops_the_purge_whole(furnish, attorney, corpus,
                                                                                      ingest):
    acme = furnish("Acme v. Roe")
    baker = matter_create(name="Baker v. Cole", created_by=attorney)
    other = ingest(baker, corpus("court/ca6_1-3.pdf"))
    Exhibit.objects.filter(pk=other.pk).update(duplicate_of=acme.exhibits[0])  # not a thing LawDesk makes
    before = row_counts()
    with pytest.raises(ValidationError, match="Nothing was purged: a record outside Acme v. Roe points at"):
        matter_purge(matter=acme.matter, user=attorney, confirm_name="Acme v. Roe")
    assert row_counts() == before and Matter.objects.get(pk=acme.matter.pk).purged_at is None
    assert storage.blob_path(acme.exhibits[1].sha256).exists() and storage.production_dir(acme.production.pk).exists()
