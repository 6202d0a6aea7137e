import socket

import pynvml
from django.core.management.base import BaseCommand, CommandError

from pipeline.topology.discover import NvmlUnavailable, discovery_apply, nvml_read, propose_boards


class Command(BaseCommand):
    help = ("Read this machine's GPUs and NVLink links through NVML and record them under a host: boards are "
            "the connected components of the NVLink graph. Deletes nothing; --dry-run writes nothing.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default=socket.gethostname(), help="host name to record under")
        parser.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")

    def handle(self, *args, host: str, dry_run: bool, **options) -> None:
        try:
            found = nvml_read()
        except NvmlUnavailable as error:
            raise CommandError(f"{error} Nothing was changed.") from error
        except pynvml.NVMLError as error:
            raise CommandError(f"NVML failed while reading the GPUs: {error}. Nothing was changed.") from error
        for gpu in found.gpus:
            self.stdout.write(f"GPU {gpu.index}: {gpu.name}, {gpu.memory_total_mib:,} MiB, compute capability "
                              f"{gpu.compute_capability}, {gpu.pci_bus_id}, {gpu.uuid}")
        for (a, b), lanes in sorted(found.gpu_links().items()):
            self.stdout.write(f"NVLink GPU {a} <-> GPU {b}: {lanes} link(s)")
        for board in propose_boards(found):
            self.stdout.write(f"board: {board.name} ({board.kind})")
        report = discovery_apply(host_name=host, found=found, dry_run=dry_run)
        for line in report.lines:
            self.stdout.write(("would: " if dry_run else "") + line)
        if not found.gpus:
            self.stdout.write("NVML found no GPU on this machine.")
