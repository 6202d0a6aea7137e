"""LawDesk's own processes (ASGI server, db_worker) started by a test against the test database, and a free
loopback port for them or for a support server."""

import os
import socket
import subprocess
import sys
import time

from django.db import connection

from lawdesk.run import asgi_server_command
from tests.support.paths import BASE_DIR


def database_url() -> str:
    """The URL of the database this test run uses (the test database), for processes started by a test."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user = settings.get("USER") or "postgres"
    password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
    address = f"{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}"
    return f"postgres://{user}{password}@{address}/{settings['NAME']}"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on now (the OS picks it; a race with another process
    taking it before the caller binds is possible but has not been seen on loopback)."""
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
