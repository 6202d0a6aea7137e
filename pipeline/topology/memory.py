"""Will a model fit its GPUs? Weights (the GGUF header's tensor bytes) plus the KV cache for the whole context;
:func:`pipeline.topology.forecast.memory_need` adds them up from a header.

KV cache bytes = 2 (K and V) x layers with a cache x KV heads x head size x context tokens (all slots) x bytes per
element of the cache type. Bytes per element follow ggml's block layouts (ggml/src/ggml-common.h): q8_0 stores 32
values in 34 bytes (32 int8 + an f16 scale), q4_0 in 18, q4_1 in 20, q5_0 in 22, q5_1 in 24, iq4_nl in 18.
"""

BYTES_PER_ELEMENT: dict[str, float] = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "q8_0": 34 / 32,
    "q5_1": 24 / 32,
    "q5_0": 22 / 32,
    "q4_1": 20 / 32,
    "q4_0": 18 / 32,
    "iq4_nl": 18 / 32,
}

# What every GPU a model uses needs beside weights and cache: the CUDA context and llama.cpp's compute buffers.
# An allowance, not a measurement; it keeps "fits" from meaning "fits to the last byte".
RESERVE_MIB_PER_GPU = 512


def kv_cache_mib(*, context_tokens: int, attention_layers: int, kv_heads: int, head_dim: int,
                 cache_type: str) -> float:
    """KV cache size in MiB for ``context_tokens`` in all (every slot's context together). KeyError for an
    unknown cache type."""
    per_element = BYTES_PER_ELEMENT[cache_type]
    return 2 * attention_layers * kv_heads * head_dim * context_tokens * per_element / 2**20
