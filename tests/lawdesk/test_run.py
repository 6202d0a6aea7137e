"""The one-command start: migrate, first attorney account, ASGI server and worker together; Ctrl-C stops all."""

import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from lawdesk.accounts import ensure_first_attorney
from lawdesk.run import asgi_server_command, worker_command
from tests.support.paths import BASE_DIR
from tests.support.processes import free_port


@pytest.mark.django_db
def test_first_attorney_is_created_once_with_a_generated_password(django_user_model):
    account = ensure_first_attorney(username="attorney", password=None)
    assert account.created and account.password and len(account.password) >= 16
    user = django_user_model.objects.get(username="attorney")
    assert user.check_password(account.password)
    assert user.is_superuser and user.has_perm("matters.approve_draft")
    again = ensure_first_attorney(username="attorney", password=None)
    assert not again.created and again.password is None


@pytest.mark.django_db
def test_password_from_the_environment_is_used_and_not_echoed(django_user_model):
    account = ensure_first_attorney(username="counsel", password="a-long-passphrase-here")
    assert account.created and account.password is None
    assert django_user_model.objects.get(username="counsel").check_password("a-long-passphrase-here")


def test_run_starts_server_and_worker_and_ctrl_c_stops_them(tmp_path):
    port = free_port()
    env = dict(os.environ, LAWDESK_DATA_DIR=str(tmp_path / "data"), LAWDESK_PORT=str(port),
               DJANGO_SETTINGS_MODULE="lawdesk.settings", PYTHONUNBUFFERED="1")
    env.pop("DATABASE_URL", None)
    env.pop("LAWDESK_ADMIN_PASSWORD", None)
    env.pop("LAWDESK_TEST_SQLITE", None)
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "lawdesk.run"], cwd=BASE_DIR, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                try:
                    response = httpx.get(f"http://127.0.0.1:{port}/login/", timeout=2)
                    break
                except httpx.TransportError:
                    assert process.poll() is None, log.read_text()
                    time.sleep(0.3)
            else:
                pytest.fail("the server did not answer within 90 s:\n" + log.read_text())
            assert response.status_code == 200 and "Log in" in response.text
            assert httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 302  # login required
            output = log.read_text()
            password = re.search(r"password: (\S+)", output).group(1)
            assert "username: attorney" in output
            assert (tmp_path / "data" / "lawdesk.sqlite3").exists()
            embedded = re.search(r"Embedded model server at (http://127\.0\.0\.1:\d+) holds every role", output)
            assert embedded, output
            assert httpx.get(f"{embedded.group(1)}/health", timeout=5).json()["status"] == "ok"
            children = subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True, text=True).stdout.split()
            assert len(children) >= 3  # run, the ASGI server, a worker
        finally:
            os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
            process.wait(timeout=30)
    # The ingest pool's fork server and multiprocessing's resource tracker ignore Ctrl-C and leave when their
    # worker has gone (end of file on its pipe): a moment later on a busy machine, but they must leave.
    deadline = time.monotonic() + 15
    while (leftover := subprocess.run(["pgrep", "-g", str(process.pid)], capture_output=True,
                                      text=True).stdout.split()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftover == [], subprocess.run(["ps", "-o", "pid,args", "-g", str(process.pid)], capture_output=True,
                                          text=True).stdout
    assert "LawDesk stopped." in log.read_text()
    with pytest.raises(httpx.TransportError):  # the embedded llama-server went with it
        httpx.get(f"{embedded.group(1)}/health", timeout=2)
    assert log.read_text().count(password) == 1  # shown once, on the terminal only
    terminal = log.read_text()
    # A stop is quiet: no worker's "Received Interrupt" line, no traceback of a SystemExit raised at exit.
    for noise in ("Task id=", "RUNNING", "SUCCESSFUL", "Starting worker", "DeprecationWarning", "deprecated",
                  "StreamingHttpResponse", "Traceback", "Exception ignored", "Received "):
        assert noise not in terminal, terminal
    assert f"Log: {tmp_path / 'data' / 'lawdesk.log'}" in terminal


@pytest.mark.django_db
@pytest.mark.parametrize("password, rule", [
    ("a", "too short"),
    ("counsel-office", "too similar to the username"),
    ("password1234", "too common"),
    ("40918273645", "entirely numeric"),
])
def test_weak_first_password_is_refused_naming_the_rule(django_user_model, password, rule):
    from lawdesk.accounts import WeakPassword

    with pytest.raises(WeakPassword, match=rule) as raised:
        ensure_first_attorney(username="counsel-office", password=password)
    assert "LAWDESK_ADMIN_PASSWORD" in str(raised.value)
    assert not django_user_model.objects.exists()


def test_run_refuses_a_weak_admin_password_before_serving(tmp_path):
    env = dict(os.environ, LAWDESK_DATA_DIR=str(tmp_path / "data"), LAWDESK_PORT=str(free_port()),
               LAWDESK_ADMIN_PASSWORD="a", DJANGO_SETTINGS_MODULE="lawdesk.settings")
    env.pop("DATABASE_URL", None)
    env.pop("LAWDESK_TEST_SQLITE", None)
    done = subprocess.run([sys.executable, "-m", "lawdesk.run"], cwd=BASE_DIR, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert "LAWDESK_ADMIN_PASSWORD is refused" in done.stderr and "too short" in done.stderr


@pytest.mark.django_db
def test_admin_password_change_applies_the_validators(client, make_user):
    from django.urls import reverse

    boss = make_user("boss", "attorney", is_superuser=True, is_staff=True)
    member = make_user("member", "assistant")
    client.force_login(boss)
    url = reverse("admin:auth_user_password_change", args=[member.pk])
    response = client.post(url, {"password1": "12345678901", "password2": "12345678901"})
    assert response.status_code == 200 and "entirely numeric" in response.content.decode()
    member.refresh_from_db()
    assert member.check_password("correct-horse-battery")


def test_asgi_server_runs_several_processes_when_asked_and_one_otherwise():
    several = asgi_server_command("127.0.0.1", 8000, processes=3)
    assert several[several.index("--workers") + 1] == "3"
    assert "--workers" not in asgi_server_command("127.0.0.1", 8000, processes=1)


def test_documents_workers_run_below_the_server_so_requests_are_served_first():
    documents = subprocess.run([*worker_command("documents", 0.5)[:3], "sh", "-c", "nice"], capture_output=True,
                               text=True)
    assert int(documents.stdout) >= 10
    assert worker_command("models", 0.1)[0] == sys.executable  # model stages keep the server's priority
