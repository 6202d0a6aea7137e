"""The office deployment LawDesk was written for (twelve V100s in NVLink boards of four), loaded by
``manage.py topology_load_example``.

Host 1, ``threadripper`` (Threadripper Pro): twelve V100-SXM2 (compute capability 7.0, 32 GB; GPU 3 has 16 GB).
Board A = NVLink group {4,5,8,9}, Board B = {6,7,10,11}, NVLink pair {0,1}, and the mixed pair {2,3}.
Host 2, ``epyc`` (EPYC 7302P, 512 GB RAM): four RTX 3090 (8.6, 24 GB) and two V100-PCIe (7.0) with no NVLink,
running Ollama for the smaller models.
Servers: drafter = Qwen3.6-35B-A3B (llama.cpp, Board A); reasoner = Qwen3.5-122B-A10B (llama.cpp, Board B); gate
= a small model on pair {0,1}; adversarial reviewer on pair {2,3}; extractor = Gemma-4-26B on the 3090s (Ollama);
router and summarizer = a Gemma model. All Q8 GGUF with a Q4 KV cache and flash attention, resident in GPU memory.

What the issue leaves open is filled in here and can be edited in the admin: which of GPUs 2 and 3 has 16 GB (3),
the V100-PCIe memory (32 GB), ports, the gate's and reviewer's models (named by their role), and where the router
and summarizer run (a second Ollama instance on the V100-PCIe pair, so each server stays on one board). NVLink
records join every two GPUs of a board; lane counts are not stated, so each is 1. The memory check and the
decode forecast wait for each server's GGUF header (read from its model path, or uploaded in the admin).
"""

from django.db import transaction

from pipeline.models import GPU, Board, Host, ModelServer, NVLink, RoleAssignment

MIB_PER_GB = 1024

HOSTS = [
    {"name": "threadripper", "address": "threadripper", "notes": "Threadripper Pro; 12x V100-SXM2"},
    {"name": "epyc", "address": "epyc", "notes": "EPYC 7302P, 512 GB RAM; 4x RTX 3090 + 2x V100-PCIe; Ollama"},
]

# (host, index, name, memory GB, compute capability)
GPUS = [("threadripper", i, "Tesla V100-SXM2-32GB", 32, "7.0") for i in range(12) if i != 3] + [
    ("threadripper", 3, "Tesla V100-SXM2-16GB", 16, "7.0"),
] + [("epyc", i, "NVIDIA GeForce RTX 3090", 24, "8.6") for i in range(4)] + [
    ("epyc", i, "Tesla V100-PCIE-32GB", 32, "7.0") for i in (4, 5)
]

# (host, name, kind, GPU indexes)
BOARDS = [
    ("threadripper", "Board A", "nvlink_group", (4, 5, 8, 9)),
    ("threadripper", "Board B", "nvlink_group", (6, 7, 10, 11)),
    ("threadripper", "Pair 0-1", "nvlink_pair", (0, 1)),
    ("threadripper", "Pair 2-3", "nvlink_pair", (2, 3)),
    ("epyc", "RTX 3090s", "pcie", (0, 1, 2, 3)),
    ("epyc", "V100-PCIe", "pcie", (4, 5)),
]

Q8 = {"quantization": "q8_0", "kv_cache_type": "q4_0", "flash_attention": True}

# name, host, backend, port, model name, GGUF path, board, roles, context per slot
SERVERS = [
    ("drafter", "threadripper", "llama.cpp", 8080, "qwen3.6-35b-a3b", "/models/Qwen3.6-35B-A3B-Q8_0.gguf",
     "Board A", ["drafter"], 32768),
    ("reasoner", "threadripper", "llama.cpp", 8081, "qwen3.5-122b-a10b", "/models/Qwen3.5-122B-A10B-Q8_0.gguf",
     "Board B", ["reasoner"], 32768),
    ("gate", "threadripper", "llama.cpp", 8082, "gate", "/models/gate-Q8_0.gguf", "Pair 0-1", ["gate"], 16384),
    ("reviewer", "threadripper", "llama.cpp", 8083, "reviewer", "/models/reviewer-Q8_0.gguf", "Pair 2-3",
     ["reviewer"], 32768),
    ("extractor", "epyc", "ollama", 11434, "gemma4:26b-q8_0", "", "RTX 3090s", ["extractor"], 16384),
    ("gemma", "epyc", "ollama", 11435, "gemma3:12b-it-q8_0", "", "V100-PCIe", ["router", "summarizer"], 16384),
]


def topology_load_example() -> dict[str, int]:
    """Create or update the example deployment (idempotent: a second run changes nothing); return counts of
    hosts, gpus, boards, links, servers and roles. Other records are left alone, except that the example's roles
    move to its servers."""
    with transaction.atomic():
        hosts = {h["name"]: Host.objects.update_or_create(name=h["name"], defaults=h)[0] for h in HOSTS}
        gpus = {}
        for host, index, name, memory_gb, capability in GPUS:
            gpus[host, index], _ = GPU.objects.update_or_create(
                host=hosts[host], index=index,
                defaults={"name": name, "memory_total_mib": memory_gb * MIB_PER_GB, "compute_capability": capability},
            )
        boards, links = {}, 0
        for host, name, kind, indexes in BOARDS:
            board, _ = Board.objects.update_or_create(host=hosts[host], name=name, defaults={"kind": kind})
            board.gpus.set([gpus[host, i] for i in indexes])
            boards[name] = (board, host, indexes)
            if kind != "pcie":
                for a in indexes:
                    for b in indexes:
                        if a < b:
                            NVLink.objects.get_or_create(gpu_a=gpus[host, a], gpu_b=gpus[host, b])
                            links += 1
        roles = 0
        for name, host, backend, port, model, path, board_name, held, context in SERVERS:
            server, _ = ModelServer.objects.update_or_create(name=name, defaults={
                "host": hosts[host], "backend": backend, "base_url": f"http://{host}:{port}", "model_name": model,
                "model_path": path, "context_tokens": context, "parallel_slots": 1, "enabled": True, **Q8,
            })
            _, _, indexes = boards[board_name]
            server.gpus.set([gpus[host, i] for i in indexes])
            for role in held:
                RoleAssignment.objects.update_or_create(role=role, defaults={"server": server})
                roles += 1
    return {"hosts": len(hosts), "gpus": len(gpus), "boards": len(boards), "links": links,
            "servers": len(SERVERS), "roles": roles}
