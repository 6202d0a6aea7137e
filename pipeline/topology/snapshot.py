"""A plain, read-only picture of the topology for the rules to judge, with an edited object's proposed values put
in place before it is saved (so a form can be checked before anything is written). Nothing here reads the
database: :func:`pipeline.topology.selectors.snapshot_load` builds the picture from it."""

from dataclasses import dataclass, field, replace

from .gguf_header import ModelShape


@dataclass(frozen=True)
class GpuView:
    id: int
    host_id: int
    index: int
    name: str
    memory_total_mib: int
    compute_capability: tuple[int, int] | None
    host_name: str = ""
    memory_bandwidth_gbs: float | None = None

    @property
    def label(self) -> str:
        return f"GPU {self.index} ({self.host_name})" if self.host_name else f"GPU {self.index}"


@dataclass(frozen=True)
class BoardView:
    id: int | None
    name: str
    host_id: int
    kind: str
    gpu_ids: tuple[int, ...]


@dataclass(frozen=True)
class ServerView:
    id: int | None
    name: str
    host_id: int | None
    backend: str
    enabled: bool
    gpu_ids: tuple[int, ...] = ()
    quantization: str = ""
    kv_cache_type: str = "f16"
    flash_attention: bool = True
    context_tokens: int | None = None
    parallel_slots: int = 1
    shape: ModelShape | None = None
    decode_floor: float | None = None
    gpu_layers: int = 999
    model_name: str = ""
    model_path: str = ""
    build_info: str = ""


@dataclass(frozen=True)
class Snapshot:
    gpus: dict[int, GpuView] = field(default_factory=dict)
    boards: tuple[BoardView, ...] = ()
    servers: tuple[ServerView, ...] = ()
    # Learned efficiency factors, {efficiency key: (factor, probes)} (pipeline.topology.foresight).
    efficiencies: dict[str, tuple[float, int]] = field(default_factory=dict)

    def with_server(self, server: ServerView) -> "Snapshot":
        """This snapshot with ``server`` in place of the saved one of the same id (or added, if new); a view
        without a probed build keeps the saved one's (a form edits the record, not its probe history)."""
        saved = next((s for s in self.servers if s.id is not None and s.id == server.id), None)
        if saved is not None and not server.build_info:
            server = replace(server, build_info=saved.build_info)
        others = tuple(s for s in self.servers if s.id is None or s.id != server.id)
        return replace(self, servers=(*others, server))

    def with_board(self, board: BoardView) -> "Snapshot":
        others = tuple(b for b in self.boards if b.id is None or b.id != board.id)
        return replace(self, boards=(*others, board))

    def boards_of_gpu(self, gpu_id: int) -> list[BoardView]:
        return [board for board in self.boards if gpu_id in board.gpu_ids]


def parse_capability(text: str) -> tuple[int, int] | None:
    """ "7.0" -> (7, 0); blank or malformed -> None."""
    try:
        major, minor = text.split(".")
        return int(major), int(minor)
    except (AttributeError, ValueError):
        return None


def server_view(server, gpu_ids, *, build_info: str | None = None) -> ServerView:
    """A view of a ModelServer instance (saved or not) pinned to ``gpu_ids``; ``build_info`` is its latest probe's
    llama.cpp build (default: read from the instance's ``probe_build_info`` annotation, if any)."""
    if build_info is None:
        build_info = getattr(server, "probe_build_info", None) or ""
    return ServerView(
        id=server.pk, name=server.name or "this server", host_id=server.host_id, backend=server.backend,
        enabled=server.enabled, gpu_ids=tuple(sorted(gpu_ids)), quantization=server.quantization,
        kv_cache_type=server.kv_cache_type, flash_attention=server.flash_attention,
        context_tokens=server.context_tokens, parallel_slots=server.parallel_slots or 1,
        shape=ModelShape.from_json(server.gguf_header), decode_floor=server.decode_floor,
        gpu_layers=server.gpu_layers if server.gpu_layers is not None else 999, model_name=server.model_name,
        model_path=server.model_path, build_info=build_info,
    )


def board_view(board, gpu_ids) -> BoardView:
    return BoardView(id=board.pk, name=board.name or "this board", host_id=board.host_id, kind=board.kind,
                     gpu_ids=tuple(sorted(gpu_ids)))

