"""A plain, read-only picture of the topology for the rules to judge: built from the database, with an edited
object's proposed values put in place before it is saved (so a form can be checked before anything is written)."""

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class GpuView:
    id: int
    host_id: int
    index: int
    name: str
    memory_total_mib: int
    compute_capability: tuple[int, int] | None
    host_name: str = ""

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
    weights_mib: int | None = None
    attention_layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None


@dataclass(frozen=True)
class Snapshot:
    gpus: dict[int, GpuView] = field(default_factory=dict)
    boards: tuple[BoardView, ...] = ()
    servers: tuple[ServerView, ...] = ()

    def with_server(self, server: ServerView) -> "Snapshot":
        """This snapshot with ``server`` in place of the saved one of the same id (or added, if new)."""
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


def server_view(server, gpu_ids) -> ServerView:
    """A view of a ModelServer instance (saved or not) pinned to ``gpu_ids``."""
    return ServerView(
        id=server.pk, name=server.name or "this server", host_id=server.host_id, backend=server.backend,
        enabled=server.enabled, gpu_ids=tuple(sorted(gpu_ids)), quantization=server.quantization,
        kv_cache_type=server.kv_cache_type, flash_attention=server.flash_attention,
        context_tokens=server.context_tokens, parallel_slots=server.parallel_slots or 1,
        weights_mib=server.weights_mib, attention_layers=server.attention_layers, kv_heads=server.kv_heads,
        head_dim=server.head_dim,
    )


def board_view(board, gpu_ids) -> BoardView:
    return BoardView(id=board.pk, name=board.name or "this board", host_id=board.host_id, kind=board.kind,
                     gpu_ids=tuple(sorted(gpu_ids)))


def snapshot_load() -> Snapshot:
    """Read the whole topology from the database (four queries plus two for the pinnings)."""
    from pipeline.models import GPU, Board, ModelServer

    gpus = {
        gpu.pk: GpuView(
            id=gpu.pk, host_id=gpu.host_id, index=gpu.index, name=gpu.name, memory_total_mib=gpu.memory_total_mib,
            compute_capability=parse_capability(gpu.compute_capability), host_name=gpu.host.name,
        )
        for gpu in GPU.objects.select_related("host")
    }
    boards = tuple(
        board_view(board, [gpu.pk for gpu in board.gpus.all()]) for board in Board.objects.prefetch_related("gpus")
    )
    servers = tuple(
        server_view(server, [gpu.pk for gpu in server.gpus.all()])
        for server in ModelServer.objects.prefetch_related("gpus")
    )
    return Snapshot(gpus=gpus, boards=boards, servers=servers)
