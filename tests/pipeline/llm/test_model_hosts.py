"""Where evidence may go: LAWDESK_MODEL_HOSTS checked by the client before any request, a server whose address or
backend changes loses its API key and waits for a probe, and every topology change is in the system audit chain."""

import html
from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from matters.audit.services import audit_verify
from matters.models import AuditEntry
from pipeline.api_keys import key_read, key_write
from pipeline.llm import HostAllowlist, HostNotAllowed, ModelClient
from pipeline.llm.client import ServerConfig
from pipeline.llm.hosts import check_server_address
from pipeline.models import ModelServer, Role
from pipeline.stages.control import job_start
from pipeline.topology.probe import server_probe
from tests.support.jobs import register, run_all
from tests.support.scripted_server import ScriptedServer, llama_cpp_routes
from tests.support.stage_server import TIMINGS, stage_server
from tests.support.topology import server_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def scripted():
    with ScriptedServer() as server:
        yield server


@pytest.mark.parametrize("url, listed", [
    ("http://127.0.0.1:8080", "127.0.0.1:8080"), ("http://localhost:8080", "localhost:8080"),
    ("http://[::1]:8080", "[::1]:8080"), ("http://127.0.0.5:1", "127.0.0.5"), ("http://LOCALHOST.:9", "localhost:9"),
    ("http://threadripper:8080", "threadripper"), ("http://threadripper:8080", "threadripper:8080"),
    ("http://ThreadRipper.:8080", "threadripper:8080"), ("https://gpu.office.lan", "gpu.office.lan:443"),
    ("http://[fd00::7]:8000", "[fd00::7]:8000"), ("http://10.0.0.5:8000", "10.0.0.4 10.0.0.5"),
])
def test_allowed_addresses(url, listed):
    check_server_address(url, HostAllowlist.parse(listed))


@pytest.mark.parametrize("url, listed", [
    ("http://threadripper:8080", ""),                       # not listed: nothing is allowed by default
    ("http://127.0.0.1:8080", ""),                          # loopback too: any local account may listen there
    ("http://localhost:8080", ""), ("http://[::1]:8080", ""),
    ("http://127.0.0.1:8081", "127.0.0.1:8080"),            # another loopback port is another destination
    ("http://threadripper:8081", "threadripper:8080"),      # listed on another port
    ("http://10.0.0.50:8000", "10.0.0.5"),                  # a prefix is not a match
    ("http://evil.example:80", "evil.example.lan"),
    ("http://127.0.0.1@evil.example:8080", "127.0.0.1"),    # user info: the host is evil.example
    ("http://evil.example\\@127.0.0.1:8080", "127.0.0.1"),  # parsers disagree on the host
    ("http://2130706433:8080", "127.0.0.1"),                # 127.0.0.1 to a resolver, not to the allowlist
    ("http://0x7f.1:8080", "127.0.0.1"),
    ("ftp://127.0.0.1:21", "127.0.0.1"),
    ("file:///etc/passwd", ""),
    ("http://:8080", ""),
])
def test_refused_addresses_name_the_setting(url, listed):
    with pytest.raises(HostNotAllowed) as refused:
        check_server_address(url, HostAllowlist.parse(listed))
    assert "nothing was sent" in str(refused.value).lower()


def test_a_bad_entry_in_the_setting_is_named():
    with pytest.raises(ValueError, match="LAWDESK_MODEL_HOSTS: 'http://x/y'"):
        HostAllowlist.parse("gpu1, http://x/y")


def test_client_refuses_a_reachable_server_outside_the_list_before_any_request(scripted):
    llama_cpp_routes(scripted, timings=TIMINGS)
    port = urlsplit(scripted.url).port
    # 127.1 reaches the scripted server (a resolver reads it as 127.0.0.1), but it is not a listed host.
    outside = ServerConfig(base_url=f"http://127.1:{port}", api_key="sk-secret", name="sink")
    with pytest.raises(HostNotAllowed, match="127.1:%d is not in LAWDESK_MODEL_HOSTS" % port):
        ModelClient(outside)
    assert scripted.requests == []
    listed = ServerConfig(base_url=f"http://127.1:{port}", name="sink",
                          allowed_hosts=HostAllowlist.parse(f"127.1:{port}"))
    client = ModelClient(listed)
    assert client.health() == "up" and scripted.requests


def test_a_summary_job_never_sends_evidence_outside_the_list(settings, matter, record, attorney, scripted):
    stage_server(scripted)
    port = urlsplit(scripted.url).port
    server = register(f"http://127.1:{port}", roles=tuple(Role))
    key_write(server=server, key="sk-write-only")
    job = job_start(matter=matter, kind="summary", instructions="Summarise the record.", user=attorney, enqueue=False)
    runs = run_all(job)
    assert runs[0].status == "failed" and "LAWDESK_MODEL_HOSTS" in runs[0].error
    assert scripted.requests == []  # no packet, no key
    settings.LAWDESK_MODEL_HOSTS = f"127.1:{port}"  # what the installer may do, outside the admin
    job = job_start(matter=matter, kind="summary", instructions="Summarise the record.", user=attorney, enqueue=False)
    assert run_all(job)[0].status == "done" and scripted.requests


def test_probe_outside_the_list_is_down_with_the_reason_and_sends_nothing(scripted):
    llama_cpp_routes(scripted, timings=TIMINGS)
    port = urlsplit(scripted.url).port
    server = ModelServer.objects.create(name="sink", base_url=f"http://127.1:{port}")
    result = server_probe(server=server)
    assert result.status == "down" and "LAWDESK_MODEL_HOSTS" in result.error
    assert scripted.requests == []


@pytest.fixture
def admin_operator(make_user):
    return make_user("olga", "operator", is_staff=True)


def test_changing_the_address_clears_the_key_and_waits_for_a_probe(client, admin_operator, matter, record, attorney,
                                                                   scripted):
    stage_server(scripted)
    llama_cpp_routes(scripted, timings=TIMINGS)
    server = register("http://127.0.0.1:9", name="drafter")
    key_write(server=server, key="sk-for-the-old-address")
    client.force_login(admin_operator)
    url = reverse("admin:pipeline_modelserver_change", args=[server.pk])
    response = client.post(url, server_form(server, base_url=scripted.url), follow=True)
    assert response.status_code == 200 and "Out of service" in response.content.decode()
    server.refresh_from_db()
    assert key_read(server) == "" and "base_url changed" in server.out_of_service_reason

    job = job_start(matter=matter, kind="summary", instructions="Summarise.", user=attorney, enqueue=False)
    first = run_all(job)[0]
    assert first.status == "waiting_for_server" and "Out of service" in first.error
    assert not [path for path, _ in scripted.requests if "chat" in path]

    assert server_probe(server=server).status in ("up", "slow")
    server.refresh_from_db()
    assert server.out_of_service_reason == ""
    assert run_all(job)[0].status == "done"

    actions = list(AuditEntry.objects.filter(chain="system", action__startswith="topology.")
                   .order_by("seq").values_list("action", "actor"))
    assert actions == [("topology.change", "olga"), ("topology.in_service", "system")]
    change = AuditEntry.objects.get(action="topology.change")
    assert change.detail["changes"]["base_url"] == ["http://127.0.0.1:9", scripted.url]
    assert change.detail["api_key"].startswith("cleared")
    assert "sk-for-the-old-address" not in str(change.detail)


def test_changing_the_backend_also_clears_the_key():
    server = ModelServer.objects.create(name="gate", base_url="http://127.0.0.1:9", backend="llama.cpp")
    key_write(server=server, key="sk-old")
    server.backend = "openai"
    server.save()
    assert key_read(server) == "" and "backend changed from llama.cpp to openai" in server.out_of_service_reason
    server.enabled = False  # any other field keeps the key and the service state as they are
    key_write(server=server, key="sk-new")
    server.save()
    assert key_read(server) == "sk-new"


def test_every_topology_change_is_audited_and_listed(client, admin_operator):
    client.force_login(admin_operator)
    client.post(reverse("admin:pipeline_host_add"), {
        "name": "threadripper", "address": "10.0.0.5", "notes": "",
        "gpus-TOTAL_FORMS": "0", "gpus-INITIAL_FORMS": "0", "boards-TOTAL_FORMS": "0", "boards-INITIAL_FORMS": "0"})
    server = ModelServer.objects.create(name="gate", base_url="http://127.0.0.1:9")
    url = reverse("admin:pipeline_modelserver_change", args=[server.pk])
    client.post(url, server_form(server, api_key="sk-new-key", **{
        "roles-TOTAL_FORMS": "1", "roles-0-role": "gate", "roles-0-id": "", "roles-0-server": server.pk}))
    client.post(url, server_form(server, clear_api_key="on", model_name="gemma-3-12b"))
    client.post(reverse("admin:pipeline_modelserver_delete", args=[server.pk]), {"post": "yes"})
    entries = list(AuditEntry.objects.filter(chain="system", action__startswith="topology.").order_by("seq"))
    assert [(e.action, e.actor, e.detail["model"]) for e in entries] == [
        ("topology.add", "olga", "pipeline.host"), ("topology.change", "olga", "pipeline.modelserver"),
        ("topology.change", "olga", "pipeline.modelserver"), ("topology.delete", "olga", "pipeline.modelserver")]
    assert entries[0].detail["changes"]["address"] == ["", "10.0.0.5"]
    assert entries[1].detail["api_key"] == "set" and entries[1].detail["inlines"][0]["changes"]["role"] == ["", "gate"]
    assert entries[2].detail["api_key"] == "cleared"
    assert entries[2].detail["changes"]["model_name"] == ["", "gemma-3-12b"]
    assert "sk-new-key" not in str([e.detail for e in entries])
    assert audit_verify(matter=None).ok

    page = html.unescape(client.get(reverse("pipeline:topology")).content.decode())
    assert 'id="topology-changes"' in page
    assert "model_name: (none) -> gemma-3-12b" in page and "api key: cleared" in page
    assert "address: (none) -> 10.0.0.5" in page and "topology.delete" in page
