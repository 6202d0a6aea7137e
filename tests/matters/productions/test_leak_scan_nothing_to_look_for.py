"""A production that withholds nothing and redacts nothing has nothing for its leak scan to look for: the pages'
texts are not read to allow them (a 100,000-page production spent its first minute doing so); one redaction box,
or one withheld document, and the scan looks as before."""

import pymupdf
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matters.privilege.services import redaction_add
from matters.productions.leak_scan import production_secrets
from matters.productions.reservation import production_create
from tests.matters.productions.test_production_leaks import BOX, NAME, letter

pytestmark = pytest.mark.django_db


def production_of(matter, attorney, exhibits):
    return production_create(matter=matter, exhibits=exhibits, prefix="SMITH", created_by=attorney, enqueue=False)


def test_a_production_without_privilege_reads_no_page_text_and_looks_for_nothing(matter, attorney, ingest, tmp_path):
    exhibits = []
    for number in range(3):
        path = tmp_path / f"letter-{number}.pdf"
        letter().save(path)
        exhibits.append(ingest(matter, path))
    production = production_of(matter, attorney, exhibits)
    with CaptureQueriesContext(connection) as queries:
        secrets = production_secrets(production)
    assert not secrets
    assert not [q for q in queries.captured_queries if '"matters_page"."text"' in q["sql"]]


def test_one_box_on_one_page_and_the_scan_looks_for_its_words(matter, attorney, ingest, tmp_path):
    plain = pymupdf.open()
    plain.new_page().insert_text((72, 100), "Closing paragraph with nothing privileged in it.", fontsize=11)
    plain.save(tmp_path / "plain.pdf")
    letter().save(tmp_path / "letter.pdf")
    exhibits = [ingest(matter, tmp_path / "plain.pdf"), ingest(matter, tmp_path / "letter.pdf")]
    redaction_add(page=exhibits[1].pages.get(number=1), rect=BOX, reason="PII", user=attorney)
    secrets = production_secrets(production_of(matter, attorney, exhibits))
    # The name under the box, each word of it; the plain letter's words are not looked for.
    assert [found for word in NAME.split() for found, _what in secrets.find(word)] == ["margaret", "holloway"]
    assert not secrets.find("Closing paragraph with nothing privileged in it.")
