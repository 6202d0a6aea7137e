"""The rules a topology must keep, in one table. Each rule has a level (``error``: the configuration is refused;
``warning``: it is saved and shown with the warning), what it checks, and the source it rests on.

``problems(snapshot)`` returns every :class:`Problem` of a topology; ``server_errors`` and ``board_errors`` give the
errors that block saving one object, for the admin forms; ``server_problems`` everything about one.

Nothing here reads the database: every function judges a :class:`~.snapshot.Snapshot` it is given, which
:func:`pipeline.topology.selectors.snapshot_load` reads (the way Django's ``validate_password`` judges a password
a form hands it).
"""

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .forecast import NotKnown, memory_need
from .foresight import build_warnings, view_forecast
from .memory import BYTES_PER_ELEMENT, RESERVE_MIB_PER_GPU
from .snapshot import BoardView, ServerView, Snapshot, board_view, server_view

ERROR = "error"
WARNING = "warning"

LLAMA_CPP, OLLAMA, VLLM = "llama.cpp", "ollama", "vllm"

# vLLM quantization kernels and the lowest compute capability each runs on. SM 7.0 is Volta (V100), 7.5 Turing,
# 8.0/8.6 Ampere (A100, RTX 3090).
VLLM_MIN_CAPABILITY: dict[str, tuple[tuple[int, int], str]] = {
    "awq": ((7, 5), "vLLM docs, Quantization > Supported Hardware: AWQ is not supported on Volta"),
    "fp8": ((7, 5), "vLLM docs, FP8 W8A8: FP8 runs on compute capability 7.5+ (weight-only, FP8 Marlin); "
                    "W8A8 needs 8.9"),
    "awq_marlin": ((8, 0), "vLLM docs, Quantization > Supported Hardware: Marlin (GPTQ/AWQ/FP8) needs Ampere"),
    "gptq_marlin": ((8, 0), "vLLM docs, Quantization > Supported Hardware: Marlin (GPTQ/AWQ/FP8) needs Ampere"),
    # vLLM's table lists GPTQ as supported on Volta; on this deployment's V100s its kernels gave broken output,
    # which is why it left vLLM for llama.cpp.
    "gptq": ((7, 5), "this office's deployment: vLLM's GPTQ kernels are broken on compute capability 7.0"),
}


@dataclass(frozen=True)
class Problem:
    """One broken rule: ``rule`` (the table's id), ``level``, a ``message`` for the operator, the rule's
    ``source``, the form ``field`` it concerns, and the ids of the servers, boards and GPUs involved."""

    rule: str
    level: str
    message: str
    source: str
    field: str = "__all__"
    servers: tuple[int | None, ...] = ()
    boards: tuple[int | None, ...] = ()
    gpus: tuple[int, ...] = ()


@dataclass(frozen=True)
class Finding:
    """What a check yields; the table adds the rule's id, level and source."""

    message: str
    field: str = "__all__"
    servers: tuple[int | None, ...] = ()
    boards: tuple[int | None, ...] = ()
    gpus: tuple[int, ...] = ()


@dataclass(frozen=True)
class Rule:
    id: str
    level: str
    summary: str
    source: str
    check: Callable[[Snapshot], Iterator[Finding]]


def _labels(snapshot: Snapshot, gpu_ids) -> str:
    return ", ".join(snapshot.gpus[g].label for g in gpu_ids if g in snapshot.gpus)


def _pinned(snapshot: Snapshot, server: ServerView):
    return [snapshot.gpus[g] for g in server.gpu_ids if g in snapshot.gpus]


def _server_board(snapshot: Snapshot, server: ServerView) -> BoardView | None:
    """The one board holding all of the server's GPUs, or None (no GPUs, no board, or several)."""
    boards = {b.id: b for g in server.gpu_ids for b in snapshot.boards_of_gpu(g)}
    if len(boards) != 1:
        return None
    board = next(iter(boards.values()))
    return board if all(g in board.gpu_ids for g in server.gpu_ids) else None


def check_spans_boards(snapshot: Snapshot) -> Iterator[Finding]:
    for server in snapshot.servers:
        if len(server.gpu_ids) < 2:
            continue
        boards = {b.id: b for g in server.gpu_ids for b in snapshot.boards_of_gpu(g)}
        outside = [g for g in server.gpu_ids if not snapshot.boards_of_gpu(g)]
        if len(boards) > 1 or (boards and outside):
            names = sorted(b.name for b in boards.values()) + (["no board"] if outside else [])
            yield Finding(
                f"{server.name} is pinned to GPUs of more than one board ({', '.join(names)}). Hops between "
                "boards go over PCIe/NUMA and kill throughput: pin it to GPUs of one board.",
                field="gpus", servers=(server.id,), boards=tuple(boards), gpus=server.gpu_ids,
            )


def check_other_host(snapshot: Snapshot) -> Iterator[Finding]:
    for server in snapshot.servers:
        gpus = _pinned(snapshot, server)
        hosts = {gpu.host_id for gpu in gpus}
        foreign = [gpu for gpu in gpus if server.host_id is not None and gpu.host_id != server.host_id]
        if len(hosts) > 1 or foreign:
            yield Finding(
                f"{server.name} is pinned to GPUs of another host ({_labels(snapshot, [g.id for g in gpus])}): "
                "a server can only use the GPUs of the machine it runs on.",
                field="gpus", servers=(server.id,), gpus=server.gpu_ids,
            )
    for board in snapshot.boards:
        foreign = [g for g in board.gpu_ids if g in snapshot.gpus and snapshot.gpus[g].host_id != board.host_id]
        if foreign:
            yield Finding(f"Board {board.name} holds GPUs of another host ({_labels(snapshot, foreign)}).",
                          field="gpus", boards=(board.id,), gpus=tuple(foreign))


def check_gpu_in_two_boards(snapshot: Snapshot) -> Iterator[Finding]:
    for gpu_id in sorted({g for board in snapshot.boards for g in board.gpu_ids}):
        boards = snapshot.boards_of_gpu(gpu_id)
        if len(boards) > 1:
            yield Finding(
                f"{_labels(snapshot, [gpu_id])} is in two boards ({', '.join(sorted(b.name for b in boards))}); "
                "a GPU belongs to one board.",
                field="gpus", boards=tuple(b.id for b in boards), gpus=(gpu_id,),
            )


def check_ollama_context(snapshot: Snapshot) -> Iterator[Finding]:
    for server in snapshot.servers:
        if server.backend == OLLAMA and not server.context_tokens:
            yield Finding(
                f"{server.name} is an Ollama server without a context size: it is sent as num_ctx with every "
                "request (Ollama otherwise truncates prompts silently to its default).",
                field="context_tokens", servers=(server.id,),
            )


def check_shared_gpu(snapshot: Snapshot) -> Iterator[Finding]:
    holders: dict[int, list[ServerView]] = defaultdict(list)
    for server in snapshot.servers:
        if server.enabled:
            for gpu_id in server.gpu_ids:
                holders[gpu_id].append(server)
    for gpu_id, servers in sorted(holders.items()):
        if len(servers) > 1:
            yield Finding(
                f"{_labels(snapshot, [gpu_id])} is pinned to {len(servers)} enabled servers "
                f"({', '.join(sorted(s.name for s in servers))}): each loads its weights and cache into the same "
                "memory and they compete for it.",
                field="gpus", servers=tuple(s.id for s in servers), gpus=(gpu_id,),
            )


def check_mixed_memory(snapshot: Snapshot) -> Iterator[Finding]:
    for server in snapshot.servers:
        board = _server_board(snapshot, server)
        if board is None:
            continue
        sizes = sorted({snapshot.gpus[g].memory_total_mib for g in board.gpu_ids if g in snapshot.gpus})
        if len(sizes) > 1:
            yield Finding(
                f"{server.name} runs on {board.name}, whose GPUs have different memory sizes "
                f"({' and '.join(f'{s:,} MiB' for s in sizes)}): an even split is bounded by the smallest card; "
                "give llama-server a matching --tensor-split or expect the small card to fill first.",
                field="gpus", servers=(server.id,), boards=(board.id,),
            )


def check_quantized_cache_without_fa(snapshot: Snapshot) -> Iterator[Finding]:
    for server in snapshot.servers:
        quantized = server.kv_cache_type not in ("f16", "bf16", "f32")
        if server.backend == LLAMA_CPP and quantized and not server.flash_attention:
            yield Finding(
                f"{server.name} has a quantized KV cache ({server.kv_cache_type}) without flash attention: "
                "llama-server refuses to start (\"quantized V cache requires flash_attn to be enabled\"). Turn flash "
                "attention on or use an f16 cache.",
                field="flash_attention", servers=(server.id,),
            )


def check_vllm_capability(snapshot: Snapshot) -> Iterator[Finding]:
    for server in snapshot.servers:
        if server.backend != VLLM or server.quantization not in VLLM_MIN_CAPABILITY:
            continue
        minimum, source = VLLM_MIN_CAPABILITY[server.quantization]
        low = [g for g in _pinned(snapshot, server) if g.compute_capability and g.compute_capability < minimum]
        if low:
            capabilities = sorted({"%d.%d" % g.compute_capability for g in low})
            yield Finding(
                f"{server.name} uses vLLM with {server.quantization} on GPUs of compute capability "
                f"{', '.join(capabilities)}; its kernels need {minimum[0]}.{minimum[1]} or newer ({source}).",
                field="quantization", servers=(server.id,), gpus=tuple(g.id for g in low),
            )


def check_memory_fit(snapshot: Snapshot) -> Iterator[Finding]:
    for server in snapshot.servers:
        gpus = _pinned(snapshot, server)
        if not gpus or server.shape is None or server.kv_cache_type not in BYTES_PER_ELEMENT:
            continue
        # Without a context size only the weights are counted: the server's own default context is not known here.
        context = server.context_tokens or 0
        try:
            need = memory_need(server.shape, context_tokens=context, parallel_slots=server.parallel_slots,
                               kv_cache_type=server.kv_cache_type, gpus=len(gpus))
        except NotKnown:
            # The forecast column says what is not known; a fit judged on part of the model would mislead.
            continue
        available = sum(g.memory_total_mib for g in gpus)
        if need.total_mib > available:
            yield Finding(
                f"{server.name} needs about {need.total_mib:,.0f} MiB (weights {need.weights_mib:,.0f} from the GGUF "
                f"header, KV cache {need.kv_mib:,.0f} for {context * server.parallel_slots:,} tokens, "
                f"{len(gpus)} x {RESERVE_MIB_PER_GPU} MiB for CUDA and compute buffers) but its GPUs hold "
                f"{available:,} MiB: it cannot stay resident. Shorten the context, quantize the cache, or pin more "
                "GPUs of the board.",
                field="gpus", servers=(server.id,), gpus=server.gpu_ids,
            )


def check_forecast_under_floor(snapshot: Snapshot) -> Iterator[Finding]:
    """Enabled servers whose decode-speed forecast is under their decode floor."""
    for server in snapshot.servers:
        if not server.enabled or server.decode_floor is None:
            continue
        result = view_forecast(snapshot, server).forecast
        if result is not None and result.forecast_tok_s < server.decode_floor:
            yield Finding(
                f"{server.name}: decode is forecast at {result.forecast_tok_s:.1f} tok/s, under its floor of "
                f"{server.decode_floor:g} tok/s ({result.summary()}). A mixture-of-experts model with few active "
                "parameters, a smaller quantization or a faster board would clear it.",
                field="enabled", servers=(server.id,), gpus=server.gpu_ids,
            )


def check_known_builds(snapshot: Snapshot) -> Iterator[Finding]:
    """Servers whose latest probed llama.cpp build has a known problem for their model."""
    for server in snapshot.servers:
        for message in build_warnings(server):
            yield Finding(f"{server.name}: {message}", servers=(server.id,))


RULES: tuple[Rule, ...] = (
    Rule("server_spans_boards", ERROR, "A server's GPUs span more than one board",
         "the deployment: hops between boards go over PCIe/NUMA instead of NVLink", check_spans_boards),
    Rule("gpu_other_host", ERROR, "A server or board uses GPUs of another host",
         "CUDA_VISIBLE_DEVICES names GPUs of the local machine only", check_other_host),
    Rule("gpu_in_two_boards", ERROR, "A GPU is in two boards",
         "NVLink boards are connected components of the NVLink graph, so they never overlap",
         check_gpu_in_two_boards),
    Rule("ollama_without_context", ERROR, "An Ollama server has no context size",
         "Ollama docs (api.md, options.num_ctx); pipeline/llm/client.py sends it with every request",
         check_ollama_context),
    Rule("gpu_shared", WARNING, "Two enabled servers are pinned to the same GPU",
         "each server allocates its weights and KV cache on its GPUs without knowing of the other",
         check_shared_gpu),
    Rule("board_mixed_memory", WARNING, "A server runs on a board with mixed memory sizes",
         "llama.cpp --tensor-split / vLLM tensor parallelism: equal shards are bounded by the smallest card",
         check_mixed_memory),
    Rule("quantized_cache_without_flash_attention", WARNING, "Quantized KV cache without flash attention",
         "llama.cpp src/llama-context.cpp refuses a quantized V cache without flash attention",
         check_quantized_cache_without_fa),
    Rule("vllm_compute_capability", WARNING, "vLLM quantization kernels not supported by the GPUs' compute "
         "capability (AWQ, FP8: 7.5+; Marlin: 8.0+; GPTQ broken on 7.0)",
         "vLLM docs (Quantization > Supported Hardware; FP8 W8A8) and this deployment's experience with GPTQ",
         check_vllm_capability),
    Rule("memory_fit", WARNING, "Weights plus KV cache for the context do not fit the pinned GPUs",
         "the GGUF header: tensor bytes + KV cache (K and V widths of each attention layer x context x slots x "
         "bytes per element, ggml block sizes; sliding-window layers keep their window) + 512 MiB per GPU",
         check_memory_fit),
    Rule("forecast_under_floor", WARNING, "An enabled server's decode-speed forecast is under its floor",
         "memory bandwidth / bytes read per token x efficiency (docs/topology.md)", check_forecast_under_floor),
    Rule("llama_cpp_known_problem", WARNING, "The server's llama.cpp build has a known problem for its model",
         "pipeline/topology/data/llama_cpp_known_problems.json (llama.cpp issues and pull requests)",
         check_known_builds),
)


def problems(snapshot: Snapshot) -> list[Problem]:
    """Every broken rule of ``snapshot``, errors first, in table order."""
    found = [
        Problem(rule=rule.id, level=rule.level, message=f.message, source=rule.source, field=f.field,
                servers=f.servers, boards=f.boards, gpus=f.gpus)
        for rule in RULES for f in rule.check(snapshot)
    ]
    return sorted(found, key=lambda p: p.level != ERROR)


def server_problems(server, gpu_ids, snapshot: Snapshot) -> list[Problem]:
    """The problems that involve ``server`` (a ModelServer, saved or not) if it were pinned to ``gpu_ids``
    (GPU ids), judged in ``snapshot`` with the server's proposed values in place of its saved ones."""
    view = server_view(server, gpu_ids)
    return [p for p in problems(snapshot.with_server(view)) if view.id in p.servers]


def server_errors(server, gpu_ids, snapshot: Snapshot) -> dict[str, list[str]]:
    """Errors that block saving ``server`` pinned to ``gpu_ids``, as {form field or "__all__": [messages]}
    ({} when it may be saved)."""
    return _by_field(p for p in server_problems(server, gpu_ids, snapshot) if p.level == ERROR)


def board_errors(board, gpu_ids, snapshot: Snapshot) -> dict[str, list[str]]:
    """Errors that block saving ``board`` (a Board, saved or not) holding ``gpu_ids``, as {form field or
    "__all__": [messages]}."""
    view = board_view(board, gpu_ids)
    snapshot = snapshot.with_board(view)
    return _by_field(p for p in problems(snapshot) if p.level == ERROR and view.id in p.boards)


def _by_field(found) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = defaultdict(list)
    for problem in found:
        errors[problem.field].append(problem.message)
    return dict(errors)


def counts(found: list[Problem]) -> Counter:
    """How many errors and warnings: ``Counter({"error": n, "warning": m})``."""
    return Counter(p.level for p in found)
