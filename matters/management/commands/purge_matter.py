import json

from django.core.management.base import BaseCommand

from matters.management.acting import add_acting_arguments, matter_and_actor, refusals_as_command_errors
from matters.retention.purge import matter_purge


class Command(BaseCommand):
    help = ("Purge a matter not on legal hold: --confirm must be the matter's name typed again. Removes its records "
            "and files (originals another matter uses stay); its audit chain keeps a final entry. Prints what was "
            "removed: {matter, rows, files, bytes, files_sha256, originals}.")

    def add_arguments(self, parser) -> None:
        add_acting_arguments(parser)
        parser.add_argument("--confirm", required=True, help="the matter's name, typed again")

    def handle(self, *args, **options) -> None:
        matter, user = matter_and_actor(options, purged_too=True)
        with refusals_as_command_errors():
            report = matter_purge(matter=matter, user=user, confirm_name=options["confirm"])
        self.stdout.write(json.dumps({"matter": matter.pk, **report.as_detail()}))
