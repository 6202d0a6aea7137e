"""Loopback is a destination like any other: a listener on a loopback port that LAWDESK_MODEL_HOSTS does not list
receives nothing (no packet, no key, no probe), whoever set the server up; LawDesk's own embedded servers stay
allowed at the addresses LawDesk started them on, and only there."""

import html
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from lawdesk.startup import forget_embedded_servers
from pipeline.api_keys import key_write
from pipeline.llm import HostAllowlist, HostNotAllowed
from pipeline.llm.hosts import check_server_address
from pipeline.models import ModelServer, Role
from pipeline.own_servers import model_hosts_allowlist, own_server_record, own_servers_path
from pipeline.servers import EMBEDDED_NAME
from pipeline.stages.control import job_start
from pipeline.topology.probe import server_probe
from tests.support.jobs import register, run_all
from tests.support.processes import free_port
from tests.support.scripted_server import ScriptedServer, llama_cpp_routes
from tests.support.stage_server import TIMINGS, stage_server
from tests.support.topology import server_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def listener():
    """A model server on a loopback port, answering like llama.cpp: what any local account could start."""
    with ScriptedServer() as server:
        stage_server(server)
        llama_cpp_routes(server, timings=TIMINGS)
        yield server


def _summary(matter, attorney):
    job = job_start(matter=matter, kind="summary", instructions="Summarise the record.", user=attorney, enqueue=False)
    return run_all(job)


def test_an_unlisted_loopback_listener_receives_no_evidence_no_key_and_no_probe(settings, matter, record, attorney,
                                                                                 listener):
    port = urlsplit(listener.url).port
    settings.LAWDESK_MODEL_HOSTS = f"127.0.0.1:{free_port()}, gpu.office.lan:8080"  # listed: another port
    server = register(listener.url, roles=tuple(Role))
    key_write(server=server, key="sk-must-not-leave")
    runs = _summary(matter, attorney)
    assert runs[0].status == "failed"
    assert f"127.0.0.1:{port} is not in LAWDESK_MODEL_HOSTS" in runs[0].error
    assert server_probe(server=server).status == "down"
    assert listener.requests == []  # not one request: no prompt, no key, no health check

    settings.LAWDESK_MODEL_HOSTS = f"127.0.0.1:{port}"  # the installer lists it
    assert _summary(matter, attorney)[0].status == "done" and listener.requests


def test_the_embedded_server_is_allowed_at_the_address_lawdesk_started_and_nowhere_else(
        settings, matter, record, attorney, listener):
    settings.LAWDESK_MODEL_HOSTS = ""
    elsewhere = f"http://127.0.0.1:{free_port()}"
    # The embedded server's row, moved by someone to a loopback listener of their own.
    embedded = register(listener.url, name=EMBEDDED_NAME, roles=tuple(Role))
    ModelServer.objects.filter(pk=embedded.pk).update(embedded=True)
    with started_for(elsewhere) as server:
        own_server_record(name=EMBEDDED_NAME, base_url=elsewhere, pid=server.pid)  # where LawDesk started it
        runs = _summary(matter, attorney)
    assert runs[0].status == "failed" and "LAWDESK_MODEL_HOSTS" in runs[0].error
    assert listener.requests == []

    with started_for(listener.url) as server:
        own_server_record(name=EMBEDDED_NAME, base_url=listener.url, pid=server.pid)  # LawDesk started it here
        assert _summary(matter, attorney)[0].status == "done" and listener.requests
        assert own_servers_path().stat().st_mode & 0o077 == 0
    # The process LawDesk started for that port ended (a crash): the port is anyone's now, though still recorded.
    before = len(listener.requests)
    assert _summary(matter, attorney)[0].status == "failed"
    assert len(listener.requests) == before

    with started_for(listener.url) as server:
        own_server_record(name=EMBEDDED_NAME, base_url=listener.url, pid=server.pid)
        forget_embedded_servers()  # LawDesk stopped it: the port is anyone's now
        assert _summary(matter, attorney)[0].status == "failed"
    assert len(listener.requests) == before


@contextmanager
def started_for(url: str):
    """A process standing for the server LawDesk started at ``url``: its command line names the port, as
    llama-server's does (``--port N``)."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "--port",
                                str(urlsplit(url).port)])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_own_addresses_widen_nothing_else():
    allowlist = HostAllowlist.parse("").with_own([("127.0.0.1", 41000)])
    check_server_address("http://127.0.0.1:41000", allowlist)
    for url in ("http://127.0.0.1:41001", "http://localhost:41000", "http://127.0.0.2:41000"):
        with pytest.raises(HostNotAllowed):
            check_server_address(url, allowlist)


def test_a_damaged_record_of_embedded_servers_allows_nothing(settings):
    settings.LAWDESK_MODEL_HOSTS = ""
    own_servers_path().write_text('["http://127.0.0.1:8080"]')
    assert model_hosts_allowlist().own == ()
    own_servers_path().write_text("{not json")
    assert model_hosts_allowlist().own == ()


@pytest.fixture
def operator(make_user):
    return make_user("olga", "operator", is_staff=True)


def test_topology_page_and_server_form_say_where_evidence_may_go(settings, client, operator, listener):
    port = urlsplit(listener.url).port
    settings.LAWDESK_MODEL_HOSTS = "gpu.office.lan:8080 127.0.0.1"
    server = ModelServer.objects.create(name="sink", base_url=f"http://localhost:{port}")
    client.force_login(operator)
    page = html.unescape(client.get(reverse("pipeline:topology")).content.decode())
    assert "Evidence may be sent to: gpu.office.lan:8080, 127.0.0.1 " in page
    assert "allows every port of 127.0.0.1: any account on this machine" in page
    assert f"localhost:{port} is not in LAWDESK_MODEL_HOSTS" in page

    change = html.unescape(client.get(reverse("admin:pipeline_modelserver_change", args=[server.pk]))
                           .content.decode())
    assert f"localhost:{port} is not in LAWDESK_MODEL_HOSTS" in change
    settings.LAWDESK_MODEL_HOSTS = f"localhost:{port}"
    change = html.unescape(client.get(reverse("admin:pipeline_modelserver_change", args=[server.pk]))
                           .content.decode())
    assert "yes: the address is in LAWDESK_MODEL_HOSTS" in change
    page = html.unescape(client.get(reverse("pipeline:topology")).content.decode())
    assert "allowlist-warning" not in page and "address-refused" not in page
    assert listener.requests == []  # showing the pages asked the listener nothing


def test_saving_a_server_outside_the_list_says_nothing_will_be_sent(settings, client, operator, listener):
    port = urlsplit(listener.url).port
    settings.LAWDESK_MODEL_HOSTS = "gpu.office.lan:8080"
    server = ModelServer.objects.create(name="drafter", base_url="http://gpu.office.lan:8080")
    client.force_login(operator)
    url = reverse("admin:pipeline_modelserver_change", args=[server.pk])
    page = html.unescape(client.post(url, server_form(server, base_url=f"http://127.0.0.1:{port}"), follow=True)
                         .content.decode())
    assert f"127.0.0.1:{port} is not in LAWDESK_MODEL_HOSTS" in page and "Nothing was sent" in page
    server.refresh_from_db()
    assert server.base_url == f"http://127.0.0.1:{port}" and listener.requests == []


def test_a_setting_that_cannot_be_read_sends_nothing_and_says_so(settings, client, operator):
    settings.LAWDESK_MODEL_HOSTS = "gpu1, http://x/y"
    client.force_login(operator)
    page = html.unescape(client.get(reverse("pipeline:topology")).content.decode())
    assert "LAWDESK_MODEL_HOSTS: 'http://x/y' is not host or host:port" in page
    assert "Nothing is sent to any model server." in page


# pipeline/embedded.py asks only its own llama-server, which it has just started, whether it is up.
OPENS_CONNECTIONS = re.compile(r"httpx\.(Client|AsyncClient|get|post|put|request|stream)\(|urllib\.request|"
                               r"http\.client|aiohttp|requests\.")
ALLOWED_OPENERS = {"pipeline/llm/client.py", "pipeline/embedded.py"}


def test_every_connection_to_a_model_server_is_opened_by_the_checked_client():
    root = Path(__file__).resolve().parents[3]
    openers = {path.relative_to(root).as_posix() for top in ("pipeline", "matters", "lawdesk")
               for path in (root / top).rglob("*.py") if OPENS_CONNECTIONS.search(path.read_text())}
    assert "pipeline/llm/client.py" in openers  # the pattern finds the one that does
    assert openers <= ALLOWED_OPENERS, openers - ALLOWED_OPENERS
