"""Discover this machine's GPUs and NVLink boards through NVML (pynvml, from nvidia-ml-py), and record them.

``nvml_read`` reads each GPU (NVML index, UUID, PCI bus id, name, memory, compute capability, memory
bandwidth from bus width and clock) and each NVLink
(state, and the PCI bus id of the device at the other end). ``propose_boards`` forms boards as the connected
components of the NVLink graph; GPUs with no NVLink are proposed as PCIe boards, one per GPU model, since a
server may still split a model over PCIe within one host. ``discovery_apply`` records GPUs and links, creates
proposed boards only for GPUs in no board, and reports where the operator's boards differ; it deletes nothing.
Every function takes the NVML module as ``nvml`` (default: pynvml, looked up at call time) so tests can pass a
stand-in; errors are always pynvml's own classes.
"""

import re
from collections import defaultdict
from dataclasses import dataclass, field

import pynvml
from django.db import transaction
from pynvml import (
    NVML_FEATURE_ENABLED,
    NVML_NVLINK_MAX_LINKS,
    NVMLError,
    NVMLError_DriverNotLoaded,
    NVMLError_InvalidArgument,
    NVMLError_LibraryNotFound,
    NVMLError_NotSupported,
)

from matters.audit.services import audit_record
from pipeline.models import GPU, Board, Host, NVLink

from .bandwidth import nvml_bandwidth_gbs


class NvmlUnavailable(RuntimeError):
    """NVML could not start here (no NVIDIA driver, or no NVML library); the message says so plainly."""


@dataclass(frozen=True)
class FoundGpu:
    index: int
    uuid: str
    pci_bus_id: str
    name: str
    memory_total_mib: int
    compute_capability: str
    memory_bandwidth_gbs: float | None = None


@dataclass
class Found:
    """What NVML reported: GPUs, and NVLink lanes as {(local bus id, remote bus id): lanes} seen from each end."""

    gpus: list[FoundGpu] = field(default_factory=list)
    links: dict[tuple[str, str], int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def gpu_links(self) -> dict[tuple[int, int], int]:
        """NVLink lanes between pairs of GPUs, {(index a, index b): lanes} with a < b. Links to other devices
        (an NVSwitch) are left out here; :meth:`components` still follows them."""
        by_bus = {gpu.pci_bus_id: gpu.index for gpu in self.gpus}
        pairs: dict[tuple[int, int], int] = {}
        for (local, remote), lanes in self.links.items():
            if local in by_bus and remote in by_bus:
                key = tuple(sorted((by_bus[local], by_bus[remote])))
                pairs[key] = max(pairs.get(key, 0), lanes)
        return pairs

    def components(self) -> list[list[int]]:
        """Connected components of the NVLink graph as sorted lists of GPU indexes (a GPU with no NVLink is a
        component of one). Other devices on a link (an NVSwitch) join the GPUs they connect."""
        parent: dict[str, str] = {}

        def root(node: str) -> str:
            parent.setdefault(node, node)
            while parent[node] != node:
                parent[node] = parent[parent[node]]
                node = parent[node]
            return node

        for gpu in self.gpus:
            root(gpu.pci_bus_id)
        for local, remote in self.links:
            parent[root(local)] = root(remote)
        groups: dict[str, list[int]] = defaultdict(list)
        for gpu in self.gpus:
            groups[root(gpu.pci_bus_id)].append(gpu.index)
        return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])


@dataclass(frozen=True)
class ProposedBoard:
    name: str
    kind: str
    gpu_indexes: tuple[int, ...]


def normalize_bus_id(value) -> str:
    """NVML bus ids as one spelling, "00000000:3B:00.0" (domain of 8 hex digits, upper case)."""
    text = value.decode() if isinstance(value, bytes) else str(value)
    match = re.fullmatch(r"([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])", text.strip())
    if not match:
        return text.strip().upper()
    domain, bus, device, function = match.groups()
    return f"{int(domain, 16):08X}:{int(bus, 16):02X}:{int(device, 16):02X}.{function}"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_start(nvml=None) -> None:
    """Initialise NVML or raise NvmlUnavailable with a plain reason."""
    nvml = nvml or pynvml
    try:
        nvml.nvmlInit()
    except NVMLError_DriverNotLoaded as error:
        raise NvmlUnavailable(f"No NVIDIA driver is loaded on this machine (NVML: {error}).") from error
    except NVMLError_LibraryNotFound as error:
        raise NvmlUnavailable(
            f"This machine has no NVIDIA driver: NVML's library is not installed (NVML: {error})."
        ) from error
    except NVMLError as error:
        raise NvmlUnavailable(f"NVML could not start on this machine: {error}.") from error


def nvml_read(nvml=None) -> Found:
    """Read every GPU and NVLink of this machine. Raises NvmlUnavailable when NVML cannot start, and pynvml's
    NVMLError for a failure after that."""
    nvml = nvml or pynvml
    nvml_start(nvml)
    found = Found()
    try:
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
            bus_id = normalize_bus_id(nvml.nvmlDeviceGetPciInfo(handle).busId)
            found.gpus.append(FoundGpu(
                index=index, uuid=_text(nvml.nvmlDeviceGetUUID(handle)), pci_bus_id=bus_id,
                name=_text(nvml.nvmlDeviceGetName(handle)),
                memory_total_mib=nvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20,
                compute_capability=f"{major}.{minor}", memory_bandwidth_gbs=nvml_bandwidth_gbs(nvml, handle),
            ))
            _read_links(nvml, handle, index, bus_id, found)
    finally:
        nvml.nvmlShutdown()
    return found


def _read_links(nvml, handle, index: int, bus_id: str, found: Found) -> None:
    for link in range(NVML_NVLINK_MAX_LINKS):
        try:
            if nvml.nvmlDeviceGetNvLinkState(handle, link) != NVML_FEATURE_ENABLED:
                continue
            remote = normalize_bus_id(nvml.nvmlDeviceGetNvLinkRemotePciInfo(handle, link).busId)
        except NVMLError_NotSupported:
            if link == 0:
                found.notes.append(f"GPU {index}: no NVLink (NVML: not supported).")
            return
        except NVMLError_InvalidArgument:
            return  # past this GPU's last link
        found.links[(bus_id, remote)] = found.links.get((bus_id, remote), 0) + 1


def propose_boards(found: Found) -> list[ProposedBoard]:
    """Boards for ``found``: each NVLink component of two or more GPUs (a pair or a group), then the GPUs
    without NVLink as one PCIe board per GPU model."""
    names = {gpu.index: gpu.name for gpu in found.gpus}
    proposed, alone = [], defaultdict(list)
    for component in found.components():
        if len(component) == 1:
            alone[names[component[0]]].append(component[0])
            continue
        indexes = ",".join(map(str, component))
        if len(component) == 2:
            proposed.append(ProposedBoard(f"NVLink pair {indexes}", "nvlink_pair", tuple(component)))
        else:
            proposed.append(ProposedBoard(f"NVLink group {indexes}", "nvlink_group", tuple(component)))
    for name, indexes in alone.items():
        proposed.append(ProposedBoard(f"PCIe {name} {','.join(map(str, indexes))}", "pcie", tuple(indexes)))
    return proposed


@dataclass
class DiscoveryReport:
    """What ``discovery_apply`` did (or, with ``dry_run``, would do): one line per change or difference."""

    host: str
    lines: list[str] = field(default_factory=list)
    boards_created: int = 0
    gpus_created: int = 0


def discovery_apply(*, host_name: str, found: Found, dry_run: bool = False, actor=None) -> DiscoveryReport:
    """Record ``found`` under the host named ``host_name`` (created if missing): GPU facts and NVLink links are
    created or updated, proposed boards created for GPUs in no board; boards that differ from the NVLink graph
    are reported, never changed. Nothing is deleted. With ``dry_run`` nothing is written. What changed is one
    ``topology.discover`` entry in the system audit chain, by ``actor`` (None: the command line, "system")."""
    report = DiscoveryReport(host=host_name)
    with transaction.atomic():
        host, created = Host.objects.get_or_create(name=host_name)
        if created:
            report.lines.append(f"host {host_name}: created")
        by_index: dict[int, GPU] = {}
        for gpu in found.gpus:
            facts = {"uuid": gpu.uuid, "pci_bus_id": gpu.pci_bus_id, "name": gpu.name,
                     "memory_total_mib": gpu.memory_total_mib, "compute_capability": gpu.compute_capability,
                     "memory_bandwidth_gbs": gpu.memory_bandwidth_gbs}
            record = (GPU.objects.filter(host=host, uuid=gpu.uuid).first() if gpu.uuid else None) or \
                GPU.objects.filter(host=host, index=gpu.index).first()
            if record is None:
                record = GPU.objects.create(host=host, index=gpu.index, **facts)
                report.gpus_created += 1
                report.lines.append(f"GPU {gpu.index}: added ({gpu.name}, {gpu.memory_total_mib:,} MiB, "
                                    f"compute capability {gpu.compute_capability}, {gpu.pci_bus_id})")
            elif any(getattr(record, k) != v for k, v in facts.items()) or record.index != gpu.index:
                GPU.objects.filter(pk=record.pk).update(index=gpu.index, **facts)
                report.lines.append(f"GPU {gpu.index}: updated from NVML")
            by_index[gpu.index] = record
        for (a, b), lanes in sorted(found.gpu_links().items()):
            _, made = NVLink.objects.update_or_create(gpu_a=by_index[a], gpu_b=by_index[b], defaults={"links": lanes})
            if made:
                report.lines.append(f"NVLink GPU {a} <-> GPU {b}: {lanes} link(s)")
        for board in propose_boards(found):
            _apply_board(host, board, by_index, report)
        for note in found.notes:
            report.lines.append(note)
        if dry_run:
            transaction.set_rollback(True)
        elif report.lines:
            audit_record(action="topology.discover", actor=actor, obj=host,
                         detail={"host": host_name, "changes": {"discovered": ["", "; ".join(report.lines)[:2000]]}})
    return report


def _apply_board(host, proposal: ProposedBoard, by_index, report: DiscoveryReport) -> None:
    gpus = [by_index[i] for i in proposal.gpu_indexes]
    wanted = {gpu.pk for gpu in gpus}
    existing = Board.objects.filter(gpus__in=gpus).distinct().prefetch_related("gpus")
    if not existing:
        name = proposal.name
        if Board.objects.filter(host=host, name=name).exists():
            name = f"{name} (discovered)"
        board = Board.objects.create(host=host, name=name, kind=proposal.kind)
        board.gpus.set(gpus)
        report.boards_created += 1
        report.lines.append(f"board {name}: proposed ({proposal.kind}, GPUs {_indexes(proposal.gpu_indexes)})")
        return
    for board in existing:
        have = {gpu.pk for gpu in board.gpus.all()}
        if have == wanted:
            report.lines.append(f"board {board.name}: matches NVLink (GPUs {_indexes(proposal.gpu_indexes)})")
        else:
            indexes = sorted(gpu.index for gpu in board.gpus.all())
            report.lines.append(
                f"board {board.name}: holds GPUs {_indexes(indexes)} but discovery found "
                f"{proposal.name} (GPUs {_indexes(proposal.gpu_indexes)}); left as configured"
            )


def _indexes(indexes) -> str:
    return ",".join(map(str, indexes))


@dataclass(frozen=True)
class GpuStat:
    """Live figures for one GPU: memory used and total (MiB) and utilization (percent, last sample period)."""

    uuid: str
    index: int
    memory_used_mib: int
    memory_total_mib: int
    utilization_pct: int | None


def gpu_stats(nvml=None) -> tuple[dict[str, GpuStat], str]:
    """Return ({uuid: GpuStat} for this machine's GPUs, "") or ({}, the reason NVML is unavailable)."""
    nvml = nvml or pynvml
    try:
        nvml_start(nvml)
    except NvmlUnavailable as error:
        return {}, str(error)
    stats = {}
    try:
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            try:
                utilization = nvml.nvmlDeviceGetUtilizationRates(handle).gpu
            except NVMLError_NotSupported:
                utilization = None
            uuid = _text(nvml.nvmlDeviceGetUUID(handle))
            stats[uuid] = GpuStat(uuid=uuid, index=index, memory_used_mib=memory.used // 2**20,
                                  memory_total_mib=memory.total // 2**20, utilization_pct=utilization)
    finally:
        nvml.nvmlShutdown()
    return stats, ""
