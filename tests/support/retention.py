"""A matter with a bit of everything (uploads, derived page images, a production, a job), for the retention and
backup tests."""

from dataclasses import dataclass

from django.apps import apps

from matters.models import Exhibit, Matter, Production
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from matters.services import matter_create
from pipeline.job_models import Job
from pipeline.stages.control import job_start


@dataclass
class Furnished:
    matter: Matter
    exhibits: list[Exhibit]
    production: Production
    job: Job


def row_counts() -> dict[str, int]:
    """Rows per model label, every model of every app (many-to-many tables too)."""
    return {m._meta.label_lower: m._base_manager.count() for m in apps.get_models(include_auto_created=True)}


def furnished_matter(name: str, *, attorney, corpus, ingest) -> Furnished:
    """Return a matter named ``name`` with two processed court filings (the 1-page Seventh Circuit order and the
    3-page Tenth Circuit one), a done production of both (prefixed with the name's first word) and a queued
    motion job. ``corpus`` and ``ingest`` are the fixtures of ``tests/conftest.py``."""
    matter = matter_create(name=name, created_by=attorney)
    exhibits = [ingest(matter, corpus("court/ca7_3.pdf")), ingest(matter, corpus("court/ca10_010110462922.pdf"))]
    assert all(e.status == "ready" for e in exhibits)
    production = production_run(production_id=production_create(
        matter=matter, exhibits=exhibits, prefix=name.split()[0].upper(), created_by=attorney, enqueue=False).pk)
    assert production.status == Production.Status.DONE
    job = job_start(matter=matter, kind="motion", instructions="Move to dismiss.", user=attorney, enqueue=False)
    return Furnished(matter, exhibits, production, job)
