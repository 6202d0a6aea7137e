"""The matter page's counts, read from the indexes without the rows, say of every file what the file itself says:
each status, each origin, marked generated or not, the mark overridden or not."""

import itertools

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matters.exhibits.listing import matter_exhibit_counts
from matters.models import EVIDENCE_ORIGINS, Exhibit, Origin
from matters.selectors import exhibit_counts_of_groups

pytestmark = pytest.mark.django_db

MARKS = {"none": ("", ""), "marked": ("matches a production LawDesk made", ""),
         "overridden": ("matches a draft LawDesk made", "the client's own copy, sent before the draft")}


def _file(matter, number: int, status: str, origin: str, mark: str) -> Exhibit:
    reason, override = MARKS[mark]
    return Exhibit(matter=matter, origin=origin, original_name=f"file-{number}.pdf", sha256=f"{number:064x}",
                   size_bytes=1, kind=Exhibit.Kind.PDF, status=status, generated_reason=reason,
                   generated_override_reason=override)


def test_the_counts_are_those_of_the_files_one_by_one(matter):
    combinations = itertools.product(Exhibit.Status.values, [Origin.CLIENT, Origin.COURT, Origin.AUTHORITY], MARKS)
    files = [_file(matter, number, *combination) for number, combination in enumerate(combinations)]
    files += [_file(matter, len(files) + n, Exhibit.Status.READY, Origin.CLIENT, "marked") for n in range(3)]
    Exhibit.objects.bulk_create(files)

    one_by_one = exhibit_counts_of_groups((f.status, f.origin, f.marked_generated, 1) for f in files)
    assert matter_exhibit_counts(matter) == one_by_one
    assert one_by_one["generated"] == 3 + 3  # ready and marked, of each origin, and three more
    assert one_by_one["evidence"] == sum(f.status == "ready" and f.origin in EVIDENCE_ORIGINS for f in files) - 5


def test_the_counts_read_no_file_row(matter):
    Exhibit.objects.bulk_create([_file(matter, n, Exhibit.Status.READY, Origin.CLIENT, "none") for n in range(50)])
    with CaptureQueriesContext(connection) as queries:
        matter_exhibit_counts(matter)
    if connection.vendor == "sqlite":  # the plan is SQLite's to print; PostgreSQL chooses by its statistics
        for query in queries.captured_queries:
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
                plan = " ".join(str(row[-1]) for row in cursor.fetchall())
            assert "exhibit_counts" in plan or "exhibit_marked_generated" in plan, plan
            assert "TEMP B-TREE" not in plan, plan
