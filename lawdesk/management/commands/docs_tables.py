"""``manage.py docs_tables [--check]``: write the tables that docs/ copies from the code (lawdesk.docs_tables)."""

from django.core.management.base import BaseCommand, CommandError

from lawdesk.docs_tables import MarkersMissing, tables_out_of_date


class Command(BaseCommand):
    help = "Rewrite the tables in docs/ that the code holds (the topology rules); --check only reports."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true",
                            help="change nothing; exit status 1 when a table differs from the code")

    def handle(self, *args, check: bool = False, **options) -> None:
        try:
            stale = tables_out_of_date(write=not check)
        except MarkersMissing as error:
            raise CommandError(str(error)) from error
        for table in stale:
            verb = "differs from the code" if check else "rewritten from the code"
            self.stdout.write(f"{table.path}: table {table.name} {verb}")
        if check and stale:
            raise CommandError("Run `manage.py docs_tables` to write the tables from the code.")
