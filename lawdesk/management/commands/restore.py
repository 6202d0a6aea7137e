import json
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from lawdesk.backup import BackupError, backup_restore


class Command(BaseCommand):
    help = ("Restore a snapshot of the backup SRC (the newest, or --snapshot NAME) into an empty data directory "
            "(LAWDESK_DATA_DIR) and an empty database (DATABASE_URL), verifying every file's SHA-256, the row "
            "counts and every audit chain. Prints {name, files, rows, chains, missing}; warns on stderr about "
            "originals the restored records name that the snapshot did not hold.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("source", help="the backup folder given to manage.py backup")
        parser.add_argument("--snapshot", default=None, help="a snapshot's name (a folder under SRC/snapshots/)")

    def handle(self, *args, **options) -> None:
        try:
            result = backup_restore(source=Path(options["source"]), snapshot=options["snapshot"])
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(asdict(result)))
        for path in result.missing:
            self.stderr.write(f"warning: {path} is named by the restored records but was not in the snapshot; "
                              "the exhibit has no original until it is restored from another snapshot.")
