"""The data directory's disk full during an upload and during a production, on a real small file system (a tmpfs
mounted for the test): the request fails with a clear message, and nothing is left that looks whole: no original,
no staged part, no production file; the void range is never reused."""

import os
import subprocess
from pathlib import Path

import pytest
from django.urls import reverse

from matters import storage
from matters.exhibits.ingest.pool import sandbox_problem
from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create
from matters.models import BatesPage, Exhibit, Production
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

pytestmark = [pytest.mark.faults, pytest.mark.django_db]


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


@pytest.fixture
def small_disk(settings, tmp_path, data_dir):
    """Return a function mounting a tmpfs of ``size_kib`` as the data directory (skips where mounting is not
    allowed: it needs root, or CAP_SYS_ADMIN). The readers' sandbox is started first, on the test's own data
    directory: it keeps its staging folder in the data directory it starts with, for the life of the process, and
    a worker's data directory does not change under it."""
    sandbox_problem(sandboxed=True, data_dir=str(data_dir))
    mounted = []

    def mount(size_kib: int) -> Path:
        point = tmp_path / "small-disk"
        point.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=0700", "tmpfs", str(point)],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            pytest.skip(f"cannot mount a small file system here ({done.stderr.strip()}): a full disk needs one")
        mounted.append(point)
        settings.DATA_DIR = point
        settings.FILE_UPLOAD_TEMP_DIR = str(storage.tmp_dir())
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], check=True)


def fill(root: Path, leave_bytes: int) -> Path:
    """Take all but about ``leave_bytes`` of the file system's free space with one file; return it."""
    free = os.statvfs(root).f_bavail * os.statvfs(root).f_frsize
    filler = root / "filler"
    with open(filler, "wb") as out:
        out.truncate(0)
        remaining = max(free - leave_bytes, 0)
        while remaining:
            remaining -= out.write(b"\0" * min(remaining, 1 << 20))
    return filler


# 700 kB is spooled whole to the data directory by Django and fails while copied into the store; 3 MB fails while
# Django spools it.
@pytest.mark.parametrize("size_bytes", [700_000, 3_000_000])
def test_an_upload_to_a_full_disk_fails_with_a_clear_message_and_leaves_nothing(client, matter, attorney,
                                                                                small_disk, tmp_path, size_bytes):
    root = small_disk(1024)
    upload = tmp_path / "big-scan.pdf"
    upload.write_bytes(b"%PDF-1.7\n" + os.urandom(size_bytes))
    client.force_login(attorney)
    with open(upload, "rb") as stream:
        response = client.post(reverse("matters:upload", args=[matter.pk]), {"file": stream, "origin": "client"})
    response.wsgi_request.close()  # what the server does at the request's end: Django's spooled copy goes
    assert response.status_code == 507
    assert response.json()["error"] == storage.DISK_FULL_MESSAGE
    assert "disk is full" in storage.DISK_FULL_MESSAGE
    assert not Exhibit.objects.filter(matter=matter).exists()
    # Neither a staged part nor an original that looks whole (the audit key in secrets/ predates the upload).
    assert [p for p in files_under(root) if p.parent.name != "secrets"] == []


def test_a_production_on_a_full_disk_is_voided_with_a_clear_message_and_redone_in_a_new_range(matter, attorney,
                                                                                             corpus, small_disk):
    root = small_disk(16 * 1024)
    exhibits = []
    for name in ("ca2_1-1.pdf", "ca7_3.pdf", "mo-app-jagels.pdf"):
        with open(corpus(f"court/{name}"), "rb") as stream:
            exhibit = exhibit_create(matter=matter, stream=stream, original_name=name, origin="client",
                                     uploaded_by=attorney, enqueue=False)
        exhibits.append(exhibit_process(exhibit_id=exhibit.pk, previews="skip"))
    assert all(e.status == "ready" for e in exhibits)
    originals = {e.sha256: storage.blob_path(e.sha256).read_bytes() for e in exhibits}
    filler = fill(root, leave_bytes=64 * 1024)

    production = production_create(matter=matter, exhibits=exhibits, prefix="SMITH", created_by=attorney,
                                   enqueue=False)
    production = production_run(production_id=production.pk)
    assert production.status == "failed"
    assert production.reason == storage.DISK_FULL_MESSAGE
    assert not storage.production_dir(production.pk).exists()  # no partial volume or PDF under any name
    assert not BatesPage.objects.filter(production=production).exists()

    filler.unlink()
    again = production_create(matter=matter, exhibits=exhibits, prefix="SMITH", created_by=attorney, enqueue=False)
    again = production_run(production_id=again.pk)
    assert again.status == "done", again.reason
    assert again.first_number == production.last_number + 1  # the void range is never used again
    assert Production.objects.filter(matter=matter).count() == 2
    assert {e.sha256: storage.blob_path(e.sha256).read_bytes() for e in exhibits} == originals
