"""Fixtures shared by the pipeline tests."""

import pytest

from pipeline.embedded import start_embedded_server
from tests.support.scripted_server import ScriptedServer


@pytest.fixture
def server():
    """Yield a scripted model server listening on loopback; it stops when the test ends."""
    with ScriptedServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """Yield the real embedded model server (llama-server with the default model on the CPU), started once per
    module since loading the model takes seconds; it stops after the module's last test."""
    server = start_embedded_server(log_path=tmp_path_factory.mktemp("llama") / "llama-server.log")
    yield server
    server.stop()
