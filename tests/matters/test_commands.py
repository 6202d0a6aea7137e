"""Command-line interface: matter_create, ingest (one JSON line per file, glossary keys), exhibit_text."""

import io
import json

import pytest
from django.core.management import call_command

from matters.models import Matter

pytestmark = pytest.mark.django_db

INGEST_KEYS = {"exhibit", "label", "title", "status", "reason", "pages", "pages_pdf", "pages_ocr", "sha256", "origin"}


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_matter_create_prints_the_id(attorney):
    matter_id = int(run("matter_create", "--name", "Doe v. Roe", "--court", "N.D. Ill.", "--member", "alice"))
    matter = Matter.objects.get(pk=matter_id)
    assert (matter.name, matter.court) == ("Doe v. Roe", "N.D. Ill.")
    assert list(matter.members.values_list("username", flat=True)) == ["alice"]


def test_ingest_prints_one_json_line_per_file_and_exhibit_text_prints_pages(matter, corpus):
    files = [corpus("court/ca7_3.pdf"), corpus("odd/simple.zip"), corpus("court/ca7_3.pdf")]
    lines = [json.loads(line) for line in run("ingest", "--matter", str(matter.pk), "--origin", "court",
                                              *map(str, files)).splitlines()]
    assert [set(line) for line in lines] == [INGEST_KEYS] * 3
    ready, rejected, duplicate = lines
    assert (ready["status"], ready["label"], ready["origin"]) == ("ready", "1", "court")
    assert ready["pages"] == ready["pages_pdf"] > 0 and ready["pages_ocr"] == 0
    assert rejected["status"] == "rejected" and rejected["reason"]
    assert duplicate["status"] == "duplicate" and duplicate["sha256"] == ready["sha256"]

    text = run("exhibit_text", str(ready["exhibit"]))
    assert text.count("\f") == ready["pages"]
    assert "Seventh Circuit" in text or "SEVENTH CIRCUIT" in text
