"""The command that starts a server exactly as it is configured here, for the operator to run on its host.

llama-server flags as in llama.cpp's tools/server/README.md: ``-fa on`` (flash attention takes a value, on, off or
auto, since 2025), ``-ctk``/``-ctv`` (K and V cache types), ``-c`` (total context, divided among ``--parallel``
slots), ``-ngl`` (layers on the GPUs). ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` makes CUDA number GPUs in PCI bus order,
as NVML does, and ``CUDA_VISIBLE_DEVICES`` names the pinned GPUs by UUID when known (indexes otherwise). The API key
is never written out: the line reads it from an environment variable the operator sets on the model host.
"""

import shlex
from urllib.parse import urlsplit

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _gpu_env(gpus) -> list[str]:
    if not gpus:
        return []
    if all(gpu.uuid for gpu in gpus):
        devices = ",".join(gpu.uuid for gpu in gpus)
    else:
        devices = ",".join(str(gpu.index) for gpu in gpus)
    return ["CUDA_DEVICE_ORDER=PCI_BUS_ID", f"CUDA_VISIBLE_DEVICES={devices}"]


def _address(server) -> tuple[str, int]:
    url = urlsplit(server.base_url)
    default = 11434 if server.backend == "ollama" else 8000 if server.backend == "vllm" else 8080
    host = "127.0.0.1" if url.hostname in LOOPBACK else "0.0.0.0"
    return host, url.port or default


def launch_line(server, gpus=None) -> str:
    """Return the shell line that starts ``server`` (a ModelServer) on its host, or "" for a backend LawDesk
    cannot start (another OpenAI-compatible server); for the embedded server, the command it was started with.
    ``gpus`` defaults to the server's pinned GPUs. ``--api-key`` appears only when the server has a key, as
    ``"$LAWDESK_API_KEY_<NAME>"``."""
    if server.embedded and server.started_command:
        # LawDesk started this one itself: the line is the command it ran, not one rebuilt from the fields.
        return shlex.join(server.started_command)
    gpus = sorted(gpus if gpus is not None else server.gpus.all(), key=lambda gpu: gpu.index)
    bind, port = _address(server)
    total_context = server.context_tokens * server.parallel_slots if server.context_tokens else None
    env = _gpu_env(gpus)
    extra = shlex.split(server.extra_args) if server.extra_args else []
    # Only the variable's name is written; the shell expands it on the model host.
    key = ["--api-key", f'"${server.api_key_env}"'] if server.api_key else []
    if server.backend == "llama.cpp":
        words = ["llama-server", "-m", server.model_path or "MODEL.gguf"]
        if server.model_name:
            words += ["--alias", server.model_name]
        words += ["--host", bind, "--port", str(port), "-fa", "on" if server.flash_attention else "off",
                  "-ctk", server.kv_cache_type, "-ctv", server.kv_cache_type]
        if total_context:
            words += ["-c", str(total_context)]
        words += ["-ngl", str(server.gpu_layers), "--parallel", str(server.parallel_slots), *extra]
        return " ".join([*env, *map(shlex.quote, words), *key])
    if server.backend == "ollama":
        # Ollama takes its settings from the environment; keep-alive -1 keeps models resident.
        env += [f"OLLAMA_HOST={bind}:{port}", f"OLLAMA_NUM_PARALLEL={server.parallel_slots}",
                f"OLLAMA_FLASH_ATTENTION={1 if server.flash_attention else 0}",
                f"OLLAMA_KV_CACHE_TYPE={server.kv_cache_type}", "OLLAMA_KEEP_ALIVE=-1"]
        if server.context_tokens:
            env.append(f"OLLAMA_CONTEXT_LENGTH={server.context_tokens}")
        return " ".join([*env, "ollama", "serve"])
    if server.backend == "vllm":
        words = ["vllm", "serve", server.model_path or server.model_name or "MODEL", "--host", bind,
                 "--port", str(port), "--max-num-seqs", str(server.parallel_slots)]
        if server.model_name:
            words += ["--served-model-name", server.model_name]
        if len(gpus) > 1:
            words += ["--tensor-parallel-size", str(len(gpus))]
        if server.context_tokens:
            words += ["--max-model-len", str(server.context_tokens)]
        if server.quantization:
            words += ["--quantization", server.quantization]
        return " ".join([*env, *map(shlex.quote, [*words, *extra]), *key])
    return ""
