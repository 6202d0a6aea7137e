import json

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from matters.models import Matter
from matters.retention.purge import matter_purge


class Command(BaseCommand):
    help = ("Purge a matter not on legal hold: --confirm must be the matter's name typed again. Removes its records "
            "and files (originals another matter uses stay); its audit chain keeps a final entry. Prints what was "
            "removed: {matter, rows, files, bytes, files_sha256, originals_removed, originals_kept_shared}.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--confirm", required=True, help="the matter's name, typed again")
        parser.add_argument("--by", default="", help="username of the attorney acting")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        user = None
        if options["by"]:
            user = get_user_model().objects.filter(username=options["by"]).first()
            if user is None:
                raise CommandError(f"No user named {options['by']!r}.")
        try:
            report = matter_purge(matter=matter, user=user, confirm_name=options["confirm"])
        except (ValidationError, PermissionDenied) as error:
            raise CommandError("; ".join(getattr(error, "messages", [str(error)]))) from error
        self.stdout.write(json.dumps({"matter": matter.pk, **report.as_detail()}))
