"""The topology page and the admin: who may see them, the picture, the warning banner, errors refused on save,
the write-only API key, and the "probe now" and "discover" actions."""

import html

import pynvml
import pytest
from django.core.management import call_command
from django.urls import reverse

from pipeline.api_keys import key_read
from pipeline.models import GPU, ModelServer, ProbeResult
from pipeline.topology import discover
from tests.support.fake_nvml import no_driver, threadripper
from tests.support.scripted_server import ScriptedServer, llama_cpp_routes
from tests.support.topology import server_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def example():
    call_command("topology_load_example", "--yes")


@pytest.fixture
def operator(make_user):
    return make_user("otto", "operator")


@pytest.fixture(autouse=True)
def no_gpu_here(monkeypatch):
    monkeypatch.setattr(discover, "pynvml", no_driver(pynvml.NVMLError_LibraryNotFound))


def test_operator_sees_the_topology_drawn_with_its_warning(client, operator, example, matter):
    client.force_login(operator)
    page = client.get(reverse("pipeline:topology")).content.decode()
    assert "<svg" in page and 'class="nvlink"' in page
    for name in ("Board A", "Board B", "Pair 0-1", "Pair 2-3", "drafter", "reasoner", "router, summarizer"):
        assert name in page
    assert 'id="rule-banner"' in page and "1 warning" in page and "reviewer runs on Pair 2-3" in page
    assert matter.name not in page and matter.case_number not in page  # operators see no matter content
    assert reverse("pipeline:topology") in client.get(reverse("matters:list")).content.decode()  # nav link


def test_attorney_who_is_not_staff_cannot_open_it(client, attorney):
    client.force_login(attorney)
    assert client.get(reverse("pipeline:topology")).status_code == 403
    assert client.post(reverse("pipeline:topology_probe")).status_code == 403
    assert reverse("pipeline:topology") not in client.get(reverse("matters:list")).content.decode()


def test_staff_may_open_it_and_anonymous_users_are_sent_to_login(client, make_user):
    response = client.get(reverse("pipeline:topology"))
    assert response.status_code == 302 and reverse("login") in response["Location"]
    client.force_login(make_user("sam", "attorney", is_staff=True))
    assert client.get(reverse("pipeline:topology")).status_code == 200


def test_page_shows_status_last_speed_and_history(client, operator, example):
    drafter = ModelServer.objects.get(name="drafter")
    for speed in (52.0, 47.5, 31.25):
        ProbeResult.objects.create(server=drafter, status="up" if speed >= 40 else "slow", decode_tok_s=speed)
    client.force_login(operator)
    page = client.get(reverse("pipeline:topology")).content.decode()
    assert "slow · 31.2 tok/s" in page
    assert page.count('class="decode"') == 1 and "floor 40" in page


def test_probe_button_records_a_probe(client, operator):
    with ScriptedServer() as scripted:
        llama_cpp_routes(scripted, timings={"predicted_n": 32, "predicted_per_second": 44.0})
        ModelServer.objects.create(name="gate", base_url=scripted.url)
        client.force_login(operator)
        response = client.post(reverse("pipeline:topology_probe"), follow=True)
    assert "gate: up, 44.0 tok/s" in response.content.decode()
    assert ProbeResult.objects.get().status == "up"


def test_discover_button_without_a_driver_changes_nothing(client, operator):
    client.force_login(operator)
    response = client.post(reverse("pipeline:topology_discover"), {"host": "here"}, follow=True)
    assert "no NVIDIA driver" in response.content.decode() and "Nothing was changed" in response.content.decode()
    assert not GPU.objects.exists()


def test_discover_button_records_the_boards(client, operator, monkeypatch):
    monkeypatch.setattr(discover, "pynvml", threadripper())
    client.force_login(operator)
    response = client.post(reverse("pipeline:topology_discover"), {"host": "threadripper"}, follow=True)
    assert "12 GPU(s), 4 board(s) proposed" in response.content.decode()


@pytest.fixture
def admin_operator(make_user):
    return make_user("olga", "operator", is_staff=True)


def test_admin_refuses_a_server_spanning_boards(client, admin_operator, example):
    drafter = ModelServer.objects.get(name="drafter")
    spanning = list(GPU.objects.filter(host__name="threadripper", index__in=(4, 5, 6)).values_list("pk", flat=True))
    client.force_login(admin_operator)
    url = reverse("admin:pipeline_modelserver_change", args=[drafter.pk])
    response = client.post(url, server_form(drafter, gpus=spanning))
    assert response.status_code == 200  # the form again, with the error
    assert "drafter is pinned to GPUs of more than one board (Board A, Board B)" in response.content.decode()
    assert sorted(g.index for g in drafter.gpus.all()) == [4, 5, 8, 9]


def test_admin_api_key_is_write_only(client, admin_operator, example):
    drafter = ModelServer.objects.get(name="drafter")
    client.force_login(admin_operator)
    url = reverse("admin:pipeline_modelserver_change", args=[drafter.pk])
    response = client.post(url, server_form(drafter, api_key="sk-never-shown"), follow=True)
    assert response.status_code == 200 and key_read(drafter) == "sk-never-shown"
    page = html.unescape(client.get(url).content.decode())
    assert "sk-never-shown" not in page
    assert "set (stored outside the database" in page and '--api-key "$LAWDESK_API_KEY_DRAFTER"' in page
    client.post(url, server_form(drafter), follow=True)  # blank keeps the key
    assert key_read(drafter) == "sk-never-shown"
    client.post(url, server_form(drafter, clear_api_key="on"), follow=True)
    assert key_read(drafter) == ""


def test_admin_warns_after_saving_a_warned_configuration(client, admin_operator, example):
    gate = ModelServer.objects.get(name="gate")
    client.force_login(admin_operator)
    url = reverse("admin:pipeline_modelserver_change", args=[gate.pk])
    response = client.post(url, server_form(gate, flash_attention=""), follow=True)
    assert "Warning: gate has a quantized KV cache (q4_0) without flash attention" in response.content.decode()
    assert ModelServer.objects.get(pk=gate.pk).flash_attention is False


def test_admin_lists_servers_with_status_and_filters(client, admin_operator, example):
    ProbeResult.objects.create(server=ModelServer.objects.get(name="reasoner"), status="loading")
    client.force_login(admin_operator)
    listing = client.get(reverse("admin:pipeline_modelserver_changelist")).content.decode()
    assert ">loading</strong>" in listing and "not probed" in listing
    board_a = ModelServer.objects.get(name="drafter").gpus.first().boards.get()
    filtered = client.get(reverse("admin:pipeline_modelserver_changelist"), {"gpus__boards__id__exact": board_a.pk})
    assert [server.name for server in filtered.context["cl"].result_list] == ["drafter"]
    for name in ("host", "gpu", "board", "nvlink", "roleassignment", "proberesult"):
        assert client.get(reverse(f"admin:pipeline_{name}_changelist")).status_code == 200


def test_admin_probe_now_action(client, admin_operator):
    with ScriptedServer() as scripted:
        llama_cpp_routes(scripted, timings={"predicted_n": 32, "predicted_per_second": 12.0})
        server = ModelServer.objects.create(name="gate", base_url=scripted.url)
        client.force_login(admin_operator)
        response = client.post(reverse("admin:pipeline_modelserver_changelist"),
                               {"action": "probe_now", "_selected_action": [server.pk]}, follow=True)
    assert "gate: slow, 12.0 tok/s" in response.content.decode().lower()  # the admin capitalises messages
    assert ProbeResult.objects.get(server=server).status == "slow"


def test_admin_discover_action_without_driver(client, admin_operator, example):
    client.force_login(admin_operator)
    host = GPU.objects.first().host
    before = GPU.objects.count()
    response = client.post(reverse("admin:pipeline_host_changelist"),
                           {"action": "discover_here", "_selected_action": [host.pk]}, follow=True)
    assert "Nothing was changed" in response.content.decode() and GPU.objects.count() == before


def test_page_shows_live_memory_and_utilization_of_this_machines_gpus(client, operator, monkeypatch):
    monkeypatch.setattr(discover, "pynvml", threadripper())
    client.force_login(operator)
    client.post(reverse("pipeline:topology_discover"), {"host": "threadripper"})
    page = client.get(reverse("pipeline:topology")).content.decode()
    assert "10.5 GiB used, 37% busy" in page  # GPU 4, read through NVML
    assert page.count("GiB used") == 12 and "Live GPU memory" not in page


def test_with_no_host_the_page_says_so_draws_no_empty_picture_and_labels_every_input(client, operator):
    from tests.html_checks import empty_cards, unlabelled_controls

    client.force_login(operator)
    page = client.get(reverse("pipeline:topology")).content.decode()
    assert "topology-picture" not in page and "No host is recorded yet" in page
    assert unlabelled_controls(page) == [] and empty_cards(page) == []
    assert "<label>Record the GPUs under host <input" in page


def test_probes_that_stopped_are_said_on_the_page(client, operator, example, settings):
    """Probes run every LAWDESK_PROBE_INTERVAL_S on a worker of their own; with none taking that queue the page
    would show an hours-old "up" as if current. Three intervals late, it says so and how to start one."""
    from datetime import timedelta

    from django.utils import timezone

    settings.LAWDESK_PROBE_INTERVAL_S = 300
    client.force_login(operator)
    page = html.unescape(client.get(reverse("pipeline:topology")).content.decode())
    assert 'id="probe-note"' in page and "No server has been probed yet" in page
    servers = list(ModelServer.objects.filter(enabled=True))
    for server in servers:
        ProbeResult.objects.create(server=server, status=ProbeResult.Status.UP, decode_tok_s=40.0,
                                   at=timezone.now() - timedelta(minutes=14))
    page = html.unescape(client.get(reverse("pipeline:topology")).content.decode())
    assert 'id="probe-note"' not in page  # 14 minutes: under three intervals of 5
    ProbeResult.objects.all().update(at=timezone.now() - timedelta(hours=2))
    page = html.unescape(client.get(reverse("pipeline:topology")).content.decode())
    assert 'id="probe-note"' in page and "The newest probe is 120 min old" in page
    assert "probes should run every 5 min" in page and "db_worker --queue-name probes" in page
