"""The matter bench/load.py drives, made in the database it is given: run as a child of bench/load.py, with
``DATABASE_URL``, ``LAWDESK_DATA_DIR`` and ``DJANGO_SETTINGS_MODULE`` set, one sub-command at a time; each prints
one JSON object on its last line.

- ``build --pages N --users U``: a matter of at least N pages, the court filings of the corpus repeated as
  exhibits (each copy's bytes made distinct by a trailing PDF comment, stored as an original, so a production
  and a download read real files), their page text and the verifier's index of their dates and amounts
  inserted directly in bulk (no ingest, no OCR), a draft whose
  verifier findings number 300, and U attorneys, each with a logged-in session (so the load measures
  pages, not password hashing).
- ``start --production-pages P --model-url URL``: a production of about P pages, queued for the documents
  worker, and two jobs (a motion and a summary) on the model server at URL, queued for the models worker.
- ``status``: how far the production and the jobs got.

LawDesk's modules are imported inside the functions: they need ``django.setup()``, which main() calls after
reading the command line.
"""

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.corpus import corpus_dir  # noqa: E402  (the repository is on the path now)

CORPUS = corpus_dir() / "court"
PASSWORD = "load-bench-passphrase"
FINDINGS_WANTED = 300
CLAIMS_PER_SENTENCE = 3  # a date, an amount and an exhibit cite: three findings


def _setup() -> None:
    import django

    django.setup()


def _source_pages(number_format: str) -> list[tuple[Path, list[tuple[str, str, float, float, set]]]]:
    """Every court filing with its pages' (text, reading text, width, height, verifier facts), read once: each
    copy of a filing has the same pages, so its facts are found once instead of once per copy."""
    import pymupdf

    from matters.drafts.verifier.facts import page_facts
    from matters.exhibits.reading import reading_form

    sources = []
    for path in sorted(CORPUS.glob("*.pdf")):
        with pymupdf.open(path) as document:
            pages = []
            for page in document:
                text = page.get_text()
                pages.append((text, reading_form(text), page.rect.width, page.rect.height,
                              page_facts(text, number_format)))
        sources.append((path, pages))
    if not any(pages for _, pages in sources):
        # Without this the build repeated nothing for ever: a worktree beside the repository has no corpus.
        raise SystemExit(f"No court filing with pages in {CORPUS}: set LAWDESK_CORPUS to the corpus's folder.")
    return sources


def _users(count: int):
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    from matters.roles import role_group

    users, sessions = [], []
    for n in range(1, count + 1):
        user = get_user_model().objects.create_user(username=f"bench{n:02d}", password=PASSWORD)
        user.groups.add(role_group("attorney"))
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        users.append(user)
        sessions.append(session.session_key)
    return users, sessions


def _exhibits(matter, user, pages_wanted: int) -> list[dict]:
    """Copies of the court filings until ``pages_wanted`` pages, each copy's original stored and its pages and
    their verifier facts inserted in bulk (one transaction per round of the filings), the exhibit marked as
    indexed, as the worker leaves an exhibit it has read."""
    from django.db import transaction

    from matters import storage
    from matters.drafts.verifier.facts import facts_key
    from matters.models import Exhibit, Page, PageFact

    sources, made, total = _source_pages(matter.number_format), [], 0
    indexed = facts_key(matter.number_format)
    while total < pages_wanted:
        batch = []
        for path, pages in sources:
            if total >= pages_wanted:
                break
            n = len(made) + len(batch) + 1
            data = path.read_bytes() + f"\n% load bench copy {n}\n".encode()
            sha256 = hashlib.sha256(data).hexdigest()
            blob = storage.blob_path(sha256)
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            batch.append((Exhibit(
                matter=matter, label=str(n), label_seq=n, title=f"{path.stem} (copy {n})", origin="court",
                original_name=path.name, sha256=sha256, size_bytes=len(data), mime_type="application/pdf",
                kind="pdf", status="ready", page_count=len(pages), pages_pdf=len(pages), uploaded_by=user,
                facts_index=indexed), pages))
            total += len(pages)
        with transaction.atomic():
            Exhibit.objects.bulk_create([exhibit for exhibit, _ in batch])
            rows = Page.objects.bulk_create(
                [Page(exhibit=exhibit, number=i, text=text, reading_text=reading, source="pdf", width_pt=width,
                      height_pt=height)
                 for exhibit, pages in batch
                 for i, (text, reading, width, height, _facts) in enumerate(pages, start=1)], batch_size=500)
            facts_per_page = iter(page[4] for _, pages in batch for page in pages)  # in the order of rows
            PageFact.objects.bulk_create(
                [PageFact(page_id=row.pk, kind=kind, value=value)
                 for row in rows for kind, value in next(facts_per_page)], batch_size=2000)
        made.extend({"id": exhibit.pk, "pages": len(pages), "label": exhibit.label} for exhibit, pages in batch)
    return made


def _draft(matter, user, exhibits: list[dict]) -> dict:
    """A draft of sentences that each state a date, an amount and an exhibit cite: 300 findings."""
    from matters.drafts.services import draft_create, draft_verify

    sentences = []
    for n in range(FINDINGS_WANTED // CLAIMS_PER_SENTENCE):
        exhibit = exhibits[n % len(exhibits)]
        page = n % exhibit["pages"] + 1
        sentences.append(f"On March {n % 28 + 1}, 2021 the court ordered payment of ${1000 + n:,}.00 "
                         f"(Ex. {exhibit['label']} at {page}).")
    version = draft_create(matter=matter, title="Motion for summary judgment (load bench)",
                           text=" ".join(sentences), author_kind="person", author=user)
    findings = draft_verify(version=version)
    return {"draft": version.draft_id, "version": version.number, "findings": len(findings)}


def _analyze() -> None:
    """Refresh the planner's statistics, as autovacuum (PostgreSQL) would a minute after a bulk insert: with the
    statistics of an empty table, PostgreSQL plans a search of 50,000 pages as one index scan per exhibit
    (minutes for a common word). On PostgreSQL it vacuums as well, as autovacuum does after as many inserts
    (``autovacuum_vacuum_insert_threshold``): without the visibility map that sets, no index answers a query
    alone, and the matter page's counts read all 24,566 rows of the table. (The PostgreSQL of the machines
    these figures come from runs with ``autovacuum`` off; a server in service has it on.)"""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)" if connection.vendor == "postgresql" else "ANALYZE")


def build(pages: int, user_count: int) -> dict:
    from matters.services import matter_create

    started = time.monotonic()
    users, sessions = _users(user_count)
    matter = matter_create(name="Load v. Bench", created_by=users[0], court="D. Mass.", case_number="1:26-cv-00001")
    matter.members.add(*users)
    exhibits = _exhibits(matter, users[0], pages)
    draft = _draft(matter, users[0], exhibits)
    _analyze()
    return {"matter": matter.pk, "sessions": sessions, "exhibits": exhibits,
            "pages": sum(e["pages"] for e in exhibits), "build_s": round(time.monotonic() - started, 1), **draft}


def start(production_pages: int, model_url: str) -> dict:
    from django.contrib.auth import get_user_model

    from matters.models import Exhibit, Matter
    from matters.productions.reservation import production_create
    from pipeline.models import ModelServer, Role, RoleAssignment
    from pipeline.stages.control import job_start

    matter = Matter.objects.get(name="Load v. Bench")
    user = get_user_model().objects.get(username="bench01")
    chosen, total = [], 0
    for exhibit in matter.exhibits.filter(status="ready").order_by("label_seq"):
        if total >= production_pages:
            break
        chosen.append(exhibit)
        total += exhibit.page_count
    production = production_create(matter=matter, exhibits=chosen, prefix="LOAD", created_by=user)
    server = ModelServer.objects.create(name="scripted", base_url=model_url, model_name="scripted-model",
                                        context_tokens=16384)
    for role in Role:
        RoleAssignment.objects.update_or_create(role=role, defaults={"server": server})
    evidence = list(Exhibit.objects.filter(matter=matter).order_by("label_seq").values_list("pk", flat=True)[:3])
    jobs = [job_start(matter=matter, kind=kind, instructions=instructions, exhibits=evidence, user=user).pk
            for kind, instructions in (("motion", "Move for summary judgment on the payment order."),
                                       ("summary", "Summarize the orders."))]
    return {"production": production.pk, "production_pages": production.page_count, "jobs": jobs}


def status() -> dict:
    from matters.models import Production
    from pipeline.models import Job

    production = Production.objects.filter(prefix="LOAD").first()
    seconds = None
    if production and production.finished_at:
        seconds = round((production.finished_at - production.created_at).total_seconds(), 1)
    jobs = {job.pk: [f"{run.stage}:{run.status}" + (f" ({(run.error or run.reason)[:160]})"
                                                     if run.status == "failed" else "")
                     for run in job.current_runs()] for job in Job.objects.all()}
    return {"production": production and {"status": production.status, "pages_done": production.pages_done,
                                          "page_count": production.page_count, "seconds": seconds},
            "jobs": jobs}


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    build_args = commands.add_parser("build")
    build_args.add_argument("--pages", type=int, required=True)
    build_args.add_argument("--users", type=int, required=True)
    start_args = commands.add_parser("start")
    start_args.add_argument("--production-pages", type=int, required=True)
    start_args.add_argument("--model-url", required=True)
    commands.add_parser("status")
    args = parser.parse_args()
    _setup()
    if args.command == "build":
        result = build(args.pages, args.users)
    elif args.command == "start":
        result = start(args.production_pages, args.model_url)
    else:
        result = status()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
