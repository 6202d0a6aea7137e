import json

from django.core.management.base import BaseCommand

from matters.management.acting import add_acting_arguments, matter_and_actor, refusals_as_command_errors
from matters.retention.services import matter_hold, matter_hold_lift


class Command(BaseCommand):
    help = ("Put a matter on legal hold (or lift it with --lift), with a reason; audited. --by USERNAME records and "
            "checks that attorney; without it the command line acts. Prints {matter, legal_hold}.")

    def add_arguments(self, parser) -> None:
        add_acting_arguments(parser)
        parser.add_argument("--reason", required=True)
        parser.add_argument("--lift", action="store_true", help="lift the hold instead of setting it")

    def handle(self, *args, **options) -> None:
        matter, user = matter_and_actor(options)
        service = matter_hold_lift if options["lift"] else matter_hold
        with refusals_as_command_errors():
            matter = service(matter=matter, user=user, reason=options["reason"])
        self.stdout.write(json.dumps({"matter": matter.pk, "legal_hold": matter.legal_hold}))
