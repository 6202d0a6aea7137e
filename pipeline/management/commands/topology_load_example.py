from django.core.management.base import BaseCommand

from pipeline.topology.example import topology_load_example


class Command(BaseCommand):
    help = "Load the example deployment (two hosts, six boards, six servers, every role); safe to run again."

    def handle(self, *args, **options) -> None:
        made = topology_load_example()
        self.stdout.write(", ".join(f"{count} {what}" for what, count in made.items()))
