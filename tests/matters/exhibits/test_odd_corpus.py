"""Every document in the corpus's odd/ folder (files that break tools) ends ``ready`` or in another glossary
status with a reason, and its original is kept byte for byte."""

import pytest

from matters import storage
from matters.models import Exhibit
from tests.support.paths import CORPUS

ODD_FILES = sorted(p.name for p in (CORPUS / "odd").iterdir() if p.is_file() and p.suffix != ".txt")
EXPECTED = {
    "empty.pdf": "failed",
    "invalid.pdf": "failed",
    "password-is-test.pdf": "needs_password",
    "simple.zip": "rejected",
}


@pytest.mark.ocr
@pytest.mark.django_db
def test_every_odd_file_ends_in_a_glossary_status_with_its_original_kept(matter, corpus, ingest):
    assert len(ODD_FILES) > 30
    statuses = {}
    for name in ODD_FILES:
        path = corpus(f"odd/{name}")
        exhibit = ingest(matter, path)
        statuses[name] = exhibit.status
        assert exhibit.status in Exhibit.Status.values
        assert exhibit.is_settled, name
        if exhibit.status != Exhibit.Status.READY:
            assert exhibit.reason, name
        else:
            assert exhibit.page_count == exhibit.pages.count() > 0, name
        source = exhibit.duplicate_of or exhibit
        stored = storage.blob_path(source.sha256, quarantined=source.quarantined)
        assert stored.read_bytes() == path.read_bytes(), name
    print({name: status for name, status in statuses.items()})
    for name, status in EXPECTED.items():
        assert statuses[name] == status, name
    # Everything else in the folder is a readable document.
    assert {n for n, s in statuses.items() if s != "ready"} == set(EXPECTED)
