"""An NVML stand-in with the pynvml calls discovery uses, reproducing the two real hosts of the deployment and
NVML's failures. Errors are pynvml's own exception classes, raised where the real library raises them."""

from dataclasses import dataclass, field
from types import SimpleNamespace

import pynvml

GIB = 2**30


@dataclass
class FakeGpu:
    name: str
    memory_gib: int
    capability: tuple[int, int]
    bus_id: str
    uuid: str
    # One entry per NVLink: (state, remote bus id as NVML spells it); None means the GPU has no NVLink at all.
    links: list[tuple[int, str]] | None = None
    used_gib: float = 0.0
    utilization: int = 0
    # NVML's memory bus width (bits) and max memory clock (MHz); None: NVML says "not supported".
    bus_bits: int | None = None
    memory_clock_mhz: int | None = None


@dataclass
class FakeNvml:
    gpus: list[FakeGpu] = field(default_factory=list)
    init_error: type | None = None
    calls: list[str] = field(default_factory=list)

    def nvmlInit(self) -> None:
        self.calls.append("init")
        if self.init_error is not None:
            raise self.init_error()

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        return self.gpus[index]

    def nvmlDeviceGetName(self, gpu: FakeGpu) -> str:
        return gpu.name

    def nvmlDeviceGetUUID(self, gpu: FakeGpu) -> str:
        return gpu.uuid

    def nvmlDeviceGetPciInfo(self, gpu: FakeGpu):
        return SimpleNamespace(busId=gpu.bus_id.encode())  # the real struct's busId is bytes

    def nvmlDeviceGetMemoryInfo(self, gpu: FakeGpu):
        total = gpu.memory_gib * GIB
        used = int(gpu.used_gib * GIB)
        return SimpleNamespace(total=total, used=used, free=total - used)

    def nvmlDeviceGetMemoryBusWidth(self, gpu: FakeGpu) -> int:
        if gpu.bus_bits is None:
            raise pynvml.NVMLError_NotSupported()
        return gpu.bus_bits

    def nvmlDeviceGetMaxClockInfo(self, gpu: FakeGpu, clock_type: int) -> int:
        if gpu.memory_clock_mhz is None or clock_type != pynvml.NVML_CLOCK_MEM:
            raise pynvml.NVMLError_NotSupported()
        return gpu.memory_clock_mhz

    def nvmlDeviceGetUtilizationRates(self, gpu: FakeGpu):
        return SimpleNamespace(gpu=gpu.utilization, memory=0)

    def nvmlDeviceGetCudaComputeCapability(self, gpu: FakeGpu) -> tuple[int, int]:
        return gpu.capability

    def nvmlDeviceGetNvLinkState(self, gpu: FakeGpu, link: int) -> int:
        if gpu.links is None:
            raise pynvml.NVMLError_NotSupported()
        if link >= len(gpu.links):
            raise pynvml.NVMLError_InvalidArgument()
        return gpu.links[link][0]

    def nvmlDeviceGetNvLinkRemotePciInfo(self, gpu: FakeGpu, link: int):
        if gpu.links is None:
            raise pynvml.NVMLError_NotSupported()
        return SimpleNamespace(busId=gpu.links[link][1].encode())


def _bus(index: int) -> str:
    return f"00000000:{0x1A + index * 8:02X}:00.0"


def threadripper() -> FakeNvml:
    """Host 1: twelve V100-SXM2 (7.0). NVLink groups {4,5,8,9} and {6,7,10,11} (each GPU two lanes to each of the
    other three: all six of its links), pairs {0,1} and {2,3} (two active lanes, the other four down); GPU 3 has
    16 GB. Some remote bus ids come in the 4-digit-domain, lower-case spelling."""
    groups = [(4, 5, 8, 9), (6, 7, 10, 11), (0, 1), (2, 3)]
    links: dict[int, list[tuple[int, str]]] = {}
    for group in groups:
        for gpu in group:
            others = [o for o in group if o != gpu]
            if len(group) == 4:
                links[gpu] = [(1, _bus(o)) for o in others for _ in range(2)]
            else:
                other = others[0]
                short = _bus(other).replace("00000000:", "0000:").lower()
                links[gpu] = [(1, _bus(other)), (1, short)] + [(0, "00000000:00:00.0")] * 4
    return FakeNvml(gpus=[
        FakeGpu(name="Tesla V100-SXM2-16GB" if i == 3 else "Tesla V100-SXM2-32GB", memory_gib=16 if i == 3 else 32,
                capability=(7, 0), bus_id=_bus(i), uuid=f"GPU-tr-{i:02d}", links=links[i],
                used_gib=10.5 if i in (4, 5, 8, 9) else 0.0, utilization=37 if i == 4 else 0)
        for i in range(12)
    ])


def epyc() -> FakeNvml:
    """Host 2: four RTX 3090 (8.6, 24 GB) and two V100-PCIe (7.0, 32 GB); no NVLink (NVML: not supported)."""
    gpus = [FakeGpu(name="NVIDIA GeForce RTX 3090", memory_gib=24, capability=(8, 6), bus_id=_bus(i),
                    uuid=f"GPU-ep-{i}") for i in range(4)]
    gpus += [FakeGpu(name="Tesla V100-PCIE-32GB", memory_gib=32, capability=(7, 0), bus_id=_bus(i),
                     uuid=f"GPU-ep-{i}") for i in (4, 5)]
    return FakeNvml(gpus=gpus)


def no_driver(error=pynvml.NVMLError_DriverNotLoaded) -> FakeNvml:
    """A machine whose NVML cannot start: DriverNotLoaded, or LibraryNotFound where no driver is installed."""
    return FakeNvml(init_error=error)
