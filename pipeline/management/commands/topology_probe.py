import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from pipeline.models import ModelServer
from pipeline.topology.probe import probe_line, probe_schedule, server_probe


class Command(BaseCommand):
    help = ("Probe every enabled model server (health, then one short real generation) and print one JSON line "
            "per server: server, status (up, slow, loading, down), decode_tok_s, prompt_tok_s, error, "
            "forecast_tok_s, ceiling_tok_s, build (llama.cpp build_info), warnings (known problems of that build).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--server", action="append", default=[], help="probe only this server (repeatable)")
        parser.add_argument("--schedule", action="store_true",
                            help=f"also queue the periodic probe on the worker (every LAWDESK_PROBE_INTERVAL_S, "
                                 f"now {settings.LAWDESK_PROBE_INTERVAL_S} s)")

    def handle(self, *args, server: list[str], schedule: bool, **options) -> None:
        known_names = set(ModelServer.objects.filter(name__in=server).values_list("name", flat=True))
        if unknown := sorted(set(server) - known_names):
            known = ", ".join(ModelServer.objects.order_by("name").values_list("name", flat=True)) or "none yet"
            raise CommandError(f"No model server named {', '.join(unknown)}. The servers are: {known}.")
        servers = ModelServer.objects.filter(name__in=server) if server else ModelServer.objects.filter(enabled=True)
        for record in servers.order_by("name"):
            # One line as each server answers, so a slow server does not hold back the others' lines.
            self.stdout.write(json.dumps(probe_line(server_probe(server=record))))
            self.stdout.flush()
        if schedule and probe_schedule():
            self.stderr.write("The periodic probe is queued on the models queue, every "
                              f"{settings.LAWDESK_PROBE_INTERVAL_S} s.")
