"""Decode-speed forecast from a GGUF header and a board's memory bandwidth, before the model is loaded.

Generating one token reads every active weight and the KV cache once, so decode is bounded by memory bandwidth:

    bytes per token = active weight bytes + KV elements per position x filled positions x bytes per KV element
    ceiling (tok/s) = bandwidth (GB/s) x 10^9 / bytes per token
    forecast (tok/s) = ceiling x efficiency

Active weight bytes and KV elements come from :mod:`pipeline.topology.gguf_header`; bytes per KV element from
ggml's block sizes (:mod:`pipeline.topology.memory`); bandwidth from :mod:`pipeline.topology.bandwidth`. The
efficiency factor is what a backend reaches of the ceiling on a GPU model: learned from this deployment's probes
(measured decode / ceiling, the median of the latest probes), and until a probe exists, the stated defaults below,
which come from the figures this deployment measured on V100-SXM2 (llama.cpp, Q8_0 weights, q4_0 KV cache, flash
attention): dense 27-32B models 20-28 tok/s against a ceiling of about 26-31 (about 0.8), Qwen3.5-122B-A10B 50 and
Gemma-4-26B-A4B 113 tok/s against ceilings of about 94 and 220 (about 0.5: routing and many small matrix products
keep mixture-of-experts decoding further from the bandwidth bound). docs/topology.md gives the error per model.

A header that leaves the weights or the cache not known (splits not read, a quantization type the gguf package does
not know, an attention family whose cache is not counted: :meth:`ModelShape.not_known`) gets no forecast and no
memory figure: :class:`NotKnown` says what is missing, where a figure from part of the model would mislead.
"""

from dataclasses import dataclass

from .gguf_header import ModelShape
from .memory import BYTES_PER_ELEMENT, RESERVE_MIB_PER_GPU

# Positions of KV cache read for each generated token in the forecast: a probe-sized prompt plus a few pages of
# evidence. A longer context reads more cache and decodes slower; the page states the figure it assumed.
KV_FILL_TOKENS = 4096

DENSE, MOE = "dense", "moe"
DEFAULT_EFFICIENCY: dict[str, float] = {DENSE: 0.8, MOE: 0.5}
EFFICIENCY_SOURCE = ("default (this deployment's V100-SXM2 figures: dense 27-32B 20-28 tok/s, Qwen3.5-122B-A10B "
                     "50, Gemma-4-26B-A4B 113)")


class NotKnown(ValueError):
    """The header does not tell what the figure depends on; the message says what is missing."""


def _require_known(shape: ModelShape) -> None:
    if missing := shape.not_known():
        raise NotKnown(missing)


def model_kind(shape: ModelShape) -> str:
    """``moe`` when the header names experts used per token fewer than its experts, else ``dense``."""
    if shape.expert_count and shape.expert_used_count and shape.expert_used_count < shape.expert_count:
        return MOE
    return DENSE


@dataclass(frozen=True)
class Forecast:
    """A forecast for one model on one board. Speeds in tok/s, ``bytes_per_token`` in bytes, ``bandwidth_gbs`` in
    GB/s; ``efficiency_source`` says whether the factor is learned (and from how many probes) or the default."""

    bytes_per_token: float
    bandwidth_gbs: float
    bandwidth_source: str
    ceiling_tok_s: float
    efficiency: float
    efficiency_source: str
    forecast_tok_s: float
    kv_fill_tokens: int
    kind: str

    def summary(self) -> str:
        """One line for pages and messages."""
        return (f"forecast {self.forecast_tok_s:.1f} tok/s = ceiling {self.ceiling_tok_s:.1f} tok/s "
                f"({self.bandwidth_gbs:,.0f} GB/s / {self.bytes_per_token / 1e9:.2f} GB per token at "
                f"{self.kv_fill_tokens:,} cached tokens) x efficiency {self.efficiency:.2f} ({self.efficiency_source})")


def kv_bytes_per_position(shape: ModelShape, *, kv_cache_type: str, filled_tokens: int) -> float:
    """KV cache bytes read for one token with ``filled_tokens`` positions in the cache (sliding-window layers read
    at most their window). KeyError for an unknown cache type."""
    per_element = BYTES_PER_ELEMENT[kv_cache_type]
    sliding = min(filled_tokens, shape.sliding_window or filled_tokens)
    return (shape.kv_elements_full * filled_tokens + shape.kv_elements_sliding * sliding) * per_element


def bytes_per_token(shape: ModelShape, *, kv_cache_type: str, kv_fill_tokens: int = KV_FILL_TOKENS) -> float:
    """Bytes read from memory to generate one token."""
    return shape.active_weight_bytes + kv_bytes_per_position(shape, kv_cache_type=kv_cache_type,
                                                             filled_tokens=kv_fill_tokens)


def forecast(shape: ModelShape, *, bandwidth_gbs: float, bandwidth_source: str = "", kv_cache_type: str = "f16",
             efficiency: float | None = None, efficiency_source: str = "",
             kv_fill_tokens: int = KV_FILL_TOKENS) -> Forecast:
    """The forecast of ``shape`` on a board of ``bandwidth_gbs``; ``efficiency`` None takes the default for the
    model's kind. ValueError for a bandwidth that is not positive; NotKnown when the header leaves the weights or
    the cache not known."""
    if bandwidth_gbs <= 0:
        raise ValueError("the memory bandwidth must be positive")
    _require_known(shape)
    kind = model_kind(shape)
    if efficiency is None:
        efficiency, efficiency_source = DEFAULT_EFFICIENCY[kind], EFFICIENCY_SOURCE
    cost = bytes_per_token(shape, kv_cache_type=kv_cache_type, kv_fill_tokens=kv_fill_tokens)
    ceiling = bandwidth_gbs * 1e9 / cost
    return Forecast(bytes_per_token=cost, bandwidth_gbs=bandwidth_gbs, bandwidth_source=bandwidth_source,
                    ceiling_tok_s=ceiling, efficiency=efficiency, efficiency_source=efficiency_source,
                    forecast_tok_s=ceiling * efficiency, kv_fill_tokens=kv_fill_tokens, kind=kind)


@dataclass(frozen=True)
class MemoryNeed:
    """What a server needs resident, in MiB: weights (the header's tensor bytes), KV cache for every slot's
    context, and the per-GPU allowance for the CUDA context and compute buffers."""

    weights_mib: float
    kv_mib: float
    reserve_mib: float

    @property
    def total_mib(self) -> float:
        return self.weights_mib + self.kv_mib + self.reserve_mib


def memory_need(shape: ModelShape, *, context_tokens: int, parallel_slots: int, kv_cache_type: str,
                gpus: int) -> MemoryNeed:
    """Memory for ``shape`` serving ``parallel_slots`` slots of ``context_tokens`` each with a ``kv_cache_type``
    cache. Full-attention layers keep every position of every slot; sliding-window layers keep at most the window
    per slot (llama.cpp's SWA cache, without ``--swa-full``). KeyError for an unknown cache type; NotKnown when
    the header leaves the weights or the cache not known."""
    _require_known(shape)
    per_element = BYTES_PER_ELEMENT[kv_cache_type]
    window = min(context_tokens, shape.sliding_window or context_tokens)
    kv_bytes = (shape.kv_elements_full * context_tokens + shape.kv_elements_sliding * window) * parallel_slots \
        * per_element
    return MemoryNeed(weights_mib=shape.weights_bytes / 2**20, kv_mib=kv_bytes / 2**20,
                      reserve_mib=RESERVE_MIB_PER_GPU * gpus)
