"""Command-line interface: matter_create, ingest (one JSON line per file, glossary keys), exhibit_text."""

import io
import json

import pytest
from django.core.management import call_command

from matters.models import AuditEntry, Matter

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


def test_matter_create_adds_every_member_through_the_audited_service(attorney, make_user):
    """Members named on the command line are recorded in the audit trail as the matter page's are."""
    assistant = make_user("pat", "assistant")
    matter_id = int(run("matter_create", "--name", "Doe v. Roe", "--member", attorney.username,
                        "--member", assistant.username))
    matter = Matter.objects.get(pk=matter_id)
    assert set(matter.members.values_list("username", flat=True)) == {attorney.username, assistant.username}
    added = AuditEntry.objects.filter(matter=matter, action="matter.member_add")
    assert [entry.detail["user"] for entry in added] == [assistant.username]
    assert AuditEntry.objects.filter(matter=matter, action="matter.create", actor=attorney).exists()


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


def test_bates_produce_takes_several_exhibit_ids_after_one_flag(matter, corpus, ingest):
    first = ingest(matter, corpus("court/ca7_3.pdf"))
    second = ingest(matter, corpus("court/ca10_010110462922.pdf"))
    line = json.loads(run("bates_produce", "--matter", str(matter.pk), "--prefix", "SMITH",
                          "--exhibit", str(second.pk), str(first.pk)))
    assert line["status"] == "done"
    assert line["pages"] == first.page_count + second.page_count
    # In the order given: the second exhibit's first page carries the first number.
    assert second.pages.get(number=1).bates_numbers.get().bates == "SMITH000001"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("command", ["exhibit_text", "evidence_packet"])
def test_piping_into_head_ends_quietly(command, matter, tmp_path):
    import os
    import subprocess

    from tests.factories import ExhibitFactory
    from tests.support.paths import BASE_DIR
    from tests.support.processes import database_url

    # Far more than a pipe holds (64 KiB), so the writer is still writing when head goes away.
    exhibit = ExhibitFactory(matter=matter, pages=["a line of the exhibit\n" * 20000])
    args = {"exhibit_text": str(exhibit.pk), "evidence_packet": f"--matter {matter.pk}"}[command]
    env = dict(os.environ, DATABASE_URL=database_url(), DJANGO_SETTINGS_MODULE="lawdesk.test_settings")
    done = subprocess.run(["bash", "-c", f"{BASE_DIR}/.venv/bin/python manage.py {command} {args} | head -1"],
                          cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout and done.stderr == ""
