"""The KV cache a GGUF model keeps per token position, counted the way llama.cpp's graph keeps it for the model's
attention family, or "not known" for a family this module cannot count (never a silent 0).

Families, and where llama.cpp says so:
- Multi-head latent attention (DeepSeek-V2/V3 and the models converted like them: ``<arch>.attention.kv_lora_rank``
  with ``attention.key_length_mla`` and ``attention.value_length_mla``; no ``attn_k``/``attn_v`` tensors). The
  converter writes MLA as one KV head whose key is the compressed latent plus the rotary part
  (``attention.key_length`` = kv_lora_rank + qk_rope_head_dim, convert_hf_to_gguf.py ``DeepseekV2Model``), and
  llama.cpp allocates K only for an MLA model: ``has_v = !is_mla`` in src/llama-kv-cache.cpp, V being a view of
  the first kv_lora_rank values of K (src/models/deepseek2.cpp). So each layer keeps
  ``head_count_kv (1) x (kv_lora_rank + rope dimensions)`` elements per position: 576 for DeepSeek-V3.
- DeepSeek-style attention converted before the MLA keys existed (``kv_lora_rank`` without ``key_length_mla``):
  llama.cpp decompresses to full heads and caches K and V of ``head_count_kv x key_length`` and
  ``head_count_kv x value_length`` per layer.
- Attention with K and V projections: each layer's ``attn_k``/``attn_v`` widths (ne[1] is the width of all KV heads
  together); a layer without ``attn_v`` shares K as V (Gemma 4's global layers); layers without ``attn_k`` keep no
  cache (the Gated DeltaNet layers of Qwen3.5).
- Recurrent models (Mamba, RWKV) keep a fixed-size state instead of a KV cache: 0, known.
Anything else (no ``attn_k``, no MLA keys, not recurrent: fused ``attn_qkv`` families among them) is not known.
"""

import re
from dataclasses import dataclass

# Architectures whose memory is a fixed-size recurrent state, not a per-position cache (llama.cpp
# src/llama-arch.cpp ``llm_arch_is_recurrent``).
RECURRENT_ARCHITECTURES = frozenset({"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"})

_BLOCK = re.compile(r"^blk\.(\d+)\.")


@dataclass(frozen=True)
class KvCount:
    """KV cache elements per token position: ``full`` over full-attention layers, ``sliding`` over sliding-window
    layers, ``layers`` the layers that keep a cache. ``known`` False when the family is not one this module can
    count (then the counts are 0 and mean nothing); ``note`` says how it was counted, or why it is not known."""

    full: int
    sliding: int
    layers: int
    known: bool = True
    note: str = ""


def _int(value) -> int | None:
    if isinstance(value, list):
        value = max((v for v in value if isinstance(v, int | float)), default=None)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def kv_count(arch: str, metadata: dict, tensors, sliding_layers: set[int]) -> KvCount:
    """Count the cache of the model of ``metadata`` ({key: value}) and ``tensors`` (objects with ``name`` and
    ``shape`` in ggml order) whose sliding-window layers are ``sliding_layers`` (rules in the module docstring)."""

    def key(suffix: str) -> int | None:
        return _int(metadata.get(f"{arch}.{suffix}"))

    layers = key("block_count") or 0
    kv_lora_rank = key("attention.kv_lora_rank")
    if kv_lora_rank:
        heads_kv = key("attention.head_count_kv") or 1
        if key("attention.key_length_mla") and key("attention.value_length_mla"):
            width = key("attention.key_length") or kv_lora_rank + (key("rope.dimension_count") or 0)
            return KvCount(full=heads_kv * width * layers, sliding=0, layers=layers,
                           note=f"multi-head latent attention: K only, {heads_kv} x {width} per layer "
                                f"(kv_lora_rank {kv_lora_rank} + rotary dimensions; V is a view of K)")
        key_length, value_length = key("attention.key_length"), key("attention.value_length")
        if key_length and value_length:
            return KvCount(full=heads_kv * (key_length + value_length) * layers, sliding=0, layers=layers,
                           note=f"latent attention converted without its MLA keys: full K and V, {heads_kv} "
                                f"heads of {key_length} and {value_length} per layer")
        return KvCount(0, 0, 0, known=False,
                       note=f"{arch} has kv_lora_rank but no key and value lengths: its KV cache is not known")
    by_name = {t.name: t for t in tensors}
    full = sliding = counted = 0
    for layer in sorted({int(m.group(1)) for t in tensors if (m := _BLOCK.match(t.name))}):
        k = by_name.get(f"blk.{layer}.attn_k.weight")
        if k is None or len(k.shape) < 2:
            continue
        v = by_name.get(f"blk.{layer}.attn_v.weight") or k
        counted += 1
        if layer in sliding_layers:
            sliding += k.shape[1] + v.shape[1]
        else:
            full += k.shape[1] + v.shape[1]
    if counted:
        return KvCount(full=full, sliding=sliding, layers=counted)
    if arch in RECURRENT_ARCHITECTURES:
        return KvCount(0, 0, 0, note=f"{arch} is recurrent: a fixed-size state, no KV cache")
    return KvCount(0, 0, 0, known=False,
                   note=f"LawDesk does not know how llama.cpp caches K and V for architecture {arch!r} (no attn_k "
                        "tensors and no latent-attention keys in its header), so its KV cache is not known")
