"""Shared fixtures: the public corpus (copied, never written), users of each role, a matter, the standard small
record, a Redis channel layer, real processes."""

import os
import shutil
from pathlib import Path

import pytest
import redis

from lawdesk.layers import redis_channel_layers
from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create
from matters.models import Matter
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from matters.roles import role_group
from matters.services import matter_create
from tests.support.accounts import PASSWORD
from tests.support.paths import CORPUS
from tests.support.processes import Processes
from tests.support.record import INVOICE, LEASE_P1, LEASE_P2, OPINION, STATUTE, pdf_pages
from tests.support.retention import furnished_matter

TEST_MODEL_HOSTS = "127.0.0.1 localhost [::1]"
TEST_BACKUP_KEY = "the office's backup key, kept in its safe: 4f1c9a"
REDIS_TEST_URL = os.environ.get("REDIS_TEST_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path, monkeypatch) -> Path:
    """Give every test its own data directory, in this process and in any process it starts."""
    path = tmp_path / "data"
    path.mkdir()
    settings.DATA_DIR = path
    monkeypatch.setenv("LAWDESK_DATA_DIR", str(path))
    # The scripted model servers listen on loopback ports chosen at random: allowed as an installer would list
    # them. Tests of the allowlist set their own (tests/pipeline/llm/test_model_hosts.py).
    settings.LAWDESK_MODEL_HOSTS = TEST_MODEL_HOSTS
    monkeypatch.setenv("LAWDESK_MODEL_HOSTS", TEST_MODEL_HOSTS)
    # The office's backup key, for this process and for another installation's manage.py restoring its backups.
    settings.LAWDESK_BACKUP_KEY = TEST_BACKUP_KEY
    monkeypatch.setenv("LAWDESK_BACKUP_KEY", TEST_BACKUP_KEY)
    return path


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"The shared corpus is missing: expected it at {CORPUS} (or set LAWDESK_CORPUS).")
    return CORPUS


@pytest.fixture
def corpus(corpus_dir, tmp_path):
    """Return a function that copies ``corpus/<relative>`` into a temp dir and returns the copy's path."""

    def copy(relative: str) -> Path:
        target = tmp_path / "corpus" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus_dir / relative, target)
        return target

    return copy


@pytest.fixture
def make_user(django_user_model):
    def make(username: str, role: str = "attorney", **extra):
        user = django_user_model.objects.create_user(username=username, password=PASSWORD, **extra)
        if role:
            user.groups.add(role_group(role))
        return user

    return make


@pytest.fixture
def attorney(make_user):
    return make_user("alice", "attorney")


@pytest.fixture
def matter(attorney) -> Matter:
    return matter_create(name="Smith v. Jones", created_by=attorney, court="D. Mass.", case_number="1:24-cv-01234")


@pytest.fixture
def ingest(attorney):
    """Return a function that uploads a file to a matter and processes it now, as the worker would."""

    def run(matter: Matter, path: Path, origin: str = "client", name: str | None = None):
        with open(path, "rb") as stream:
            exhibit = exhibit_create(
                matter=matter, stream=stream, original_name=name or path.name, origin=origin,
                uploaded_by=attorney, enqueue=False,
            )
        return exhibit_process(exhibit_id=exhibit.pk, previews="inline")

    return run


@pytest.fixture
def record(matter, attorney, ingest, tmp_path) -> dict:
    """Ingest the standard small record into ``matter`` and return its exhibits by name (``lease``, ``invoice``,
    ``opinion``, ``statute``): a two-page lease (client) and an invoice (opposing party), both produced as
    SMITH000001-3, an opinion and a statute as authorities."""
    lease = ingest(matter, pdf_pages([LEASE_P1, LEASE_P2], tmp_path / "lease.pdf"))
    invoice = ingest(matter, pdf_pages([INVOICE], tmp_path / "invoice.pdf"), origin="opposing_party")
    opinion = ingest(matter, pdf_pages(OPINION, tmp_path / "tarrant.pdf"), origin="authority")
    statute = ingest(matter, pdf_pages(STATUTE, tmp_path / "1028a.pdf"), origin="authority")
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[lease, invoice], prefix="SMITH", created_by=attorney, enqueue=False).pk)
    assert production.first == "SMITH000001" and production.last == "SMITH000003"
    return {"lease": lease, "invoice": invoice, "opinion": opinion, "statute": statute}


@pytest.fixture
def furnish(attorney, corpus, ingest):
    """Return a function giving a matter named ``name`` a bit of everything (two processed court filings, a done
    production of both, a queued motion job), for the retention and backup tests."""

    def make(name: str):
        return furnished_matter(name, attorney=attorney, corpus=corpus, ingest=ingest)

    return make


@pytest.fixture
def redis_layer(settings):
    """Route this process's channel layer through Redis (database 15 unless ``REDIS_TEST_URL`` says otherwise) and
    yield the environment a started process needs to do the same; fail when no Redis answers, never skip."""
    try:
        redis.Redis.from_url(REDIS_TEST_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        pytest.fail(f"Redis is needed at {REDIS_TEST_URL} ({error}); scripts/test.sh starts one.")
    settings.CHANNEL_LAYERS = redis_channel_layers(REDIS_TEST_URL)
    yield {"REDIS_URL": REDIS_TEST_URL}
    settings.CHANNEL_LAYERS = {}


@pytest.fixture
def processes():
    started = Processes()
    yield started
    started.stop()


# Fixtures through which a test reaches the database (pytest-django's own names).
_DATABASE_FIXTURES = frozenset({"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                                "live_server"})


def pytest_collection_modifyitems(config, items):
    """With LAWDESK_TEST_DATABASE_ONLY=1, keep only the tests that reach the database (and the fault and live-model
    tests, which run in no other pass). The second database's pass runs under it: a test that never opens a
    connection proves the same thing on either database, and it already runs in the first pass."""
    if os.environ.get("LAWDESK_TEST_DATABASE_ONLY") != "1":
        return
    kept, dropped = [], []
    for item in items:
        uses_database = item.get_closest_marker("django_db") is not None or bool(
            _DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        )
        once_here = item.get_closest_marker("faults") or item.get_closest_marker("live")
        (kept if uses_database or once_here else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
