"""The rules table against the example deployment and against configurations that break each rule, as the admin
forms report them; launch lines; API keys kept out of the database."""

import os
import stat

import pytest
from django.core.management import call_command

from pipeline.admin_forms import BoardForm, ModelServerForm
from pipeline.api_keys import key_path, key_write
from pipeline.models import GPU, RETRIEVAL_ROLES, Board, Host, ModelServer, NVLink, Role, RoleAssignment
from pipeline.topology.launch import launch_line
from pipeline.topology.memory import kv_cache_mib
from pipeline.topology.rules import RULES, problems, server_problems
from pipeline.topology.selectors import snapshot_load
from tests.support.topology import server_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def example():
    call_command("topology_load_example", "--yes")


def gpus(host: str, *indexes: int) -> list[GPU]:
    return list(GPU.objects.filter(host__name=host, index__in=indexes).order_by("index"))


def server_form_errors(server: ModelServer, pinned: list[GPU] | None = None) -> dict[str, list[str]]:
    """The admin form's errors for ``server`` with its values as edited, pinned to ``pinned`` (default: its saved
    GPUs); {} when it would be saved."""
    changes = {"gpus": [gpu.pk for gpu in pinned]} if pinned is not None else {}
    form = ModelServerForm(data=server_form(server, **changes), instance=server)
    return {} if form.is_valid() else dict(form.errors)


def rules_broken(server: ModelServer) -> set[str]:
    return {p.rule for p in server_problems(server, [gpu.pk for gpu in server.gpus.all()], snapshot_load())}


def test_example_is_the_deployment_and_loads_twice_the_same(example):
    first = (GPU.objects.count(), Board.objects.count(), NVLink.objects.count(), ModelServer.objects.count())
    call_command("topology_load_example", "--yes")
    assert (GPU.objects.count(), Board.objects.count(), NVLink.objects.count(), ModelServer.objects.count()) == first
    boards = {b.name: (b.kind, sorted(g.index for g in b.gpus.all()))
              for b in Board.objects.filter(host__name="threadripper")}
    assert boards == {"Board A": ("nvlink_group", [4, 5, 8, 9]), "Board B": ("nvlink_group", [6, 7, 10, 11]),
                      "Pair 0-1": ("nvlink_pair", [0, 1]), "Pair 2-3": ("nvlink_pair", [2, 3])}
    assert GPU.objects.filter(host__name="threadripper").count() == 12
    assert sorted(GPU.objects.filter(host__name="threadripper").values_list("memory_total_mib", flat=True))[0] == 16384
    assert sorted(GPU.objects.filter(host__name="epyc").values_list("name", flat=True)) == \
        ["NVIDIA GeForce RTX 3090"] * 4 + ["Tesla V100-PCIE-32GB"] * 2
    holders = dict(RoleAssignment.objects.values_list("role", "server__name"))
    assert holders == {"drafter": "drafter", "reasoner": "reasoner", "gate": "gate", "reviewer": "reviewer",
                       "extractor": "extractor", "router": "gemma", "summarizer": "gemma"}
    # Every role that generates text; the example deployment names no embedder (LawDesk's own serves it).
    assert set(holders) == set(Role.values) - RETRIEVAL_ROLES
    drafter = ModelServer.objects.get(name="drafter")
    assert (drafter.quantization, drafter.kv_cache_type, drafter.flash_attention) == ("q8_0", "q4_0", True)
    assert ModelServer.objects.get(name="extractor").backend == "ollama"


def test_example_breaks_only_the_mixed_memory_rule(example):
    found = problems(snapshot_load())
    assert [(p.level, p.rule) for p in found] == [("warning", "board_mixed_memory")]
    assert "reviewer runs on Pair 2-3" in found[0].message and "16,384 MiB and 32,768 MiB" in found[0].message


def test_server_spanning_boards_is_an_error(example):
    drafter = ModelServer.objects.get(name="drafter")
    message = server_form_errors(drafter, gpus("threadripper", 4, 5, 6))["gpus"][0]
    assert "drafter is pinned to GPUs of more than one board (Board A, Board B)" in message
    assert "PCIe/NUMA" in message
    assert server_form_errors(drafter, gpus("threadripper", 4, 5, 8, 9)) == {}  # back inside Board A: no error


def test_gpus_of_another_host_are_an_error(example):
    errors = server_form_errors(ModelServer.objects.get(name="gate"), gpus("epyc", 0))
    assert "pinned to GPUs of another host" in errors["gpus"][0]


def test_a_gpu_in_two_boards_is_an_error(example):
    form = BoardForm(data={"host": Host.objects.get(name="threadripper").pk, "name": "Board C", "kind": "nvlink_pair",
                           "gpus": [gpu.pk for gpu in gpus("threadripper", 9, 10)]})
    assert not form.is_valid()
    messages = form.errors["gpus"]
    assert any("GPU 9 (threadripper) is in two boards (Board A, Board C)" in m for m in messages)
    assert any("GPU 10 (threadripper) is in two boards (Board B, Board C)" in m for m in messages)


def test_two_enabled_servers_on_one_gpu_is_a_warning(example):
    spare = ModelServer.objects.create(name="spare", host=Host.objects.get(name="threadripper"),
                                       base_url="http://threadripper:8090")
    spare.gpus.set(gpus("threadripper", 0))
    assert "gpu_shared" in rules_broken(spare)
    assert server_form_errors(spare) == {}  # a warning never blocks saving
    spare.enabled = False
    spare.save()
    assert "gpu_shared" not in rules_broken(spare)


def test_quantized_cache_without_flash_attention_is_a_warning(example):
    gate = ModelServer.objects.get(name="gate")
    assert "quantized_cache_without_flash_attention" not in rules_broken(gate)
    gate.flash_attention = False
    assert "quantized_cache_without_flash_attention" in rules_broken(gate)
    gate.kv_cache_type = "f16"
    assert "quantized_cache_without_flash_attention" not in rules_broken(gate)


@pytest.mark.parametrize("quantization, host, indexes, warned", [
    ("awq", "threadripper", (0, 1), True),
    ("fp8", "threadripper", (0, 1), True),
    ("gptq", "threadripper", (0, 1), True),
    ("gptq_marlin", "threadripper", (0, 1), True),
    ("awq", "epyc", (0, 1, 2, 3), False),
    ("gptq_marlin", "epyc", (0, 1, 2, 3), False),
    ("", "threadripper", (0, 1), False),
])
def test_vllm_kernels_need_their_compute_capability(example, quantization, host, indexes, warned):
    server = ModelServer.objects.create(name="vllm", backend="vllm", host=Host.objects.get(name=host),
                                        base_url=f"http://{host}:8000", quantization=quantization, enabled=False)
    server.gpus.set(gpus(host, *indexes))
    found = [p for p in server_problems(server, [g.pk for g in server.gpus.all()], snapshot_load())
             if p.rule == "vllm_compute_capability"]
    assert bool(found) == warned
    if warned:
        assert "compute capability 7.0" in found[0].message


def test_kv_cache_size_follows_ggml_block_sizes():
    shape = {"context_tokens": 32768, "attention_layers": 48, "kv_heads": 4, "head_dim": 128}
    assert kv_cache_mib(**shape, cache_type="f16") == 3072.0
    assert kv_cache_mib(**shape, cache_type="q4_0") == 864.0  # 18 bytes per 32 values
    assert kv_cache_mib(**shape, cache_type="q8_0") == 1632.0  # 34 bytes per 32 values


def test_ollama_needs_a_context_size(example):
    extractor = ModelServer.objects.get(name="extractor")
    extractor.context_tokens = None
    assert "without a context size" in server_form_errors(extractor)["context_tokens"][0]


def test_every_rule_names_its_source():
    assert len({rule.id for rule in RULES}) == len(RULES)
    assert all(rule.source and rule.level in ("error", "warning") for rule in RULES)


def test_launch_line_starts_the_server_as_configured(example):
    drafter = ModelServer.objects.get(name="drafter")
    assert launch_line(drafter) == (
        "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=4,5,8,9 llama-server -m /models/Qwen3.6-35B-A3B-Q8_0.gguf "
        "--alias qwen3.6-35b-a3b --host 0.0.0.0 --port 8080 -fa on -ctk q4_0 -ctv q4_0 -c 32768 -ngl 999 "
        "--parallel 1"
    )
    for index, gpu in enumerate(drafter.gpus.order_by("index")):
        GPU.objects.filter(pk=gpu.pk).update(uuid=f"GPU-{index}")
    drafter.parallel_slots = 2
    line = launch_line(drafter)
    assert "CUDA_VISIBLE_DEVICES=GPU-0,GPU-1,GPU-2,GPU-3 " in line
    assert "-c 65536 " in line and "--parallel 2" in line  # -c is the total, shared by the slots


def test_api_key_lives_in_a_private_file_and_the_launch_line_names_only_its_variable(example, data_dir):
    drafter = ModelServer.objects.get(name="drafter")
    key_write(server=drafter, key="sk-very-secret")
    path = key_path(drafter)
    assert path.is_relative_to(data_dir) and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert "sk-very-secret" not in str(list(ModelServer.objects.values()))
    line = launch_line(drafter)
    assert line.endswith('--api-key "$LAWDESK_API_KEY_DRAFTER"') and "sk-very-secret" not in line
    assert drafter.client_config().api_key == "sk-very-secret"
    drafter.delete()
    assert not path.exists()
