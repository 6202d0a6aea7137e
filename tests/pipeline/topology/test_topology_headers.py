"""GGUF headers as deployments ship them, written by the gguf package's own writer: a model split into three files,
DeepSeek-V3's multi-head latent attention, a quantization type newer than the installed gguf package, and an
architecture whose cache LawDesk cannot count. The forecast and the memory check say "not known" rather than
count part of a model."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from pipeline.models import ModelServer
from pipeline.topology.forecast import NotKnown, bytes_per_token, forecast, memory_need
from pipeline.topology.foresight import header_from_upload
from pipeline.topology.gguf_header import GgufHeaderError, header_read
from pipeline.topology.rules import server_problems
from pipeline.topology.selectors import server_foresight, snapshot_load
from pipeline.topology.server_report import header_summary, server_report
from tests.pipeline.gguf_shapes import HeaderWriter, deepseek_v3, dense_32b, tensor_type_set

V100_GBS = 900.0


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    return header_read(dense_32b(tmp_path_factory.mktemp("whole") / "dense.gguf"))


@pytest.fixture
def split(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    dense_32b(folder / "dense.gguf", split_max_tensors=200)  # 579 tensors: three files
    return folder


def test_every_split_beside_the_first_is_read(split, whole):
    names = sorted(p.name for p in split.iterdir())
    assert names == ["dense-00001-of-00003.gguf", "dense-00002-of-00003.gguf", "dense-00003-of-00003.gguf"]
    shape = header_read(split / names[0])
    assert (shape.split_count, shape.splits_missing, shape.not_known()) == (3, [], "")
    assert shape.weights_bytes == whole.weights_bytes and shape.active_weight_bytes == whole.active_weight_bytes
    assert shape.kv_elements_full == whole.kv_elements_full == 64 * 2 * 1024
    assert sum(shape.tensor_types.values()) == 579
    # given a later split, the first one (which holds the metadata) is read
    assert header_read(split / names[2]).weights_bytes == whole.weights_bytes
    assert forecast(shape, bandwidth_gbs=V100_GBS).forecast_tok_s == \
        pytest.approx(forecast(whole, bandwidth_gbs=V100_GBS).forecast_tok_s)


def test_a_missing_split_leaves_the_weights_not_known(split):
    (split / "dense-00002-of-00003.gguf").unlink()
    shape = header_read(split / "dense-00001-of-00003.gguf")
    assert shape.splits_missing == ["dense-00002-of-00003.gguf"] and not shape.weights_known
    assert "split into 3 files and dense-00002-of-00003.gguf was not read" in shape.not_known()
    with pytest.raises(NotKnown, match="dense-00002-of-00003.gguf was not read"):
        forecast(shape, bandwidth_gbs=V100_GBS)
    with pytest.raises(NotKnown):
        memory_need(shape, context_tokens=4096, parallel_slots=1, kv_cache_type="f16", gpus=1)
    (split / "dense-00001-of-00003.gguf").unlink()
    with pytest.raises(GgufHeaderError, match="split 3 of 3.*dense-00001-of-00003.gguf"):
        header_read(split / "dense-00003-of-00003.gguf")


def test_a_split_from_another_model_is_refused(split, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    dense_32b(other / "dense.gguf", split_max_tensors=300)  # two files of another split
    (split / "dense-00002-of-00003.gguf").write_bytes((other / "dense-00002-of-00002.gguf").read_bytes())
    with pytest.raises(GgufHeaderError, match="splits hold .* tensors but the first says 579"):
        header_read(split / "dense-00001-of-00003.gguf")


def test_an_uploaded_first_split_names_the_others_it_needs(split):
    first = split / "dense-00001-of-00003.gguf"
    upload = SimpleUploadedFile(first.name, first.read_bytes())
    shape = header_from_upload(upload)  # read from a temporary copy: nothing beside it is looked at
    assert shape.splits_missing == ["dense-00002-of-00003.gguf", "dense-00003-of-00003.gguf"]
    assert "dense-00002-of-00003.gguf, dense-00003-of-00003.gguf were not read" in shape.not_known()
    assert "weights not known" in header_summary(shape.to_json())
    later = split / "dense-00002-of-00003.gguf"
    with pytest.raises(GgufHeaderError, match="split 2 of 3"):
        header_from_upload(SimpleUploadedFile(later.name, later.read_bytes()))


def test_latent_attention_caches_the_latent_and_the_rotary_part_as_k_only(tmp_path):
    shape = header_read(deepseek_v3(tmp_path / "deepseek-v3.gguf"))
    # llama.cpp keeps K only, kv_lora_rank 512 + 64 rotary dimensions per layer (V is a view of K)
    assert (shape.kv_known, shape.attention_layers, shape.kv_elements_full) == (True, 61, 61 * 576)
    assert "multi-head latent attention" in shape.kv_note
    assert 660e9 < shape.weights_bytes / (34 / 32) < 680e9 and 35e9 < shape.active_weight_bytes / (34 / 32) < 39e9
    need = memory_need(shape, context_tokens=163840, parallel_slots=1, kv_cache_type="f16", gpus=8)
    assert need.kv_mib == pytest.approx(61 * 576 * 163840 * 2 / 2**20)  # 10.7 GiB, where full heads would be 40x
    grows = bytes_per_token(shape, kv_cache_type="f16", kv_fill_tokens=5000) - \
        bytes_per_token(shape, kv_cache_type="f16", kv_fill_tokens=4000)
    assert grows == pytest.approx(1000 * 61 * 576 * 2)


def test_an_architecture_whose_cache_is_not_known_is_not_counted_as_zero(tmp_path):
    w = HeaderWriter(tmp_path / "fused.gguf", "phi3")  # one fused attn_qkv per layer: not counted here
    w.writer.add_block_count(2), w.writer.add_embedding_length(256), w.writer.add_head_count(4)
    for i in range(2):
        w.tensor(f"blk.{i}.attn_qkv.weight", (768, 256))
        w.tensor(f"blk.{i}.attn_output.weight", (256, 256))
    w.write()
    shape = header_read(tmp_path / "fused.gguf")
    assert not shape.kv_known and shape.weights_known
    assert "does not know how llama.cpp caches K and V for architecture 'phi3'" in shape.not_known()
    with pytest.raises(NotKnown, match="phi3"):
        forecast(shape, bandwidth_gbs=V100_GBS)
    recurrent = HeaderWriter(tmp_path / "mamba.gguf", "mamba")
    recurrent.writer.add_block_count(1)
    recurrent.tensor("blk.0.ssm_in.weight", (512, 256))
    recurrent.write()
    mamba = header_read(tmp_path / "mamba.gguf")
    assert mamba.kv_known and mamba.kv_elements_full == 0 and "recurrent" in mamba.kv_note


def test_a_quantization_type_newer_than_the_gguf_package_is_named_and_the_rest_still_reads(tmp_path):
    path = dense_32b(tmp_path / "dense.gguf")
    for tensor in ("blk.0.ffn_up.weight", "blk.1.ffn_up.weight"):
        tensor_type_set(path, tensor, 99)
    shape = header_read(path)
    assert shape.tensor_types["type 99"] == 2 and shape.tensor_types["Q8_0"] == 64 * 7 + 2 - 2
    assert shape.unsized_tensors == ["blk.0.ffn_up.weight", "blk.1.ffn_up.weight"]
    assert shape.kv_elements_full == 64 * 2 * 1024 and shape.block_count == 64  # the rest of the header
    message = shape.not_known()
    assert "2 tensor(s) use a quantization type the installed gguf package does not know (type 99)" in message
    assert "blk.0.ffn_up.weight, blk.1.ffn_up.weight" in message
    with pytest.raises(NotKnown, match="type 99"):
        forecast(shape, bandwidth_gbs=V100_GBS)


@pytest.mark.django_db
def test_the_forecast_and_the_memory_check_say_not_known(split):
    call_command("topology_load_example", yes=True, stdout=io.StringIO())
    (split / "dense-00003-of-00003.gguf").unlink()
    gate = ModelServer.objects.get(name="gate")
    gate.gguf_header = header_read(split / "dense-00001-of-00003.gguf").to_json()
    gate.context_tokens, gate.kv_cache_type = 10**6, "f16"  # would never fit, if the weights were counted
    gate.save()
    foresight = server_foresight(gate)
    assert foresight.forecast is None and foresight.reason.startswith("not known: the model is split into 3 files")
    found = server_problems(gate, [g.pk for g in gate.gpus.all()], snapshot_load())
    assert "memory_fit" not in {p.rule for p in found}  # judged on two thirds of the model it would mislead
    report = server_report(gate)
    assert report[0].startswith("no forecast: not known") and any(line.startswith("memory: not known")
                                                                  for line in report)
