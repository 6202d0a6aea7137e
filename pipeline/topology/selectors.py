"""Reads of the topology from the database, for the rules, the forecast, the admin forms and the pages: the
snapshot the rules judge, the learned efficiency factors, and one server record's forecast."""

from statistics import median

from django.db.models import OuterRef, Subquery

from pipeline.models import GPU, Board, ModelServer, ProbeResult

from .foresight import EFFICIENCY_PROBES, Foresight, view_forecast
from .snapshot import GpuView, Snapshot, board_view, parse_capability, server_view


def efficiencies_load() -> dict[str, tuple[float, int]]:
    """{efficiency key: (median measured/ceiling, probes)} from the latest probes that measured a speed and had a
    ceiling (at most EFFICIENCY_PROBES per key). One query."""
    ratios: dict[str, list[float]] = {}
    probes = (ProbeResult.objects.filter(skipped=False, decode_tok_s__gt=0, ceiling_tok_s__gt=0)
              .exclude(efficiency_key="").order_by("-at", "-pk")
              .values_list("efficiency_key", "decode_tok_s", "ceiling_tok_s")[:EFFICIENCY_PROBES * 50])
    for key, decode, ceiling in probes:
        found = ratios.setdefault(key, [])
        if len(found) < EFFICIENCY_PROBES:
            found.append(decode / ceiling)
    return {key: (median(values), len(values)) for key, values in ratios.items()}


def snapshot_load() -> Snapshot:
    """Read the whole topology from the database in six queries whatever its size (GPUs with their hosts, boards,
    servers, the GPUs of the boards and of the servers, the learned efficiency factors), with each server's latest
    llama.cpp build."""
    gpus = {
        gpu.pk: GpuView(
            id=gpu.pk, host_id=gpu.host_id, index=gpu.index, name=gpu.name, memory_total_mib=gpu.memory_total_mib,
            compute_capability=parse_capability(gpu.compute_capability), host_name=gpu.host.name,
            memory_bandwidth_gbs=gpu.memory_bandwidth_gbs,
        )
        for gpu in GPU.objects.select_related("host")
    }
    boards = tuple(
        board_view(board, [gpu.pk for gpu in board.gpus.all()]) for board in Board.objects.prefetch_related("gpus")
    )
    servers = tuple(
        server_view(server, [gpu.pk for gpu in server.gpus.all()])
        for server in ModelServer.objects.prefetch_related("gpus").annotate(probe_build_info=Subquery(
            ProbeResult.objects.filter(server=OuterRef("pk")).exclude(build_info="").order_by("-at", "-pk")
            .values("build_info")[:1]))
    )
    return Snapshot(gpus=gpus, boards=boards, servers=servers, efficiencies=efficiencies_load())


def server_foresight(server: ModelServer, gpu_ids=None, *, snapshot: Snapshot | None = None) -> Foresight:
    """The forecast of a ModelServer (saved or not) pinned to ``gpu_ids`` (GPU ids; default: its saved GPUs),
    judged in ``snapshot`` (default: one read now)."""
    if gpu_ids is None:
        gpu_ids = [gpu.pk for gpu in server.gpus.all()] if server.pk else []
    view = server_view(server, gpu_ids)
    snapshot = (snapshot if snapshot is not None else snapshot_load()).with_server(view)
    return view_forecast(snapshot, view)
