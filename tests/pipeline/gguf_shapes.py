"""GGUF headers (metadata and tensor infos, no weights) written by the ``gguf`` package's own writer, in the shapes
of the models the deployment measured on V100-SXM2, all Q8_0 with F32 norms:

- a dense 32B (Qwen2.5-32B's published shape: 64 layers, width 5120, FFN 27648, 40 heads, 8 KV heads, vocabulary
  152064): 32.8B parameters;
- Qwen3.5-122B-A10B (48 layers, width 3072, 256 experts of which 8 and a shared one per token, every 4th layer full
  attention with 2 KV heads of 256, the others Gated DeltaNet): about 121B parameters, 9B active;
- Gemma-4-26B-A4B (30 layers, width 2816, 128 experts of which 8 per token beside a dense MLP, 5 of every 6 layers
  sliding-window attention of 1024 with 8 KV heads of 256, the rest global with 2 KV heads of 512 sharing K as V,
  tied embeddings): 25.2B parameters, 3.8B active.
Widths the public descriptions leave open (expert FFN sizes, DeltaNet projections) are filled so the totals match
the names; a header is a few hundred kilobytes.
"""

from pathlib import Path

import gguf
import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

Q8_0, F32 = GGMLQuantizationType.Q8_0, GGMLQuantizationType.F32


class HeaderWriter:
    """Collects tensor infos (shape as (rows, row length), like a PyTorch weight) and writes the header only."""

    def __init__(self, path: Path, arch: str, *, split_max_tensors: int = 0) -> None:
        # split_max_tensors: gguf-split's own layout (name-00001-of-0000N.gguf beside each other, the metadata in
        # the first, split.no / split.count / split.tensors.count in each)
        self.writer = gguf.GGUFWriter(str(path), arch, split_max_tensors=split_max_tensors)
        self.writer.add_name(path.stem)

    def tensor(self, name: str, shape: tuple[int, ...], kind: GGMLQuantizationType = Q8_0) -> None:
        block, size = GGML_QUANT_SIZES[kind]
        n_bytes = int(np.prod(shape)) * size // block
        stored = shape if kind == F32 else gguf.quant_shape_to_byte_shape(shape, kind)
        dtype = np.dtype(np.float32) if kind == F32 else np.dtype(np.uint8)
        self.writer.add_tensor_info(name, stored, dtype, n_bytes, raw_dtype=kind)

    def write(self) -> None:
        self.writer.write_header_to_file()
        self.writer.write_kv_data_to_file()
        self.writer.write_ti_data_to_file()
        self.writer.close()


def dense_32b(path: Path, *, split_max_tensors: int = 0) -> Path:
    w = HeaderWriter(path, "qwen2", split_max_tensors=split_max_tensors)
    n, ff, vocab, layers = 5120, 27648, 152064, 64
    g = w.writer
    g.add_block_count(layers), g.add_embedding_length(n), g.add_feed_forward_length(ff)
    g.add_head_count(40), g.add_head_count_kv(8), g.add_context_length(32768)
    w.tensor("token_embd.weight", (vocab, n))
    w.tensor("output.weight", (vocab, n))
    w.tensor("output_norm.weight", (n,), F32)
    for i in range(layers):
        w.tensor(f"blk.{i}.attn_norm.weight", (n,), F32)
        w.tensor(f"blk.{i}.attn_q.weight", (n, n))
        w.tensor(f"blk.{i}.attn_k.weight", (1024, n))
        w.tensor(f"blk.{i}.attn_v.weight", (1024, n))
        w.tensor(f"blk.{i}.attn_output.weight", (n, n))
        w.tensor(f"blk.{i}.ffn_norm.weight", (n,), F32)
        w.tensor(f"blk.{i}.ffn_gate.weight", (ff, n))
        w.tensor(f"blk.{i}.ffn_up.weight", (ff, n))
        w.tensor(f"blk.{i}.ffn_down.weight", (n, ff))
    w.write()
    return path


def qwen35_122b_a10b(path: Path) -> Path:
    w = HeaderWriter(path, "qwen35moe")
    n, vocab, layers, experts, used, ff_exp = 3072, 248320, 48, 256, 8, 1024
    g = w.writer
    g.add_block_count(layers), g.add_embedding_length(n), g.add_head_count(32), g.add_head_count_kv(2)
    g.add_expert_count(experts), g.add_expert_used_count(used), g.add_context_length(262144)
    g.add_uint32("qwen35moe.full_attention_interval", 4)
    w.tensor("token_embd.weight", (vocab, n))
    w.tensor("output.weight", (vocab, n))
    w.tensor("output_norm.weight", (n,), F32)
    for i in range(layers):
        w.tensor(f"blk.{i}.attn_norm.weight", (n,), F32)
        if (i + 1) % 4 == 0:  # full attention: 32 gated query heads of 256, 2 KV heads of 256
            w.tensor(f"blk.{i}.attn_q.weight", (32 * 256 * 2, n))
            w.tensor(f"blk.{i}.attn_k.weight", (2 * 256, n))
            w.tensor(f"blk.{i}.attn_v.weight", (2 * 256, n))
            w.tensor(f"blk.{i}.attn_output.weight", (n, 32 * 256))
        else:  # Gated DeltaNet: a fixed-size recurrent state, no KV cache
            w.tensor(f"blk.{i}.attn_qkv.weight", (16 * 128 * 2 + 64 * 128 * 2, n))
            w.tensor(f"blk.{i}.ssm_out.weight", (n, 64 * 128))
        w.tensor(f"blk.{i}.ffn_norm.weight", (n,), F32)
        _moe_ffn(w, i, n, experts, ff_exp)
    w.write()
    return path


def gemma4_26b_a4b(path: Path) -> Path:
    w = HeaderWriter(path, "gemma4")
    n, vocab, layers, experts, used, ff_exp, ff_dense = 2816, 262144, 30, 128, 8, 704, 2112
    g = w.writer
    g.add_block_count(layers), g.add_embedding_length(n), g.add_head_count(16), g.add_context_length(262144)
    g.add_expert_count(experts), g.add_expert_used_count(used), g.add_sliding_window(1024)
    sliding = [(i + 1) % 6 != 0 for i in range(layers)]
    g.add_array("gemma4.attention.sliding_window_pattern", sliding)
    w.tensor("token_embd.weight", (vocab, n))  # tied: no output.weight
    w.tensor("output_norm.weight", (n,), F32)
    for i in range(layers):
        w.tensor(f"blk.{i}.attn_norm.weight", (n,), F32)
        if sliding[i]:
            w.tensor(f"blk.{i}.attn_q.weight", (16 * 256, n))
            w.tensor(f"blk.{i}.attn_k.weight", (8 * 256, n))
            w.tensor(f"blk.{i}.attn_v.weight", (8 * 256, n))
            w.tensor(f"blk.{i}.attn_output.weight", (n, 16 * 256))
        else:  # global layers share K as V
            w.tensor(f"blk.{i}.attn_q.weight", (16 * 512, n))
            w.tensor(f"blk.{i}.attn_k.weight", (2 * 512, n))
            w.tensor(f"blk.{i}.attn_output.weight", (n, 16 * 512))
        w.tensor(f"blk.{i}.ffn_norm.weight", (n,), F32)
        w.tensor(f"blk.{i}.ffn_gate.weight", (ff_dense, n))
        w.tensor(f"blk.{i}.ffn_up.weight", (ff_dense, n))
        w.tensor(f"blk.{i}.ffn_down.weight", (n, ff_dense))
        w.tensor(f"blk.{i}.ffn_gate_inp.weight", (experts, n), F32)
        w.tensor(f"blk.{i}.ffn_gate_exps.weight", (experts, ff_exp, n))
        w.tensor(f"blk.{i}.ffn_up_exps.weight", (experts, ff_exp, n))
        w.tensor(f"blk.{i}.ffn_down_exps.weight", (experts, n, ff_exp))
    w.write()
    return path


def deepseek_v3(path: Path) -> Path:
    """DeepSeek-V3's published shape (61 layers, width 7168, 128 heads, multi-head latent attention with
    kv_lora_rank 512, q_lora_rank 1536, 64 rotary and 128 other key dimensions per head, values of 128; the first
    3 layers dense with FFN 18432, then 256 experts of 2048 of which 8 and a shared one per token; vocabulary
    129280), written as llama.cpp's converter writes an MLA model: one KV head of kv_lora_rank + 64, no attn_k or
    attn_v tensors: about 671B parameters, 37B active."""
    w = HeaderWriter(path, "deepseek2")
    n, vocab, layers, heads, experts, used, ff, ff_exp = 7168, 129280, 61, 128, 256, 8, 18432, 2048
    q_lora, kv_lora, rope, nope, v_dim = 1536, 512, 64, 128, 128
    g = w.writer
    g.add_block_count(layers), g.add_embedding_length(n), g.add_feed_forward_length(ff)
    g.add_head_count(heads), g.add_head_count_kv(1), g.add_context_length(163840)
    g.add_expert_count(experts), g.add_expert_used_count(used), g.add_expert_shared_count(1)
    g.add_leading_dense_block_count(3), g.add_expert_feed_forward_length(ff_exp)
    g.add_q_lora_rank(q_lora), g.add_kv_lora_rank(kv_lora), g.add_rope_dimension_count(rope)
    g.add_key_length(kv_lora + rope), g.add_value_length(kv_lora)
    g.add_key_length_mla(nope + rope), g.add_value_length_mla(v_dim)
    w.tensor("token_embd.weight", (vocab, n))
    w.tensor("output.weight", (vocab, n))
    w.tensor("output_norm.weight", (n,), F32)
    for i in range(layers):
        w.tensor(f"blk.{i}.attn_norm.weight", (n,), F32)
        w.tensor(f"blk.{i}.attn_q_a.weight", (q_lora, n))
        w.tensor(f"blk.{i}.attn_q_a_norm.weight", (q_lora,), F32)
        w.tensor(f"blk.{i}.attn_q_b.weight", (heads * (nope + rope), q_lora))
        w.tensor(f"blk.{i}.attn_kv_a_mqa.weight", (kv_lora + rope, n))
        w.tensor(f"blk.{i}.attn_kv_a_norm.weight", (kv_lora,), F32)
        w.tensor(f"blk.{i}.attn_k_b.weight", (heads, kv_lora, nope))
        w.tensor(f"blk.{i}.attn_v_b.weight", (heads, v_dim, kv_lora))
        w.tensor(f"blk.{i}.attn_output.weight", (n, heads * v_dim))
        w.tensor(f"blk.{i}.ffn_norm.weight", (n,), F32)
        if i < 3:
            w.tensor(f"blk.{i}.ffn_gate.weight", (ff, n))
            w.tensor(f"blk.{i}.ffn_up.weight", (ff, n))
            w.tensor(f"blk.{i}.ffn_down.weight", (n, ff))
            continue
        _moe_ffn(w, i, n, experts, ff_exp)
    w.write()
    return path


def _moe_ffn(w: HeaderWriter, layer: int, n: int, experts: int, ff_exp: int) -> None:
    """A mixture-of-experts feed-forward block: the router, the routed experts and the shared expert."""
    w.tensor(f"blk.{layer}.ffn_gate_inp.weight", (experts, n), F32)
    w.tensor(f"blk.{layer}.ffn_gate_exps.weight", (experts, ff_exp, n))
    w.tensor(f"blk.{layer}.ffn_up_exps.weight", (experts, ff_exp, n))
    w.tensor(f"blk.{layer}.ffn_down_exps.weight", (experts, n, ff_exp))
    w.tensor(f"blk.{layer}.ffn_gate_shexp.weight", (ff_exp, n))
    w.tensor(f"blk.{layer}.ffn_up_shexp.weight", (ff_exp, n))
    w.tensor(f"blk.{layer}.ffn_down_shexp.weight", (n, ff_exp))


def tensor_type_set(path: Path, tensor: str, type_id: int) -> None:
    """Rewrite the quantization type id of ``tensor`` in the header at ``path`` (a type newer than the installed
    gguf package knows: the writer refuses to write one). A tensor info is: name length (u64), name, dimensions
    (u32), that many sizes (u64), type (u32), offset (u64)."""
    data = bytearray(path.read_bytes())
    encoded = tensor.encode()
    at = data.index(len(encoded).to_bytes(8, "little") + encoded) + 8 + len(encoded)
    n_dims = int.from_bytes(data[at:at + 4], "little")
    at += 4 + 8 * n_dims
    data[at:at + 4] = type_id.to_bytes(4, "little")
    path.write_bytes(bytes(data))


SHAPES = {"dense-32b": dense_32b, "qwen3.5-122b-a10b": qwen35_122b_a10b, "gemma-4-26b-a4b": gemma4_26b_a4b}

# What the deployment measured on V100-SXM2 (tok/s, llama.cpp, Q8_0, q4_0 KV cache, flash attention).
MEASURED_V100_TOK_S = {"dense-32b": (20.0, 28.0), "qwen3.5-122b-a10b": (50.0, 50.0), "gemma-4-26b-a4b": (113.0, 113.0)}
