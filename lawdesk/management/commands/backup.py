import json
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from lawdesk.backup import BackupError, backup_create


class Command(BaseCommand):
    help = ("Write a snapshot of the database and the data directory (originals, derived files, productions, "
            "secrets) into DEST, with a manifest of SHA-256 per file; content DEST holds already is not copied "
            "again. Prints {name, files, copied, reused, copied_bytes, copied_by_store}.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("destination", help="backup folder (created if missing), outside the data directory")

    def handle(self, *args, **options) -> None:
        try:
            result = backup_create(destination=Path(options["destination"]))
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(asdict(result)))
