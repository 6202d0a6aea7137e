from django.core.management.base import BaseCommand, CommandError

from pipeline.models import ModelServer
from pipeline.topology.example import topology_load_example
from pipeline.topology.switch import role_changes, role_holders

WARNING = (
    "This loads the example deployment (hosts threadripper and epyc, six model servers) and moves every role "
    "to its servers. Jobs then wait on those hosts, which must exist on your network, and `make run` no longer "
    "starts the embedded model while they are enabled. Go back at any time with "
    "`manage.py topology_use_embedded`."
)


class Command(BaseCommand):
    help = ("Load the example deployment (two hosts, six boards, six servers, every role); safe to run again. "
            "Needs --yes, since it moves every role off the embedded model; prints each role that moved.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--yes", action="store_true", help="confirm: move every role to the example's servers")

    def handle(self, *args, yes: bool, **options) -> None:
        if not yes:
            self.stderr.write(WARNING)
            raise CommandError("Nothing was changed. Run it again with --yes to load the example.")
        before = role_holders()
        made = topology_load_example()
        self.stdout.write("Loaded: " + ", ".join(f"{count} {what}" for what, count in made.items()))
        for line in role_changes(before, role_holders()):
            self.stdout.write(f"role {line}")
        if ModelServer.objects.filter(embedded=True).exists():
            self.stdout.write("The embedded model now holds no role and `make run` will not start it.")
        self.stdout.write("To go back to the embedded model: manage.py topology_use_embedded")
