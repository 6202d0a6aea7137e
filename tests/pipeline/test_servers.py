"""Registering the embedded model server: it holds every role that generates text until another server is
enabled."""

import subprocess
import sys

import pytest

from pipeline.embedded import EmbeddedServer
from pipeline.models import RETRIEVAL_ROLES, ModelServer, Role, RoleAssignment
from pipeline.servers import needs_embedded, register_embedded

pytestmark = pytest.mark.django_db


def test_embedded_server_takes_every_role_and_its_new_address(tmp_path):
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert needs_embedded()
    first = register_embedded(EmbeddedServer(process=process, base_url="http://127.0.0.1:41001", model_path=tmp_path))
    again = register_embedded(EmbeddedServer(process=process, base_url="http://127.0.0.1:41002", model_path=tmp_path))
    assert first.pk == again.pk and ModelServer.objects.count() == 1
    assert again.base_url == "http://127.0.0.1:41002" and again.embedded
    # Every role that generates text; the embedder role belongs to the embedded embedder (its own server).
    assert set(RoleAssignment.objects.values_list("role", flat=True)) == set(Role.values) - RETRIEVAL_ROLES
    assert set(RoleAssignment.objects.values_list("server", flat=True)) == {again.pk}
    config = again.client_config()
    assert (config.backend, config.base_url, config.context_tokens) == ("llama.cpp", again.base_url, 8192)


def test_another_enabled_server_means_no_embedded_one():
    ModelServer.objects.create(name="board-a-drafter", base_url="http://127.0.0.1:41003", enabled=False)
    assert needs_embedded()
    ModelServer.objects.filter(name="board-a-drafter").update(enabled=True)
    assert not needs_embedded()
