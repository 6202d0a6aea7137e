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
KV cache elements per token position are counted per attention family by :mod:`.gguf_kv` (K and V projections,
multi-head latent attention, recurrent), or "not known". Layers are sliding-window layers where the header says so
per layer (``<arch>.attention.sliding_window_pattern``) or, for Gemma 2 and 3, by llama.cpp's fixed patterns
(src/llama-model.cpp: every 2nd layer of Gemma 2 and 5 of every 6 of Gemma 3 use the window).

Headers as deployments ship them:
- Split models (``gguf-split``: ``name-00001-of-00003.gguf``, header keys ``split.no`` from 0, ``split.count``,
  ``split.tensors.count``; the first split holds the metadata, every split its own tensor infos): llama.cpp loads
  the others beside the first by that naming convention (src/llama.cpp ``llama_split_path``/``llama_split_prefix``),
  and so does :func:`header_read`. A split that is not there (an uploaded header is always alone) is named in
  ``splits_missing`` and the weights are then not known, never counted from a third of the tensors.
- A quantization type newer than the installed ``gguf`` package: the rest of the header still reads; the tensor's
  type is named by its id (``type 99``), its size is not known, and the tensor is listed in ``unsized_tensors``.
"""

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .gguf_kv import kv_count


class GgufHeaderError(ValueError):
    """The file is not a readable GGUF header; the message names the file and what is wrong."""


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the header describes it: ``shape`` in ggml order (ne[0] is the row length), ``ggml_type``
    the quantization's name (``Q8_0``, ``Q4_K`` ...; ``type 99`` for an id the installed gguf package does not
    know), ``n_bytes`` its size in the file (None when its type is not known)."""

    name: str
    ggml_type: str
    shape: tuple[int, ...]
    n_bytes: int | None


@dataclass(frozen=True)
class ModelShape:
    """What the forecast and the memory check need from a GGUF header; stored as JSON on the server record.

    Bytes are bytes (not MiB). ``active_weight_bytes``: weights read per generated token. ``kv_elements_full`` /
    ``kv_elements_sliding``: K+V elements per token position over full-attention / sliding-window layers;
    ``kv_known`` False when the architecture's cache is not one LawDesk can count (``kv_note`` says why, or how it
    was counted). ``tensor_types``: how many tensors of each quantization (for display). ``split_count``: files the
    model is split into (None: one file); ``splits_missing``: the split files not read; ``unsized_tensors``: tensors
    of an unknown quantization type. Weight bytes count only what was read and sized: :meth:`not_known` says what
    is missing.
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
    kv_known: bool = True
    kv_note: str = ""
    split_count: int | None = None
    splits_missing: list[str] = field(default_factory=list)
    unsized_tensors: list[str] = field(default_factory=list)

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

    @property
    def weights_known(self) -> bool:
        """Every split was read and every tensor sized: the weight bytes are the model's."""
        return not self.splits_missing and not self.unsized_tensors

    def weights_not_known(self) -> str:
        """Why the weight bytes are not the model's, in words, or "" when they are."""
        reasons = []
        if self.splits_missing:
            reasons.append(f"the model is split into {self.split_count} files and "
                           f"{_listed(self.splits_missing)} {'was' if len(self.splits_missing) == 1 else 'were'} "
                           "not read (give the path of the first split on a machine that holds them all, or "
                           "read the header where the model is)")
        if self.unsized_tensors:
            types = sorted({t for t in self.tensor_types if t.startswith("type ")})
            reasons.append(f"{len(self.unsized_tensors)} tensor(s) use a quantization type the installed gguf "
                           f"package does not know ({', '.join(types)}), so their size is not known: "
                           f"{_listed(self.unsized_tensors)}")
        return "; ".join(reasons)

    def not_known(self) -> str:
        """What the forecast and the memory check cannot count from this header, in words, or "" when nothing."""
        reasons = [self.weights_not_known()] if not self.weights_known else []
        if not self.kv_known:
            reasons.append(self.kv_note)
        return "; ".join(reasons)


def _listed(names: list[str], shown: int = 4) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _reader_class():
    # gguf adds about 0.1 s to a process's start; every process imports this module for ModelShape, and only
    # reading a header needs gguf.
    import gguf

    class HeaderReader(gguf.GGUFReader):
        """gguf's reader without the per-tensor data views (the weights are never looked at), and naming a
        quantization type it does not know instead of refusing the file."""

        def _build_tensors(self, start_offs: int, fields) -> None:
            infos = []
            for info in fields:
                _name_len, name_data, _n_dims, dims, raw_dtype, _offset = info.parts
                type_id = int(raw_dtype[0])
                try:
                    ggml_type = gguf.GGMLQuantizationType(type_id)
                    block_size, type_size = gguf.GGML_QUANT_SIZES[ggml_type]
                except (ValueError, KeyError):
                    type_name, n_bytes = f"type {type_id}", None
                else:
                    type_name = ggml_type.name
                    n_bytes = int(np.prod(dims)) * type_size // block_size
                infos.append(TensorInfo(name=bytes(name_data).decode("utf-8"), ggml_type=type_name,
                                        shape=tuple(int(d) for d in dims), n_bytes=n_bytes))
            self.tensor_infos = infos

    return HeaderReader


# gguf-split's file names (llama.cpp src/llama.cpp ``llama_split_path``: "%s-%05d-of-%05d.gguf", numbered from 1).
SPLIT_NAME = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


def split_name(prefix: str, number: int, count: int) -> str:
    """The file name of split ``number`` (from 1) of ``count``."""
    return f"{prefix}-{number:05d}-of-{count:05d}.gguf"


def _read_one(path: Path, label: str):
    """Return (metadata, tensor infos) of the GGUF at ``path``; GgufHeaderError naming ``label``."""
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
    return {key: _value(f) for key, f in reader.fields.items()}, reader.tensor_infos


def header_read(path: str | Path, *, source: str | None = None, file_name: str | None = None,
                beside: bool = True) -> ModelShape:
    """Read the GGUF header at ``path`` and return its :class:`ModelShape`. ``source`` names it for people
    (default: the path); ``file_name`` is the model file's own name where ``path`` is a copy (an upload).
    A split model's other files are read beside the first by their names when ``beside`` (a path on this
    machine); given a later split, the first is read instead. Raises GgufHeaderError for a missing, unreadable,
    truncated or non-GGUF file, or a later split whose first split is not beside it."""
    path = Path(path)
    label = source or str(path)
    metadata, tensors = _read_one(path, label)
    count = _int(metadata.get("split.count")) or 1
    if count <= 1:
        return shape_from(metadata, tensors, source=label)
    number = (_int(metadata.get("split.no")) or 0) + 1
    named = SPLIT_NAME.match(file_name or path.name)
    prefix = named.group("prefix") if named else None
    if number != 1:
        first = path.with_name(split_name(prefix, 1, count)) if prefix and beside else None
        if first is None or first == path or not first.is_file():
            raise GgufHeaderError(f"{label}: this is split {number} of {count}; the model's metadata is in the first "
                                  f"split ({split_name(prefix, 1, count) if prefix else 'its -00001-of- file'}): "
                                  "give that one.")
        return header_read(first, source=str(first) if source is None else source)
    missing = []
    for other in range(2, count + 1):
        name = split_name(prefix, other, count) if prefix else f"split {other} of {count}"
        sibling = path.with_name(name) if prefix and beside else None
        if sibling is None or not sibling.is_file():
            missing.append(name)
            continue
        _, more = _read_one(sibling, str(sibling))
        tensors = tensors + more
    expected = _int(metadata.get("split.tensors.count"))
    if not missing and expected is not None and expected != len(tensors):
        raise GgufHeaderError(f"{label}: the {count} splits hold {len(tensors)} tensors but the first says "
                              f"{expected}: a split is from another model or damaged.")
    return shape_from(metadata, tensors, source=label, split_count=count, splits_missing=missing)


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


def shape_from(metadata: dict, tensors: list[TensorInfo], *, source: str, split_count: int | None = None,
               splits_missing: list[str] | None = None) -> ModelShape:
    """Reduce header ``metadata`` ({key: value}) and ``tensors`` to a ModelShape (rules in the module docstring)."""
    arch = str(metadata.get("general.architecture") or "unknown")

    def key(suffix: str):
        return metadata.get(f"{arch}.{suffix}")

    expert_count, expert_used = _int(key("expert_count")), _int(key("expert_used_count"))
    has_output = any(t.name == "output.weight" for t in tensors)
    active = 0
    for tensor in tensors:
        if tensor.n_bytes is None:
            continue
        if "_exps" in tensor.name and expert_count and expert_used:
            active += tensor.n_bytes * expert_used // expert_count
        elif tensor.name.endswith("token_embd.weight") and len(tensor.shape) >= 2:
            rows = tensor.shape[-1]
            read_whole = tensor.name == "token_embd.weight" and not has_output
            active += tensor.n_bytes if read_whole else tensor.n_bytes // max(rows, 1)
        else:
            active += tensor.n_bytes
    sliding = _sliding_layers(arch, metadata, _int(key("block_count")))
    kv = kv_count(arch, metadata, tensors, sliding)
    kv_full, kv_sliding = kv.full, kv.sliding
    types: dict[str, int] = {}
    for tensor in tensors:
        types[tensor.ggml_type] = types.get(tensor.ggml_type, 0) + 1
    window = _int(key("attention.sliding_window"))
    if kv_sliding and not window:
        # A sliding pattern without a window size cannot be used: count those layers as full attention (more
        # bytes, so the forecast errs low rather than high).
        kv_full, kv_sliding = kv_full + kv_sliding, 0
    return ModelShape(
        architecture=arch, source=source, weights_bytes=sum(t.n_bytes or 0 for t in tensors),
        active_weight_bytes=active, kv_elements_full=kv_full, kv_elements_sliding=kv_sliding,
        sliding_window=window if kv_sliding else None,
        name=str(metadata.get("general.name") or ""), block_count=_int(key("block_count")),
        embedding_length=_int(key("embedding_length")), expert_count=expert_count, expert_used_count=expert_used,
        context_length=_int(key("context_length")), attention_layers=kv.layers,
        tensor_types=dict(sorted(types.items())), kv_known=kv.known, kv_note=kv.note, split_count=split_count,
        splits_missing=list(splits_missing or []), unsized_tensors=[t.name for t in tensors if t.n_bytes is None],
    )


def _sliding_layers(arch: str, metadata: dict, block_count: int | None) -> set[int]:
    pattern = metadata.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, list) and pattern and all(isinstance(p, bool) for p in pattern):
        return {i for i, slides in enumerate(pattern) if slides}
    period = SWA_PATTERNS.get(arch)
    if period and block_count:
        return {i for i in range(block_count) if (i + 1) % period != 0}
    return set()
