"""Fixtures shared by the pipeline tests."""

import pytest

from tests.support.scripted_server import ScriptedServer


@pytest.fixture
def server():
    """Yield a scripted model server listening on loopback; it stops when the test ends."""
    with ScriptedServer() as scripted:
        yield scripted
