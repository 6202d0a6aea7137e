import json
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from lawdesk.backup import BackupError, backup_create


class Command(BaseCommand):
    help = ("Write a snapshot of the database and the data directory (originals, derived files, productions, "
            "secrets) into DEST, with a manifest of SHA-256 per file; content DEST holds already is not copied "
            "again. Prints {name, files, copied, reused, copied_bytes, copied_by_store, repaired, damaged, missing}; "
            "exits with an error after writing the snapshot when an original is damaged or missing.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("destination", help="backup folder (created if missing), outside the data directory")

    def handle(self, *args, **options) -> None:
        try:
            result = backup_create(destination=Path(options["destination"]))
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(asdict(result)))
        if result.damaged or result.missing:
            raise CommandError(
                f"Snapshot {result.name} was written, but originals of the data directory need attention: "
                + "; ".join([f"{path}: its bytes no longer have the SHA-256 it is named by (changed on disk)"
                             for path in result.damaged] + [f"{path}: named by the database but gone"
                                                            for path in result.missing])
                + ". Restore them from an earlier snapshot (docs/backup.md).")
