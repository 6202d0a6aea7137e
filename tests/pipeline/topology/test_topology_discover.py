"""Discovery through NVML: GPUs and NVLink read, boards formed as connected components of the NVLink graph,
operator configuration never deleted, NVML failures said plainly with nothing changed."""

import pynvml
import pytest
from django.core.management import CommandError, call_command

from pipeline.models import GPU, Board, Host, NVLink
from pipeline.topology import discover
from pipeline.topology.discover import (
    NvmlUnavailable,
    discovery_apply,
    gpu_stats,
    normalize_bus_id,
    nvml_read,
    propose_boards,
)
from tests.support.fake_nvml import epyc, no_driver, threadripper

pytestmark = pytest.mark.django_db


def board_sets(host_name: str) -> dict[str, tuple[str, list[int]]]:
    return {
        board.name: (board.kind, sorted(gpu.index for gpu in board.gpus.all()))
        for board in Board.objects.filter(host__name=host_name)
    }


def test_the_twelve_v100s_form_the_four_boards():
    found = nvml_read(threadripper())
    assert found.components() == [[0, 1], [2, 3], [4, 5, 8, 9], [6, 7, 10, 11]]
    assert found.gpu_links()[(4, 5)] == 2 and found.gpu_links()[(0, 1)] == 2  # lanes, not link records
    assert (2, 4) not in found.gpu_links()
    report = discovery_apply(host_name="threadripper", found=found)
    assert report.boards_created == 4 and report.gpus_created == 12
    assert sorted(board_sets("threadripper").values()) == [
        ("nvlink_group", [4, 5, 8, 9]), ("nvlink_group", [6, 7, 10, 11]),
        ("nvlink_pair", [0, 1]), ("nvlink_pair", [2, 3]),
    ]
    small = GPU.objects.get(host__name="threadripper", index=3)
    assert (small.memory_total_mib, small.compute_capability, small.uuid) == (16384, "7.0", "GPU-tr-03")
    assert small.pci_bus_id == "00000000:32:00.0"
    assert NVLink.objects.count() == 6 + 6 + 1 + 1  # every pair within each group of four, and the two pairs


def test_pcie_host_without_nvlink_gets_one_pcie_board_per_gpu_model():
    found = nvml_read(epyc())
    assert found.links == {} and found.components() == [[0], [1], [2], [3], [4], [5]]
    assert any("no NVLink" in note for note in found.notes)
    assert [(b.kind, b.gpu_indexes) for b in propose_boards(found)] == [("pcie", (0, 1, 2, 3)), ("pcie", (4, 5))]
    discovery_apply(host_name="epyc", found=found)
    assert sorted(board_sets("epyc").values()) == [("pcie", [0, 1, 2, 3]), ("pcie", [4, 5])]
    assert set(GPU.objects.filter(host__name="epyc").values_list("compute_capability", flat=True)) == {"8.6", "7.0"}


def test_operator_boards_are_kept_and_differences_reported():
    host = Host.objects.create(name="threadripper")
    gpus = {i: GPU.objects.create(host=host, index=i, name="V100", memory_total_mib=1) for i in (4, 5)}
    mine = Board.objects.create(host=host, name="my board", kind="nvlink_pair")
    mine.gpus.set(gpus.values())
    kept = GPU.objects.create(host=host, index=40, name="unplugged", memory_total_mib=1)
    report = discovery_apply(host_name="threadripper", found=nvml_read(threadripper()))
    assert sorted(g.index for g in mine.gpus.all()) == [4, 5]
    assert GPU.objects.filter(pk=kept.pk).exists()  # not seen by NVML, still not deleted
    assert not Board.objects.filter(name="NVLink group 4,5,8,9").exists()
    assert any("my board: holds GPUs 4,5 but discovery found NVLink group 4,5,8,9" in line for line in report.lines)
    assert GPU.objects.get(pk=gpus[4].pk).memory_total_mib == 32768  # hardware facts do follow NVML


def test_discovery_twice_changes_nothing_the_second_time():
    discovery_apply(host_name="threadripper", found=nvml_read(threadripper()))
    counts = (GPU.objects.count(), Board.objects.count(), NVLink.objects.count())
    report = discovery_apply(host_name="threadripper", found=nvml_read(threadripper()))
    assert (report.gpus_created, report.boards_created) == (0, 0)
    assert (GPU.objects.count(), Board.objects.count(), NVLink.objects.count()) == counts


def test_dry_run_writes_nothing():
    report = discovery_apply(host_name="threadripper", found=nvml_read(threadripper()), dry_run=True)
    assert report.boards_created == 4
    assert (Host.objects.count(), GPU.objects.count(), Board.objects.count()) == (0, 0, 0)


@pytest.mark.parametrize("error, words", [
    (pynvml.NVMLError_DriverNotLoaded, "No NVIDIA driver is loaded"),
    (pynvml.NVMLError_LibraryNotFound, "no NVIDIA driver"),
])
def test_no_driver_is_said_plainly(error, words):
    with pytest.raises(NvmlUnavailable, match=words):
        nvml_read(no_driver(error))
    stats, reason = gpu_stats(no_driver(error))
    assert stats == {} and words in reason


def test_command_without_driver_changes_nothing(monkeypatch):
    monkeypatch.setattr(discover, "pynvml", no_driver(pynvml.NVMLError_LibraryNotFound))
    with pytest.raises(CommandError, match="Nothing was changed"):
        call_command("topology_discover", "--host", "threadripper")
    assert not Host.objects.exists()


def test_command_records_what_nvml_reports(monkeypatch, capsys):
    monkeypatch.setattr(discover, "pynvml", threadripper())
    call_command("topology_discover", "--host", "threadripper")
    out = capsys.readouterr().out
    assert "GPU 3: Tesla V100-SXM2-16GB, 16,384 MiB, compute capability 7.0" in out
    assert "NVLink GPU 4 <-> GPU 5: 2 link(s)" in out
    assert Board.objects.filter(host__name="threadripper").count() == 4


def test_nvml_is_shut_down_even_when_a_read_fails():
    nvml = threadripper()

    def broken(gpu):
        raise pynvml.NVMLError_GpuIsLost()

    nvml.nvmlDeviceGetCudaComputeCapability = broken
    with pytest.raises(pynvml.NVMLError_GpuIsLost):
        nvml_read(nvml)
    assert nvml.calls == ["init", "shutdown"]


def test_live_memory_and_utilization_per_gpu():
    stats, reason = gpu_stats(threadripper())
    assert reason == ""
    assert (stats["GPU-tr-04"].memory_used_mib, stats["GPU-tr-04"].utilization_pct) == (10752, 37)
    assert stats["GPU-tr-03"].memory_total_mib == 16384


def test_bus_ids_compare_in_one_spelling():
    assert normalize_bus_id(b"0000:3b:00.0") == normalize_bus_id("00000000:3B:00.0") == "00000000:3B:00.0"
