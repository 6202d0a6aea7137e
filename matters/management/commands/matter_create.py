from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from matters.services import matter_add_member, matter_create


class Command(BaseCommand):
    help = "Create a matter and print its id. Members: --member USERNAME (repeatable)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--court", default="")
        parser.add_argument("--case-number", default="")
        parser.add_argument("--client", default="")
        parser.add_argument("--opposing-party", default="")
        parser.add_argument("--label-style", choices=["numeric", "alpha"], default="numeric")
        parser.add_argument("--member", action="append", default=[], help="username to add as a member")

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        members = []
        for username in options["member"]:
            user = User.objects.filter(username=username).first()
            if user is None:
                raise CommandError(f"No user named {username!r}.")
            members.append(user)
        try:
            matter = matter_create(
                name=options["name"],
                created_by=members[0] if members else None,
                court=options["court"],
                case_number=options["case_number"],
                client=options["client"],
                opposing_party=options["opposing_party"],
                label_style=options["label_style"],
            )
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error
        except PermissionDenied as error:  # the first member named opens the matter: an attorney or assistant
            raise CommandError(f"{error} The first --member opens the matter: name an attorney or an assistant "
                               "first.") from error
        # The first is the creator, a member from the start; the others are added as the matter page adds them,
        # each recorded in the audit trail (by the command line: no user).
        for user in members[1:]:
            matter_add_member(matter=matter, user=user, added_by=None)
        self.stdout.write(str(matter.pk))
