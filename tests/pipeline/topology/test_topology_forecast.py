"""The decode-speed forecast: GGUF headers read with the gguf package (headers only, written by its own writer),
bytes per token, the bandwidth table and NVML's figures, the ranking the deployment observed on V100-SXM2, the
efficiency factor learned from probes, and the memory fit from the header."""

import io

import pytest
from django.core.management import call_command

from pipeline.models import GPU, ModelServer, ProbeResult
from pipeline.topology import discover
from pipeline.topology.bandwidth import (
    board_bandwidth,
    gpu_bandwidth,
    nvml_bandwidth_gbs,
    table_bandwidth,
)
from pipeline.topology.forecast import (
    DEFAULT_EFFICIENCY,
    bytes_per_token,
    forecast,
    memory_need,
)
from pipeline.topology.gguf_header import GgufHeaderError, header_read
from pipeline.topology.rules import server_problems
from pipeline.topology.selectors import server_foresight, snapshot_load
from tests.pipeline.gguf_shapes import MEASURED_V100_TOK_S, SHAPES
from tests.support.fake_nvml import FakeGpu, FakeNvml

FLOOR_TOK_S = 40.0  # the office's floor


@pytest.fixture(scope="module")
def headers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gguf")
    return {name: write(folder / f"{name}.gguf") for name, write in SHAPES.items()}


def test_headers_are_read_without_weights(headers):
    dense, qwen, gemma = (header_read(headers[n]) for n in ("dense-32b", "qwen3.5-122b-a10b", "gemma-4-26b-a4b"))
    assert all(headers[n].stat().st_size < 200_000 for n in headers)  # header and tensor infos only
    assert (dense.architecture, dense.block_count, dense.expert_count) == ("qwen2", 64, None)
    assert 32.5e9 < dense.weights_bytes / (34 / 32) < 33.0e9  # Q8_0: 34 bytes per 32 weights
    assert dense.attention_layers == 64 and dense.kv_elements_full == 64 * 2 * 1024
    assert (qwen.expert_count, qwen.expert_used_count) == (256, 8)
    assert qwen.attention_layers == 12  # the Gated DeltaNet layers keep no KV cache
    assert 115e9 < qwen.weights_bytes / (34 / 32) < 125e9 and 8e9 < qwen.active_weight_bytes / (34 / 32) < 11e9
    # Gemma 4: 25 sliding layers of 8x256 K and V, 5 global layers of 2x512 K shared as V; tied embeddings are
    # read whole as the output matrix
    assert (gemma.sliding_window, gemma.kv_elements_sliding, gemma.kv_elements_full) == (1024, 25 * 4096, 5 * 2048)
    assert 24.5e9 < gemma.weights_bytes / (34 / 32) < 26e9 and 3.5e9 < gemma.active_weight_bytes / (34 / 32) < 4.2e9


def test_forecast_ranks_the_models_as_the_deployment_measured_them(headers):
    v100 = table_bandwidth("Tesla V100-SXM2-32GB")
    assert v100.gbs == 900.0 and "datasheet" in v100.source
    results = {}
    for name, path in headers.items():
        result = forecast(header_read(path), bandwidth_gbs=v100.gbs, kv_cache_type="q4_0")
        low, high = MEASURED_V100_TOK_S[name]
        middle = (low + high) / 2
        error = (result.forecast_tok_s - middle) / middle
        print(f"\n{name}: forecast {result.forecast_tok_s:.1f} tok/s, ceiling {result.ceiling_tok_s:.1f}, "
              f"{result.bytes_per_token / 1e9:.2f} GB/token, measured {low:g}-{high:g}, error {error:+.0%}")
        assert result.forecast_tok_s <= result.ceiling_tok_s
        assert abs(error) < 0.2  # each within a fifth of what was measured
        results[name] = result.forecast_tok_s
    assert results["dense-32b"] < FLOOR_TOK_S < results["qwen3.5-122b-a10b"] < results["gemma-4-26b-a4b"]


def test_longer_context_reads_more_cache_and_a_window_caps_it(headers):
    dense, gemma = header_read(headers["dense-32b"]), header_read(headers["gemma-4-26b-a4b"])
    assert bytes_per_token(dense, kv_cache_type="f16", kv_fill_tokens=32768) > \
        bytes_per_token(dense, kv_cache_type="q4_0", kv_fill_tokens=32768) > \
        bytes_per_token(dense, kv_cache_type="q4_0", kv_fill_tokens=1024)
    # past the window only the 5 global layers' cache grows: 2048 elements x 0.5625 bytes per position
    grows = bytes_per_token(gemma, kv_cache_type="q4_0", kv_fill_tokens=9000) - \
        bytes_per_token(gemma, kv_cache_type="q4_0", kv_fill_tokens=8000)
    assert grows == pytest.approx(1000 * 5 * 2048 * 18 / 32)


@pytest.mark.parametrize("content, words", [
    (b"", "the file is empty"),
    (b"%PDF-1.7\n" + b"x" * 100, "not a GGUF file"),
])
def test_what_is_not_a_gguf_header_is_said_plainly(tmp_path, content, words):
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    with pytest.raises(GgufHeaderError, match=words):
        header_read(path)


def test_a_header_cut_short_is_refused_with_the_remedy(headers, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(headers["dense-32b"].read_bytes()[:5000])
    with pytest.raises(GgufHeaderError, match="cut short or damaged.*give the whole file"):
        header_read(cut)
    with pytest.raises(GgufHeaderError, match="no such file"):
        header_read(tmp_path / "missing.gguf")


def test_bandwidth_comes_from_the_table_then_from_nvml():
    assert table_bandwidth("NVIDIA GeForce RTX 3090").gbs == 936.0
    assert table_bandwidth("Tesla V100-PCIE-32GB").gbs == 900.0
    assert table_bandwidth("NVIDIA GeForce RTX 3090 Ti").gbs == 1008.0  # not taken for a 3090
    assert table_bandwidth("NVIDIA Imaginary X1") is None
    nvml = FakeNvml(gpus=[FakeGpu(name="NVIDIA Imaginary X1", memory_gib=32, capability=(9, 0), bus_id="0:1:0.0",
                                  uuid="GPU-x", bus_bits=4096, memory_clock_mhz=877),
                          FakeGpu(name="NVIDIA Mystery", memory_gib=8, capability=(9, 0), bus_id="0:2:0.0",
                                  uuid="GPU-y")])
    assert nvml_bandwidth_gbs(nvml, nvml.gpus[0]) == pytest.approx(898.0, abs=0.5)  # a V100's own figures
    assert nvml_bandwidth_gbs(nvml, nvml.gpus[1]) is None  # NVML: not supported
    assert gpu_bandwidth("NVIDIA Imaginary X1", 898.0).source.startswith("NVML")
    # layer split: one GPU after another, so a slower card drags the whole board (harmonic mean)
    mixed, _ = board_bandwidth([("NVIDIA GeForce RTX 3090", None), ("Tesla P40", None)])
    assert mixed.gbs == pytest.approx(2 / (1 / 936 + 1 / 347), abs=0.1)
    missing, why = board_bandwidth([("NVIDIA Mystery", None)])
    assert missing is None and "no memory bandwidth is known for NVIDIA Mystery" in why


@pytest.mark.django_db
def test_discovery_records_nvmls_bandwidth_for_a_gpu_missing_from_the_table(monkeypatch):
    nvml = FakeNvml(gpus=[FakeGpu(name="NVIDIA Imaginary X1", memory_gib=32, capability=(9, 0),
                                  bus_id="00000000:1A:00.0", uuid="GPU-x", bus_bits=5120, memory_clock_mhz=1215)])
    discover.discovery_apply(host_name="lab", found=discover.nvml_read(nvml))
    assert GPU.objects.get(uuid="GPU-x").memory_bandwidth_gbs == pytest.approx(1555.2, abs=0.1)


@pytest.fixture
def example(db):
    call_command("topology_load_example", yes=True, stdout=io.StringIO())


def with_header(name: str, path) -> ModelServer:
    server = ModelServer.objects.get(name=name)
    server.gguf_header = header_read(path).to_json()
    server.save()
    return server


@pytest.mark.django_db
def test_efficiency_is_the_default_until_probes_teach_one(example, headers):
    reasoner = with_header("reasoner", headers["qwen3.5-122b-a10b"])  # Board B: four V100-SXM2
    first = server_foresight(reasoner)
    assert first.forecast.efficiency == DEFAULT_EFFICIENCY["moe"] and "default" in first.forecast.efficiency_source
    assert first.efficiency_key == "llama.cpp | Tesla V100-SXM2-32GB | moe"
    ceiling = first.forecast.ceiling_tok_s
    for measured in (48.0, 50.0, 55.0):
        ProbeResult.objects.create(server=reasoner, status="up", decode_tok_s=measured, ceiling_tok_s=ceiling,
                                   efficiency_key=first.efficiency_key)
    ProbeResult.objects.create(server=reasoner, status="up", skipped=True, decode_tok_s=1.0, ceiling_tok_s=ceiling,
                               efficiency_key=first.efficiency_key)  # skipped probes measure nothing
    learned = server_foresight(reasoner).forecast
    assert learned.efficiency == pytest.approx(50.0 / ceiling)  # the median
    assert learned.forecast_tok_s == pytest.approx(50.0) and learned.efficiency_source == "learned from 3 probe(s)"
    # another GPU model or kind of model does not borrow it
    drafter = with_header("drafter", headers["dense-32b"])
    assert server_foresight(drafter).forecast.efficiency == DEFAULT_EFFICIENCY["dense"]


@pytest.mark.django_db
def test_a_server_without_header_or_bandwidth_says_why_it_has_no_forecast(example, headers, settings):
    assert "no GGUF header" in server_foresight(ModelServer.objects.get(name="gate")).reason
    cpu = ModelServer.objects.create(name="cpu", base_url="http://127.0.0.1:9", enabled=False,
                                     gguf_header=header_read(headers["gemma-4-26b-a4b"]).to_json())
    assert "LAWDESK_CPU_MEMORY_BANDWIDTH_GBS" in server_foresight(cpu).reason
    settings.LAWDESK_CPU_MEMORY_BANDWIDTH_GBS = 50.0
    assert server_foresight(cpu).forecast.bandwidth_gbs == 50.0


@pytest.mark.django_db
def test_the_rules_warn_when_an_enabled_server_is_forecast_under_its_floor(example, headers):
    drafter = with_header("drafter", headers["dense-32b"])
    found = [p for p in server_problems(drafter, [g.pk for g in drafter.gpus.all()], snapshot_load())
             if p.rule == "forecast_under_floor"]
    assert len(found) == 1 and "forecast at 2" in found[0].message and "floor of 40 tok/s" in found[0].message
    reasoner = with_header("reasoner", headers["qwen3.5-122b-a10b"])
    assert not [p for p in server_problems(reasoner, [g.pk for g in reasoner.gpus.all()], snapshot_load())
                if p.rule == "forecast_under_floor"]


@pytest.mark.django_db
def test_memory_fit_comes_from_the_header(example, headers):
    gate = with_header("gate", headers["dense-32b"])  # pair 0-1: 2 x 32,768 MiB

    def fits() -> bool:
        found = server_problems(gate, [g.pk for g in gate.gpus.all()], snapshot_load())
        return "memory_fit" not in {p.rule for p in found}

    need = memory_need(header_read(headers["dense-32b"]), context_tokens=16384, parallel_slots=1,
                       kv_cache_type="q4_0", gpus=2)
    assert 33_000 < need.weights_mib < 33_500 and need.kv_mib == pytest.approx(64 * 2048 * 16384 * 18 / 32 / 2**20)
    assert fits()  # about 33 GiB of Q8_0 weights and a q4_0 cache fit 64 GiB
    gate.context_tokens, gate.kv_cache_type = 131072, "f16"  # 32 GiB of f16 cache more does not
    assert not fits()
    gate.kv_cache_type, gate.parallel_slots = "q4_0", 4
    assert not fits()  # four slots: four times the cache
