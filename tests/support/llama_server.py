"""A real llama-server (the binary LawDesk builds from source) serving a GGUF file on loopback, for the tests that
check the forecast and the probe against the real thing rather than a scripted server."""

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from pipeline.embedded import server_binary
from tests.support.processes import free_port

READY_TIMEOUT_S = 120  # loading a 270M model takes seconds; a busy two-core machine may take far longer


@contextmanager
def llama_server(gguf: Path, log_path: Path, *, alias: str, context_tokens: int = 4096,
                 chat_template: str = "gemma") -> Iterator[str]:
    """Serve ``gguf`` as ``alias`` (one slot of ``context_tokens``, every core) and yield its base URL once
    ``/health`` answers 200; stop it on exit. Raises RuntimeError when it exits or is not ready in time."""
    with open(log_path, "ab") as log:
        port = free_port()
        process = subprocess.Popen(
            [str(server_binary()), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
             "--chat-template", chat_template, "--no-jinja", "--alias", alias, "-c", str(context_tokens),
             "--parallel", "1", "-t", str(os.cpu_count() or 1), "--no-webui"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(process, url)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def wait_ready(process: subprocess.Popen, url: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Return once the llama-server ``process`` at ``url`` answers ``/health`` with 200. Raises RuntimeError when
    it exits first or is not ready within ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"llama-server at {url} did not become ready (see its log)")
