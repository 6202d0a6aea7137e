"""Reads for the topology page: hosts with their boards, GPUs (with live NVML figures where this machine has
them), links and servers; each server's latest probe and its decode-speed history, its forecast and llama.cpp
build warnings, and its slots and queue now (the stage runs on its slots, those waiting for it in queue order);
the broken rules."""

from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from matters.models import AuditEntry
from pipeline.llm.hosts import SETTING
from pipeline.models import Host, ModelServer, NVLink, ProbeResult, RoleAssignment
from pipeline.own_servers import model_hosts_allowlist
from pipeline.stages.queue import ServerQueue, server_queues

from .discover import gpu_stats
from .foresight import Foresight, build_warnings, view_forecast
from .launch import launch_line
from .rules import Problem, problems
from .selectors import snapshot_load
from .svg import BoardGroup, GpuBox, HostBand, ServerTag

HISTORY_POINTS = 100


@dataclass
class ServerRow:
    """One server for the page: the record, its latest probe (or None), launch line, speed history, forecast
    (``foresight``), latest llama.cpp build and that build's known-problem warnings, and ``queue``: its slots and
    queue now (None for a disabled server, which admits nothing)."""

    server: object
    latest: object
    roles: list[str]
    launch: str
    history: list
    foresight: Foresight | None = None
    build_info: str = ""
    build_warnings: tuple[str, ...] = ()
    address_refusal: str = ""
    health: "Health | None" = None
    queue: ServerQueue | None = None


@dataclass(frozen=True)
class Health:
    """A server's state for the page: ``status`` of its latest probe (None: never probed); ``line`` the figures
    behind it (the decode and the floor, or when the speed was last measured for a busy server); ``slow`` the
    banner's sentence when its latest measured decode is under its floor, else ""; ``slots`` busy (True) or idle
    per slot at the latest probe, read from ``slots_source``."""

    status: str | None
    line: str = ""
    slow: str = ""
    slots: tuple[bool, ...] = ()
    slots_source: str = ""


def servers_with_latest_probe():
    """ModelServers annotated with ``probe_status``, ``probe_at`` and ``probe_slots`` of their latest probe, and
    ``probe_decode_tok_s`` and ``measured_at`` of their latest probe that measured something (skipped probes
    count for status only)."""
    latest = ProbeResult.objects.filter(server=OuterRef("pk")).order_by("-at", "-pk")
    measured = latest.filter(skipped=False, decode_tok_s__isnull=False)
    return ModelServer.objects.annotate(
        probe_status=Subquery(latest.values("status")[:1]),
        probe_at=Subquery(latest.values("at")[:1]),
        probe_slots=Subquery(latest.values("slots")[:1]),
        probe_decode_tok_s=Subquery(measured.values("decode_tok_s")[:1]),
        measured_at=Subquery(measured.values("at")[:1]),
    )


def server_health(server) -> Health:
    """The :class:`Health` of a server annotated by :func:`servers_with_latest_probe`. Slow is judged on the
    latest measurement, so a slow server stays slow while busy probes are skipped, and is never shown as up."""
    status = server.probe_status
    if status is None:
        return Health(None)
    slots = server.probe_slots if isinstance(server.probe_slots, dict) else {}
    busy = tuple(bool(b) for b in slots.get("busy") or ())
    decode, floor = server.probe_decode_tok_s, server.decode_floor
    measured = (f"{decode:.1f} tok/s at {timezone.localtime(server.measured_at):%Y-%m-%d %H:%M}"
                if decode is not None else "")
    slow = ""
    if status in ("slow", "busy") and decode is not None and decode < floor:
        slow = f"{server.name} is slow: decode {decode:.1f} tok/s, under its floor of {floor:g} tok/s ({measured})."
    if status == "busy":
        line = (f"every slot busy, speed not measured; last measured {measured}" if measured
                else "every slot busy, speed not measured; never measured")
    elif status == "slow" and decode is not None:
        line = f"decode {decode:.1f} tok/s, under its floor of {floor:g} tok/s"
    elif status == "up" and decode is not None:
        line = f"decode {decode:.1f} tok/s (floor {floor:g})"
    else:
        line = ""
    return Health(status, line=line, slow=slow, slots=busy, slots_source=str(slots.get("source") or ""))


def topology_overview(*, nvml=None) -> dict:
    """Everything the topology page shows: ``hosts`` (svg HostBands), ``servers`` (ServerRows), ``problems``
    (rules.Problem list), ``gpu_note`` (why live GPU figures are missing, or ""), ``slow_servers`` (the banner's
    sentence for each enabled server measured under its floor)."""
    stats, gpu_note = gpu_stats(nvml)
    snapshot = snapshot_load()
    views = {view.id: view for view in snapshot.servers}
    found: list[Problem] = problems(snapshot)
    broken_boards = {b for p in found for b in p.boards}
    servers = list(servers_with_latest_probe().prefetch_related("gpus").select_related("host"))
    roles = defaultdict(list)
    for assignment in RoleAssignment.objects.order_by("role"):
        roles[assignment.server_id].append(assignment.role)
    links = defaultdict(list)
    for link in NVLink.objects.select_related("gpu_a", "gpu_b"):
        links[link.gpu_a.host_id].append((link.gpu_a.index, link.gpu_b.index, link.links, link.gpu_a_id))
    bands = []
    for host in Host.objects.prefetch_related("boards__gpus"):
        groups = []
        for board in host.boards.all():
            gpus = sorted(board.gpus.all(), key=lambda g: g.index)
            ids = {g.pk for g in gpus}
            indexes = {g.index for g in gpus}
            pinned = [s for s in servers if {g.pk for g in s.gpus.all()} & ids]
            groups.append(BoardGroup(
                name=board.name, kind_label=board.get_kind_display(), broken=board.pk in broken_boards,
                gpus=[_box(g, stats) for g in gpus],
                links=[(a, b, n) for a, b, n, _ in links[host.pk] if a in indexes and b in indexes],
                servers=[ServerTag(name=s.name, roles=roles[s.pk], status=s.probe_status,
                                   decode_tok_s=s.probe_decode_tok_s, enabled=s.enabled) for s in pinned],
            ))
        bands.append(HostBand(name=host.name, address=host.address, boards=groups))
    history = defaultdict(list)
    for result in ProbeResult.objects.filter(skipped=False, decode_tok_s__isnull=False).order_by("-at")[
            :HISTORY_POINTS * max(1, len(servers))]:
        if len(history[result.server_id]) < HISTORY_POINTS:
            history[result.server_id].append((result.at, result.decode_tok_s))
    queues = server_queues()
    rows = [ServerRow(server=s, latest=s.probe_status, roles=roles[s.pk], launch=launch_line(s),
                      history=history[s.pk], foresight=view_forecast(snapshot, views[s.pk]),
                      build_info=views[s.pk].build_info, build_warnings=tuple(build_warnings(views[s.pk])),
                      address_refusal=s.address_refusal(), health=server_health(s), queue=queues.get(s.pk))
            for s in servers]
    slow = [row.health.slow for row in rows if row.health.slow and row.server.enabled]
    return {"hosts": bands, "servers": rows, "problems": found, "gpu_note": gpu_note, "slow_servers": slow,
            "probe_note": probe_note(servers), **evidence_destinations()}


def evidence_destinations() -> dict:
    """Where evidence may go, for the page: ``allowlist`` (the allowed host:port pairs in words) and
    ``allowlist_warning`` (a setting that cannot be read, or loopback hosts listed without a port, else "")."""
    try:
        allowlist = model_hosts_allowlist()
    except ValueError as error:
        return {"allowlist": "nothing", "allowlist_warning": f"{error} Nothing is sent to any model server."}
    loose = allowlist.loopback_without_port()
    warning = (f"{SETTING} allows every port of {', '.join(loose)}: any account on this machine can listen on a "
               "loopback port and would receive evidence. List each server as host:port." if loose else "")
    return {"allowlist": allowlist.describe(), "allowlist_warning": warning}


# A periodic probe this many intervals late means no worker takes the ``probes`` queue.
PROBE_LATE_INTERVALS = 3


def probe_note(servers, *, now=None) -> str:
    """Why the health and tok/s shown may be old, or "": when the newest probe of the enabled ``servers``
    (annotated by :func:`servers_with_latest_probe`) is older than PROBE_LATE_INTERVALS times
    LAWDESK_PROBE_INTERVAL_S, the periodic probe is not running (no worker takes the ``probes`` queue, which
    ``make run`` starts and an operator starting workers by hand must start too)."""
    enabled = [server for server in servers if server.enabled]
    if not enabled:
        return ""
    interval = settings.LAWDESK_PROBE_INTERVAL_S
    now = now or timezone.now()
    times = [server.probe_at for server in enabled if server.probe_at is not None]
    if times and (now - max(times)).total_seconds() <= PROBE_LATE_INTERVALS * interval:
        return ""
    since = (f"The newest probe is {int((now - max(times)).total_seconds() // 60)} min old" if times
             else "No server has been probed yet")
    return (f"{since}, and probes should run every {max(1, interval // 60)} min: the health and tok/s below may be "
            "old. Is a worker taking the probes queue? `make run` starts one; by hand: "
            "`manage.py db_worker --queue-name probes`. \"Probe all servers now\" checks them once.")


def _box(gpu, stats) -> GpuBox:
    live = stats.get(gpu.uuid) if gpu.uuid else None
    return GpuBox(index=gpu.index, name=gpu.name, memory_total_mib=gpu.memory_total_mib,
                  memory_used_mib=live.memory_used_mib if live else None,
                  utilization_pct=live.utilization_pct if live else None)


def topology_changes(*, limit: int = 30) -> list[dict]:
    """The latest ``limit`` topology entries of the system audit chain, newest first, each as ``{"entry",
    "lines"}`` where ``lines`` reads "field: old -> new" (inline rows and key changes included)."""
    rows = []
    entries = AuditEntry.objects.filter(chain="system", action__startswith="topology.").order_by("-seq")[:limit]
    for entry in entries:
        detail = entry.detail or {}
        lines = [_change_line(field, change) for field, change in (detail.get("changes") or {}).items()]
        for inline in detail.get("inlines") or []:
            if "deleted" in inline:
                lines.append(f"{inline['model']} {inline['deleted']}: deleted")
            for field, change in (inline.get("changes") or {}).items():
                lines.append(f"{inline['model']} {inline.get('object', '')}: {_change_line(field, change)}")
        for key in ("api_key", "out_of_service"):
            if detail.get(key):
                lines.append(f"{key.replace('_', ' ')}: {detail[key]}")
        rows.append({"entry": entry, "object": detail.get("object") or detail.get("server") or detail.get("host", ""),
                     "lines": lines})
    return rows


def _change_line(field: str, change) -> str:
    old, new = change if isinstance(change, (list, tuple)) and len(change) == 2 else ("", change)
    show = (lambda value: ", ".join(value) if isinstance(value, list) else str(value))  # noqa: E731
    return f"{field}: {show(old) or '(none)'} -> {show(new) or '(none)'}"
