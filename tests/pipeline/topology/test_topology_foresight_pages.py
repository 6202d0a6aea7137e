"""The forecast where operators see it: the admin reads a GGUF header from a path on this machine or an upload,
shows the forecast beside the last measured decode, and asks before enabling a server forecast under its floor;
the topology page shows forecast, ceiling and last measured for each server."""

import io

import pynvml
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from pipeline.models import ModelServer, ProbeResult
from pipeline.topology import discover
from pipeline.topology.gguf_header import header_read
from tests.pipeline.gguf_shapes import SHAPES
from tests.support.fake_nvml import no_driver
from tests.support.topology import server_form

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_gpu_here(monkeypatch):
    monkeypatch.setattr(discover, "pynvml", no_driver(pynvml.NVMLError_LibraryNotFound))


@pytest.fixture
def example():
    call_command("topology_load_example", yes=True, stdout=io.StringIO())


@pytest.fixture
def headers(tmp_path):
    return {name: write(tmp_path / f"{name}.gguf") for name, write in SHAPES.items()}


@pytest.fixture
def admin_operator(client, make_user):
    client.force_login(make_user("olga", "operator", is_staff=True))
    return client


def change_url(server: ModelServer) -> str:
    return reverse("admin:pipeline_modelserver_change", args=[server.pk])


def test_admin_reads_the_header_from_a_gguf_path_on_this_machine(admin_operator, example, headers):
    drafter = ModelServer.objects.get(name="drafter")
    response = admin_operator.post(change_url(drafter), server_form(drafter, model_path=str(headers["dense-32b"])),
                                   follow=True)
    drafter.refresh_from_db()
    assert drafter.gguf_header["architecture"] == "qwen2" and drafter.gguf_header["block_count"] == 64
    page = response.content.decode()
    assert "Warning: drafter: decode is forecast at 21.0 tok/s, under its floor of 40 tok/s" in page
    change = admin_operator.get(change_url(drafter)).content.decode()
    assert "qwen2" in change and "forecast 21.0 tok/s = ceiling 26.2 tok/s" in change
    assert "last measured: never" in change and "MiB needed (weights 33," in change
    listing = admin_operator.get(reverse("admin:pipeline_modelserver_changelist")).content.decode()
    assert "21.0 / 26.2" in listing


def test_a_path_that_is_not_a_gguf_is_refused_and_nothing_is_saved(admin_operator, example, tmp_path):
    drafter = ModelServer.objects.get(name="drafter")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model")
    response = admin_operator.post(change_url(drafter), server_form(drafter, model_path=str(notes)))
    assert response.status_code == 200 and "not a GGUF file" in response.content.decode()
    drafter.refresh_from_db()
    assert drafter.model_path == "/models/Qwen3.6-35B-A3B-Q8_0.gguf" and drafter.gguf_header == {}


def test_admin_reads_an_uploaded_header(admin_operator, example, headers):
    extractor = ModelServer.objects.get(name="extractor")  # Ollama: no GGUF path to read
    upload = SimpleUploadedFile("gemma-4-26b-a4b.gguf", headers["gemma-4-26b-a4b"].read_bytes())
    response = admin_operator.post(change_url(extractor), server_form(extractor, gguf_header_file=upload),
                                   follow=True)
    assert response.status_code == 200
    extractor.refresh_from_db()
    assert extractor.gguf_header["architecture"] == "gemma4"
    assert "uploaded header gemma-4-26b-a4b.gguf" in extractor.gguf_header["source"]
    garbage = SimpleUploadedFile("header.gguf", b"GGUF" + b"\xff" * 64)
    response = admin_operator.post(change_url(extractor), server_form(extractor, gguf_header_file=garbage))
    assert "the GGUF header is cut short or damaged" in response.content.decode()


def test_enabling_a_server_forecast_under_its_floor_asks_first(admin_operator, example, headers):
    drafter = ModelServer.objects.get(name="drafter")
    ModelServer.objects.filter(pk=drafter.pk).update(enabled=False,
                                                     gguf_header=header_read(headers["dense-32b"]).to_json())
    drafter.refresh_from_db()
    response = admin_operator.post(change_url(drafter), server_form(drafter, enabled="on"))
    assert response.status_code == 200
    assert "Decode is forecast at 21.0 tok/s, under this server&#x27;s floor of 40 tok/s" in \
        response.content.decode()
    drafter.refresh_from_db()
    assert not drafter.enabled
    admin_operator.post(change_url(drafter), server_form(drafter, enabled="on", enable_despite_forecast="on"))
    drafter.refresh_from_db()
    assert drafter.enabled
    # a MoE model that clears the floor is enabled without a question
    reasoner = ModelServer.objects.get(name="reasoner")
    ModelServer.objects.filter(pk=reasoner.pk).update(
        enabled=False, gguf_header=header_read(headers["qwen3.5-122b-a10b"]).to_json())
    reasoner.refresh_from_db()
    admin_operator.post(change_url(reasoner), server_form(reasoner, enabled="on"))
    reasoner.refresh_from_db()
    assert reasoner.enabled


def test_topology_page_shows_forecast_ceiling_and_last_measured(client, make_user, example, headers):
    reasoner = ModelServer.objects.get(name="reasoner")
    ModelServer.objects.filter(pk=reasoner.pk).update(gguf_header=header_read(headers["qwen3.5-122b-a10b"]).to_json())
    ProbeResult.objects.create(server=reasoner, status="up", decode_tok_s=50.0)
    client.force_login(make_user("otto", "operator"))
    page = client.get(reverse("pipeline:topology")).content.decode()
    assert "<strong>46.4</strong> / 92.8 / 50.0" in page
    assert "no forecast: no GGUF header read yet" in page  # the servers without one say so
