"""What the admin and the topology page say about one server's model: its GGUF header, the forecast beside the
last measured decode, the memory it needs, and its llama.cpp build with any known problem."""

from .forecast import memory_need
from .foresight import build_warnings
from .gguf_header import ModelShape
from .selectors import server_foresight
from .snapshot import server_view


def header_summary(data: dict | None) -> str:
    """One line about a stored header (``ModelServer.gguf_header``), or what to do when none is stored."""
    shape = ModelShape.from_json(data)
    if shape is None:
        return "not read: give the model's path on this machine, or upload its header"
    experts = f", {shape.expert_used_count} of {shape.expert_count} experts per token" if shape.expert_count else ""
    types = ", ".join(f"{name} x{count}" for name, count in shape.tensor_types.items())
    splits = f", {shape.split_count} split files" if shape.split_count else ""
    weights = (f"weights {shape.weights_bytes / 2**30:,.2f} GiB, read per token "
               f"{shape.active_weight_bytes / 1e9:,.2f} GB" if shape.weights_known else
               f"weights not known ({shape.weights_not_known()})")
    kv = f"; KV cache {shape.kv_note}" if shape.kv_note else ""
    return (f"{shape.architecture} {shape.name} ({shape.source}{splits}): {shape.block_count} layers, width "
            f"{shape.embedding_length}{experts}; {weights}; tensors {types}{kv}")


def server_report(server) -> list[str]:
    """Lines for a saved ModelServer: forecast (or why none), last measured decode, memory, build and warnings."""
    foresight = server_foresight(server)
    lines = [foresight.forecast.summary() if foresight.forecast else f"no forecast: {foresight.reason}"]
    measured = server.probes.filter(skipped=False, decode_tok_s__isnull=False).order_by("-at", "-pk").first()
    lines.append(f"last measured: {measured.decode_tok_s:.1f} tok/s at {measured.at:%Y-%m-%d %H:%M}"
                 if measured else "last measured: never")
    shape = ModelShape.from_json(server.gguf_header)
    gpus = list(server.gpus.all())
    if shape and gpus and (missing := shape.not_known()):
        lines.append(f"memory: not known ({missing})")
    elif shape and gpus:
        need = memory_need(shape, context_tokens=server.context_tokens or 0,
                           parallel_slots=server.parallel_slots, kv_cache_type=server.kv_cache_type, gpus=len(gpus))
        lines.append(f"memory: {need.total_mib:,.0f} MiB needed (weights {need.weights_mib:,.0f}, KV cache "
                     f"{need.kv_mib:,.0f}, reserve {need.reserve_mib:,.0f}) of "
                     f"{sum(g.memory_total_mib for g in gpus):,} MiB on the pinned GPUs")
    latest = server.probes.exclude(build_info="").order_by("-at", "-pk").first()
    if latest:
        lines.append(f"llama.cpp build {latest.build_info} (probe of {latest.at:%Y-%m-%d %H:%M})")
        view = server_view(server, [])
        lines += [f"Warning: {w}" for w in build_warnings(view, latest.build_info, latest.model)]
    return lines
