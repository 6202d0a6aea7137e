"""The topology commands say what they do: unknown servers are named, the example asks first, and the way back."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pipeline.models import ModelServer, Role, RoleAssignment
from pipeline.servers import needs_embedded

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def embedded():
    server = ModelServer.objects.create(name="embedded", base_url="http://127.0.0.1:9", model_name="smollm2",
                                        context_tokens=8192, embedded=True)
    for role in Role:
        RoleAssignment.objects.create(role=role, server=server)
    return server


def test_probe_of_an_unknown_server_is_an_error_naming_the_servers(embedded):
    with pytest.raises(CommandError, match=r"No model server named nosuch\. The servers are: embedded\."):
        call_command("topology_probe", "--server", "nosuch")


def test_load_example_without_yes_changes_nothing(embedded):
    with pytest.raises(CommandError, match="--yes"):
        call_command("topology_load_example", stdout=io.StringIO(), stderr=io.StringIO())
    assert ModelServer.objects.count() == 1
    assert set(RoleAssignment.objects.values_list("server__name", flat=True)) == {"embedded"}


def test_load_example_prints_each_role_moved_and_use_embedded_moves_them_back(embedded):
    out = run("topology_load_example", "--yes")
    assert "role drafter: embedded -> drafter" in out and "role router: embedded -> gemma" in out
    assert "topology_use_embedded" in out
    assert not needs_embedded()  # `make run` would not start the embedded model now

    back = run("topology_use_embedded")
    assert "disabled server drafter" in back and "role drafter: drafter -> embedded" in back
    assert set(RoleAssignment.objects.values_list("server__name", flat=True)) == {"embedded"}
    assert needs_embedded()
    assert ModelServer.objects.count() == 7  # nothing deleted
    assert "Nothing to change" in run("topology_use_embedded")
