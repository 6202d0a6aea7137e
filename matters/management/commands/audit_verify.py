import json

from django.core.management.base import BaseCommand, CommandError

from matters.audit.services import audit_verify
from matters.models import Matter


class Command(BaseCommand):
    help = "Check the audit log's hash chain of a matter (or, without --matter, the system chain). Exit 1 if broken."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int)

    def handle(self, *args, **options) -> None:
        matter = None
        if options["matter"] is not None:
            matter = Matter.objects.filter(pk=options["matter"]).first()
            if matter is None:
                raise CommandError(f"No matter with id {options['matter']}.")
        check = audit_verify(matter=matter)
        self.stdout.write(
            json.dumps(
                {
                    "matter": matter.pk if matter else None,
                    "ok": check.ok,
                    "entries": check.entries,
                    "legacy_entries": check.legacy_entries,
                    "note": check.legacy_note,
                    "head_hash": check.head_hash,
                    "broken_seq": check.broken_seq,
                    "problem": check.problem,
                }
            )
        )
        if not check.ok:
            raise CommandError(f"Audit chain broken at entry {check.broken_seq}: {check.problem}", returncode=1)
