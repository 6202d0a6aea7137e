"""What the retention commands (``legal_hold``, ``purge_matter``) share: the matter they act on, the attorney
acting (``--by``; without it the command line acts), and a refusal from the service turned into a command error
that says why."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import CommandError, CommandParser

from matters.models import Matter


def add_acting_arguments(parser: CommandParser) -> None:
    """Add ``--matter ID`` (required) and ``--by USERNAME`` (the attorney acting; optional)."""
    parser.add_argument("--matter", type=int, required=True)
    parser.add_argument("--by", default="", help="username of the attorney acting")


def matter_and_actor(options: dict, *, purged_too: bool = False) -> tuple[Matter, object | None]:
    """Return the matter ``--matter`` names and the user ``--by`` names (None without ``--by``). A purged matter
    counts as absent unless ``purged_too`` (the purge itself says it was purged already). Raises CommandError for
    an unknown matter or user."""
    matters = Matter.objects.all() if purged_too else Matter.objects.filter(purged_at__isnull=True)
    matter = matters.filter(pk=options["matter"]).first()
    if matter is None:
        raise CommandError(f"No matter with id {options['matter']}.")
    if not options["by"]:
        return matter, None
    user = get_user_model().objects.filter(username=options["by"]).first()
    if user is None:
        raise CommandError(f"No user named {options['by']!r}.")
    return matter, user


@contextmanager
def refusals_as_command_errors() -> Iterator[None]:
    """Turn a ValidationError or PermissionDenied raised inside into a CommandError carrying its messages."""
    try:
        yield
    except (ValidationError, PermissionDenied) as error:
        raise CommandError("; ".join(getattr(error, "messages", [str(error)]))) from error
