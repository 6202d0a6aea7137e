"""Read a GGUF file's header (metadata and tensor infos) without touching its weights, and reduce it to the
:class:`ModelShape` that the decode forecast and the memory check need.

Parsing is the ``gguf`` package's own (llama.cpp's ``gguf-py``, the format's reference reader). Its reader maps the
file and would build a view of every tensor's data; here that last step is skipped, so a file of any size costs
only the pages of its header, and a header alone (the first megabytes of a GGUF, or one written by
``gguf.GGUFWriter`` with tensor infos but no data) reads the same as the whole file.

Bytes read per generated token (the decode cost; llama.cpp's graph, src/llama-graph.cpp):
- every tensor is read once per token, at its own quantization's size (``gguf.GGML_QUANT_SIZES``: bytes per block of
  values), except
- expert tensors (names with ``_exps``, read through ``ggml_mul_mat_id``): only the experts used per token, so their
  bytes x ``expert_used_count / expert_count``;
- token-embedding tables (names ending ``token_embd.weight``, read through ``ggml_get_rows``): one row per token,
  unless the model has no ``output.weight``, when the table doubles as the output matrix and is read whole.
KV cache elements per token position come from each layer's ``attn_k``/``attn_v`` shapes (ne[1] is the K or V
width of all KV heads together); a layer without ``attn_v`` shares K as V. Layers are sliding-window layers where
the header says so per layer (``<arch>.attention.sliding_window_pattern``) or, for Gemma 2 and 3, by llama.cpp's
fixed patterns (src/llama-model.cpp: every 2nd layer of Gemma 2 and 5 of every 6 of Gemma 3 use the window).
"""

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np


class GgufHeaderError(ValueError):
    """The file is not a readable GGUF header; the message names the file and what is wrong."""


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the header describes it: ``shape`` in ggml order (ne[0] is the row length), ``ggml_type``
    the quantization's name (``Q8_0``, ``Q4_K`` ...), ``n_bytes`` its size in the file."""

    name: str
    ggml_type: str
    shape: tuple[int, ...]
    n_bytes: int


@dataclass(frozen=True)
class ModelShape:
    """What the forecast and the memory check need from a GGUF header; stored as JSON on the server record.

    Bytes are bytes (not MiB). ``active_weight_bytes``: weights read per generated token. ``kv_elements_full`` /
    ``kv_elements_sliding``: K+V elements per token position over full-attention / sliding-window layers.
    ``tensor_types``: how many tensors of each quantization (for display).
    """

    architecture: str
    source: str
    weights_bytes: int
    active_weight_bytes: int
    kv_elements_full: int
    kv_elements_sliding: int
    sliding_window: int | None = None
    name: str = ""
    block_count: int | None = None
    embedding_length: int | None = None
    expert_count: int | None = None
    expert_used_count: int | None = None
    context_length: int | None = None
    attention_layers: int = 0
    tensor_types: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict | None) -> "ModelShape | None":
        """The shape stored by :meth:`to_json`, or None for an empty or outdated record."""
        if not data:
            return None
        try:
            return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
        except TypeError:
            return None


def _reader_class():
    # gguf adds about 0.1 s to a process's start; every process imports this module for ModelShape, and only
    # reading a header needs gguf.
    import gguf

    class HeaderReader(gguf.GGUFReader):
        """gguf's reader without the per-tensor data views (the weights are never looked at)."""

        def _build_tensors(self, start_offs: int, fields) -> None:
            infos = []
            for info in fields:
                _name_len, name_data, _n_dims, dims, raw_dtype, _offset = info.parts
                ggml_type = gguf.GGMLQuantizationType(int(raw_dtype[0]))
                block_size, type_size = gguf.GGML_QUANT_SIZES[ggml_type]
                n_elements = int(np.prod(dims))
                infos.append(TensorInfo(name=bytes(name_data).decode("utf-8"), ggml_type=ggml_type.name,
                                        shape=tuple(int(d) for d in dims),
                                        n_bytes=n_elements * type_size // block_size))
            self.tensor_infos = infos

    return HeaderReader


def header_read(path: str | Path, *, source: str | None = None) -> ModelShape:
    """Read the GGUF header at ``path`` and return its :class:`ModelShape`. ``source`` names it for people
    (default: the path). Raises GgufHeaderError for a missing, unreadable, truncated or non-GGUF file."""
    path = Path(path)
    label = source or str(path)
    if not path.is_file():
        raise GgufHeaderError(f"{label}: no such file on this machine.")
    try:
        reader = _reader_class()(path)
    except PermissionError as error:
        raise GgufHeaderError(f"{label}: LawDesk may not read this file ({error.strerror}).") from error
    except (ValueError, IndexError, KeyError, OverflowError, UnicodeDecodeError) as error:
        if path.stat().st_size == 0:
            raise GgufHeaderError(f"{label}: the file is empty.") from error
        with open(path, "rb") as handle:
            magic = handle.read(4)
        if magic != b"GGUF":
            raise GgufHeaderError(f"{label}: not a GGUF file (it does not start with the GGUF magic).") from error
        raise GgufHeaderError(f"{label}: the GGUF header is cut short or damaged ({error}); give the whole file, "
                              "or at least its header and tensor infos.") from error
    metadata = {key: _value(f) for key, f in reader.fields.items()}
    return shape_from(metadata, reader.tensor_infos, source=label)


def _value(reader_field):
    try:
        return reader_field.contents()
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def _int(value) -> int | None:
    if isinstance(value, list):
        value = max((v for v in value if isinstance(v, int | float)), default=None)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# llama.cpp's fixed sliding-window patterns (src/llama-model.cpp, hparams.set_swa_pattern): n means every n-th
# layer is global and the others slide.
SWA_PATTERNS: dict[str, int] = {"gemma2": 2, "gemma3": 6}

_BLOCK = re.compile(r"^blk\.(\d+)\.")


def shape_from(metadata: dict, tensors: list[TensorInfo], *, source: str) -> ModelShape:
    """Reduce header ``metadata`` ({key: value}) and ``tensors`` to a ModelShape (rules in the module docstring)."""
    arch = str(metadata.get("general.architecture") or "unknown")

    def key(suffix: str):
        return metadata.get(f"{arch}.{suffix}")

    expert_count, expert_used = _int(key("expert_count")), _int(key("expert_used_count"))
    has_output = any(t.name == "output.weight" for t in tensors)
    active = 0
    for tensor in tensors:
        if "_exps" in tensor.name and expert_count and expert_used:
            active += tensor.n_bytes * expert_used // expert_count
        elif tensor.name.endswith("token_embd.weight") and len(tensor.shape) >= 2:
            rows = tensor.shape[-1]
            read_whole = tensor.name == "token_embd.weight" and not has_output
            active += tensor.n_bytes if read_whole else tensor.n_bytes // max(rows, 1)
        else:
            active += tensor.n_bytes
    sliding = _sliding_layers(arch, metadata, _int(key("block_count")))
    kv_full = kv_sliding = attention_layers = 0
    by_name = {t.name: t for t in tensors}
    for layer in sorted({int(m.group(1)) for t in tensors if (m := _BLOCK.match(t.name))}):
        k = by_name.get(f"blk.{layer}.attn_k.weight")
        if k is None or len(k.shape) < 2:
            continue
        v = by_name.get(f"blk.{layer}.attn_v.weight") or k
        elements = k.shape[1] + v.shape[1]
        attention_layers += 1
        if layer in sliding:
            kv_sliding += elements
        else:
            kv_full += elements
    types: dict[str, int] = {}
    for tensor in tensors:
        types[tensor.ggml_type] = types.get(tensor.ggml_type, 0) + 1
    window = _int(key("attention.sliding_window"))
    if kv_sliding and not window:
        # A sliding pattern without a window size cannot be used: count those layers as full attention (more
        # bytes, so the forecast errs low rather than high).
        kv_full, kv_sliding = kv_full + kv_sliding, 0
    return ModelShape(
        architecture=arch, source=source, weights_bytes=sum(t.n_bytes for t in tensors), active_weight_bytes=active,
        kv_elements_full=kv_full, kv_elements_sliding=kv_sliding, sliding_window=window if kv_sliding else None,
        name=str(metadata.get("general.name") or ""), block_count=_int(key("block_count")),
        embedding_length=_int(key("embedding_length")), expert_count=expert_count, expert_used_count=expert_used,
        context_length=_int(key("context_length")), attention_layers=attention_layers,
        tensor_types=dict(sorted(types.items())),
    )


def _sliding_layers(arch: str, metadata: dict, block_count: int | None) -> set[int]:
    pattern = metadata.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, list) and pattern and all(isinstance(p, bool) for p in pattern):
        return {i for i, slides in enumerate(pattern) if slides}
    period = SWA_PATTERNS.get(arch)
    if period and block_count:
        return {i for i in range(block_count) if (i + 1) % period != 0}
    return set()
