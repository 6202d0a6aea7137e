"""Memory bandwidth of a GPU (GB/s, 10^9 bytes per second), the figure decode speed is bounded by.

First the table below, matched against the name NVML reports, each figure from the vendor's datasheet; where the
table has no entry, NVML's own figures, read at discovery: memory bus width (bits, ``nvmlDeviceGetMemoryBusWidth``)
x the maximum memory clock (MHz, ``nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)``) x 2 transfers per clock / 8 bits.
The factor 2 is how NVML reports both HBM2 and GDDR6X clocks: it gives 898 GB/s for a V100 (4096 bits, 877 MHz),
936 GB/s for an RTX 3090 (384 bits, 9751 MHz) and 1555 GB/s for an A100 40GB (5120 bits, 1215 MHz), each the
datasheet figure. A CPU server has no GPU: its bandwidth is the host's, from ``LAWDESK_CPU_MEMORY_BANDWIDTH_GBS``.
"""

import re
from dataclasses import dataclass

from pynvml import NVML_CLOCK_MEM, NVMLError

# (pattern on the NVML name, GB/s, source). Specific names before general ones: the first match wins.
BANDWIDTH_TABLE: tuple[tuple[str, float, str], ...] = (
    (r"V100S", 1134.0, "NVIDIA V100S datasheet: 1,134 GB/s"),
    (r"V100.*SXM", 900.0, "NVIDIA Tesla V100 datasheet: V100 SXM2 900 GB/s"),
    (r"V100.*PCI", 900.0, "NVIDIA Tesla V100 datasheet: V100 PCIe 900 GB/s"),
    (r"V100", 900.0, "NVIDIA Tesla V100 datasheet: 900 GB/s (SXM2 and PCIe)"),
    (r"RTX 3090 Ti", 1008.0, "NVIDIA GeForce RTX 3090 Ti specifications: 21 Gbps x 384 bits = 1,008 GB/s"),
    (r"RTX 3090", 936.0, "NVIDIA GeForce RTX 3090 specifications: 19.5 Gbps x 384 bits = 936 GB/s"),
    (r"RTX 4090", 1008.0, "NVIDIA GeForce RTX 4090 specifications: 21 Gbps x 384 bits = 1,008 GB/s"),
    (r"RTX 5090", 1792.0, "NVIDIA GeForce RTX 5090 specifications: 28 Gbps x 512 bits = 1,792 GB/s"),
    (r"RTX 6000 Ada", 960.0, "NVIDIA RTX 6000 Ada datasheet: 960 GB/s"),
    (r"RTX A6000", 768.0, "NVIDIA RTX A6000 datasheet: 768 GB/s"),
    (r"A100.*80GB.*PCI", 1935.0, "NVIDIA A100 datasheet: A100 80GB PCIe 1,935 GB/s"),
    (r"A100.*80GB", 2039.0, "NVIDIA A100 datasheet: A100 80GB SXM 2,039 GB/s"),
    (r"A100", 1555.0, "NVIDIA A100 datasheet: A100 40GB 1,555 GB/s"),
    (r"H100 NVL", 3900.0, "NVIDIA H100 datasheet: H100 NVL 3.9 TB/s"),
    (r"H100.*PCI", 2000.0, "NVIDIA H100 datasheet: H100 PCIe 2 TB/s"),
    (r"H100", 3350.0, "NVIDIA H100 datasheet: H100 SXM 3.35 TB/s"),
    (r"H200", 4800.0, "NVIDIA H200 datasheet: 4.8 TB/s (SXM and NVL)"),
    (r"L40", 864.0, "NVIDIA L40 / L40S datasheets: 864 GB/s"),
    (r"\bL4\b", 300.0, "NVIDIA L4 datasheet: 300 GB/s"),
    (r"\bA40\b", 696.0, "NVIDIA A40 datasheet: 696 GB/s"),
    (r"\bA10\b", 600.0, "NVIDIA A10 datasheet: 600 GB/s"),
    (r"\bT4\b", 320.0, "NVIDIA T4 datasheet: 320 GB/s"),
    (r"P100", 732.0, "NVIDIA Tesla P100 datasheet: 732 GB/s (16 GB)"),
    (r"P40", 347.0, "NVIDIA Tesla P40 datasheet: 347 GB/s"),
)

CPU_KEY = "cpu"


@dataclass(frozen=True)
class Bandwidth:
    """A bandwidth in GB/s with where it comes from (``source``); ``key`` groups probes for the efficiency factor
    (the GPU model's name, or ``cpu``)."""

    gbs: float
    source: str
    key: str


def table_bandwidth(gpu_name: str) -> Bandwidth | None:
    """The table's figure for a GPU named ``gpu_name`` (as NVML reports it), or None."""
    for pattern, gbs, source in BANDWIDTH_TABLE:
        if re.search(pattern, gpu_name, re.IGNORECASE):
            return Bandwidth(gbs=gbs, source=source, key=gpu_name)
    return None


def nvml_bandwidth_gbs(nvml, handle) -> float | None:
    """NVML's figure for one GPU (bus width x max memory clock x 2 / 8), or None where NVML cannot say."""
    try:
        bus_bits = nvml.nvmlDeviceGetMemoryBusWidth(handle)
        clock_mhz = nvml.nvmlDeviceGetMaxClockInfo(handle, NVML_CLOCK_MEM)
    except NVMLError:
        return None
    if not bus_bits or not clock_mhz:
        return None
    return round(bus_bits / 8 * clock_mhz * 1e6 * 2 / 1e9, 1)


def gpu_bandwidth(gpu_name: str, nvml_gbs: float | None) -> Bandwidth | None:
    """The table's figure for ``gpu_name``, else NVML's ``nvml_gbs`` (recorded on the GPU at discovery), else None."""
    found = table_bandwidth(gpu_name)
    if found:
        return found
    if nvml_gbs:
        return Bandwidth(gbs=nvml_gbs, source="NVML: memory bus width x max memory clock x 2", key=gpu_name)
    return None


def board_bandwidth(gpus: list[tuple[str, float | None]]) -> tuple[Bandwidth | None, str]:
    """The bandwidth one generated token sees on a server's GPUs, given as (NVML name, NVML GB/s or None) pairs;
    returns (Bandwidth, "") or (None, why not).

    llama-server's default ``--split-mode layer`` puts whole layers on each GPU and runs them one GPU after
    another for a single sequence, so bandwidths do not add up: with the weights spread evenly the time per token
    is the sum of each share over its GPU's bandwidth, i.e. the harmonic mean of the GPUs' figures.
    """
    if not gpus:
        return None, "no GPU is pinned"
    figures = []
    for name, nvml_gbs in gpus:
        found = gpu_bandwidth(name, nvml_gbs)
        if found is None:
            return None, (f"no memory bandwidth is known for {name} (not in the table, and NVML gave none: run "
                          "GPU discovery on its host)")
        figures.append(found)
    gbs = len(figures) / sum(1 / f.gbs for f in figures)
    names = sorted({f.key for f in figures})
    sources = sorted({f.source for f in figures})
    return Bandwidth(gbs=round(gbs, 1), source="; ".join(sources), key=" + ".join(names)), ""


def cpu_bandwidth(gbs: float | None) -> tuple[Bandwidth | None, str]:
    """The host memory bandwidth for a server with no GPU (``LAWDESK_CPU_MEMORY_BANDWIDTH_GBS``)."""
    if not gbs:
        return None, "a CPU server's forecast needs the host's memory bandwidth: set LAWDESK_CPU_MEMORY_BANDWIDTH_GBS"
    return Bandwidth(gbs=gbs, source="LAWDESK_CPU_MEMORY_BANDWIDTH_GBS", key=CPU_KEY), ""
