from django.core.management.base import BaseCommand, CommandError

from lawdesk.cli import quiet_broken_pipe
from matters.models import Exhibit


class Command(BaseCommand):
    help = "Print each page's text of an exhibit, each page after a form-feed line."

    def add_arguments(self, parser) -> None:
        parser.add_argument("exhibit", type=int)

    @quiet_broken_pipe
    def handle(self, *args, **options) -> None:
        exhibit = Exhibit.objects.filter(pk=options["exhibit"]).first()
        if exhibit is None:
            raise CommandError(f"No exhibit with id {options['exhibit']}.")
        for page in exhibit.pages.order_by("number"):
            self.stdout.write("\f")
            self.stdout.write(page.text)
