import json

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from matters.models import Matter
from matters.retention.services import matter_hold, matter_hold_lift


class Command(BaseCommand):
    help = ("Put a matter on legal hold (or lift it with --lift), with a reason; audited. --by USERNAME records and "
            "checks that attorney; without it the command line acts. Prints {matter, legal_hold}.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--reason", required=True)
        parser.add_argument("--lift", action="store_true", help="lift the hold instead of setting it")
        parser.add_argument("--by", default="", help="username of the attorney acting")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"], purged_at__isnull=True).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        user = None
        if options["by"]:
            user = get_user_model().objects.filter(username=options["by"]).first()
            if user is None:
                raise CommandError(f"No user named {options['by']!r}.")
        service = matter_hold_lift if options["lift"] else matter_hold
        try:
            matter = service(matter=matter, user=user, reason=options["reason"])
        except (ValidationError, PermissionDenied) as error:
            raise CommandError("; ".join(getattr(error, "messages", [str(error)]))) from error
        self.stdout.write(json.dumps({"matter": matter.pk, "legal_hold": matter.legal_hold}))
