"""Shared fixtures: the public corpus (copied, never written), users of each role, a matter, real processes."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from bench.corpus import corpus_dir
from lawdesk.run import asgi_server_command
from matters.models import Matter
from matters.exhibits.processing import exhibit_process
from matters.roles import role_group
from matters.exhibits.services import exhibit_create
from matters.services import matter_create

BASE_DIR = Path(__file__).resolve().parent.parent
CORPUS = corpus_dir()


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path, monkeypatch) -> Path:
    """Give every test its own data directory, in this process and in any process it starts."""
    path = tmp_path / "data"
    path.mkdir()
    settings.DATA_DIR = path
    monkeypatch.setenv("LAWDESK_DATA_DIR", str(path))
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
        user = django_user_model.objects.create_user(username=username, password="correct-horse-battery", **extra)
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


def database_url() -> str:
    """The URL of the database this test run uses (the test database), for processes started by a test."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user = settings.get("USER") or "postgres"
    password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}/{settings['NAME']}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Processes:
    """Start LawDesk's own processes (worker, ASGI server) against the test database; stop them at teardown."""

    def __init__(self) -> None:
        self.children: list[subprocess.Popen] = []

    def env(self, **extra: str) -> dict:
        env = dict(os.environ, DATABASE_URL=database_url(), DJANGO_SETTINGS_MODULE="lawdesk.test_settings")
        env.pop("REDIS_URL", None)
        env.update(extra)
        return env

    def worker(self, **env: str) -> subprocess.Popen:
        command = [sys.executable, "manage.py", "db_worker", "--queue-name", "*", "--no-reload", "--interval", "0.2",
                   "--no-startup-delay"]
        return self._start(command, env)

    def server(self, port: int, **env: str) -> subprocess.Popen:
        process = self._start(asgi_server_command("127.0.0.1", port), env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return process
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError("the ASGI server exited at start")
                time.sleep(0.1)
        raise RuntimeError("the ASGI server did not start in 30 s")

    def _start(self, command: list[str], env: dict) -> subprocess.Popen:
        process = subprocess.Popen(command, cwd=BASE_DIR, env=self.env(**env))
        self.children.append(process)
        return process

    def stop(self) -> None:
        for process in self.children:
            if process.poll() is None:
                process.terminate()
        for process in self.children:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture
def processes():
    started = Processes()
    yield started
    started.stop()
