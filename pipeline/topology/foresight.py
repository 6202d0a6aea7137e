"""Topology foresight: each server's decode-speed forecast and its llama.cpp build check, for the rules table,
the topology page, the admin and the probes. The arithmetic lives in :mod:`.forecast`, :mod:`.bandwidth` and
:mod:`.builds`; this module joins them to the topology's snapshot views. What it reads from the database (the
learned factors, a record's forecast) is in :mod:`.selectors`.

Efficiency factors are learned per key ``backend | GPU model(s) | dense or moe`` (``cpu`` for a server with no
pinned GPU): the median of measured decode / ceiling over the latest :data:`EFFICIENCY_PROBES` probes with that key.
"""

import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from .bandwidth import Bandwidth, board_bandwidth, cpu_bandwidth
from .builds import build_number, build_problems, family_text, problem_message, unchecked_message
from .forecast import Forecast, NotKnown, forecast, model_kind
from .gguf_header import GgufHeaderError, ModelShape, header_read
from .snapshot import ServerView, Snapshot

# Latest probes per efficiency key that the learned factor is the median of.
EFFICIENCY_PROBES = 20


@dataclass(frozen=True)
class Foresight:
    """A server's forecast (None when it cannot be made; ``reason`` says why) and its efficiency key."""

    forecast: Forecast | None
    reason: str = ""
    efficiency_key: str = ""


def efficiency_key(backend: str, bandwidth: Bandwidth, shape: ModelShape) -> str:
    return f"{backend} | {bandwidth.key} | {model_kind(shape)}"


def view_forecast(snapshot: Snapshot, server: ServerView) -> Foresight:
    """The forecast of ``server`` on its pinned GPUs (or its host's CPU when none is pinned)."""
    if server.shape is None:
        return Foresight(None, "no GGUF header read yet (give the model path on this machine, or upload its header)")
    gpus = [snapshot.gpus[g] for g in server.gpu_ids if g in snapshot.gpus]
    if gpus and server.gpu_layers:
        bandwidth, why = board_bandwidth([(g.name, g.memory_bandwidth_gbs) for g in gpus])
    else:
        bandwidth, why = cpu_bandwidth(settings.LAWDESK_CPU_MEMORY_BANDWIDTH_GBS)
    if bandwidth is None:
        return Foresight(None, why)
    key = efficiency_key(server.backend, bandwidth, server.shape)
    learned = snapshot.efficiencies.get(key)
    efficiency, source = (learned[0], f"learned from {learned[1]} probe(s)") if learned else (None, "")
    kv_type = server.kv_cache_type if server.kv_cache_type else "f16"
    try:
        result = forecast(server.shape, bandwidth_gbs=bandwidth.gbs, bandwidth_source=bandwidth.source,
                          kv_cache_type=kv_type, efficiency=efficiency, efficiency_source=source)
    except NotKnown as missing:
        return Foresight(None, f"not known: {missing}", efficiency_key=key)
    except (KeyError, ValueError) as error:
        return Foresight(None, f"cannot forecast: {error}")
    return Foresight(result, efficiency_key=key)


def server_family(server: ServerView, reported_model: str = "") -> str:
    """What known-problem families are matched against for ``server``: its header's architecture and name, its
    model name and path, and the model the server itself reported (``/props``)."""
    shape = server.shape
    return family_text(shape.architecture if shape else "", shape.name if shape else "", server.model_name,
                       server.model_path, reported_model)


def build_warnings(server: ServerView, build_info: str | None = None, reported_model: str = "") -> list[str]:
    """Warnings for the known problems of ``server``'s llama.cpp build (its latest probe's, or ``build_info``),
    or the one warning that its build cannot be checked (it reported a build without a number)."""
    build_info = build_info if build_info is not None else server.build_info
    if server.backend != "llama.cpp" or not build_info:
        return []
    if build_number(build_info) is None:
        return [unchecked_message(build_info)]
    family = server_family(server, reported_model)
    return [problem_message(p, build_info) for p in build_problems(build_info, family)]


# An uploaded header is refused above this size: the header and tensor infos of the largest models take a few
# megabytes (most of it the tokenizer's vocabulary), so the first 64 MiB of a GGUF always hold them.
HEADER_UPLOAD_MAX_BYTES = 256 * 2**20


def header_from_path(path: str) -> ModelShape:
    """Read the header of the GGUF at ``path`` on this machine. GgufHeaderError with a plain reason."""
    if not path or not Path(path).is_absolute():
        raise GgufHeaderError(f"{path or 'The model path'}: give the GGUF's absolute path on this machine.")
    return header_read(path)


def header_from_upload(upload) -> ModelShape:
    """Read an uploaded GGUF header (a Django UploadedFile kept on disk). GgufHeaderError with a plain reason.
    The first split of a split model reads alone: the other splits are named as needed (``splits_missing``)."""
    name = getattr(upload, "name", "the uploaded file")
    if upload.size > HEADER_UPLOAD_MAX_BYTES:
        raise GgufHeaderError(f"{name} is {upload.size / 2**20:,.0f} MiB: upload only the header, for example the "
                              "first 64 MiB (head -c 64M model.gguf > header.gguf).")
    temporary = getattr(upload, "temporary_file_path", None)
    if temporary is None:
        with tempfile.NamedTemporaryFile(suffix=".gguf") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
            handle.flush()
            return header_read(handle.name, source=f"uploaded header {name}", file_name=name, beside=False)
    return header_read(temporary(), source=f"uploaded header {name}", file_name=name, beside=False)
