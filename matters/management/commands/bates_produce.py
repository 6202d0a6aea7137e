import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from matters.models import Exhibit, Matter, Production
from matters.productions.delivery import production_files
from matters.productions.reservation import default_exhibits, production_create
from matters.productions.stamping import production_run


class Command(BaseCommand):
    help = (
        "Stamp, combine and pack a Bates production of a matter's ready evidence (or --exhibit ids, in order) now; "
        "print one JSON line (production, status, prefix, first, last, pages, pdf, zip)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--prefix", required=True)
        parser.add_argument("--digits", type=int, default=6)
        parser.add_argument("--start", type=int)
        parser.add_argument("--suffix", default="")
        parser.add_argument("--keep-forms", action="store_true",
                            help="leave form fields fillable instead of baking them into the pages")
        parser.add_argument("--position", default="bottom-right", choices=Production.Position.values)
        parser.add_argument("--cover-sheets", default="none", choices=Production.CoverSheets.values)
        parser.add_argument("--no-index", action="store_true")
        parser.add_argument("--images", action="store_true", help="also write single-page TIFF images and an OPT")
        # Several ids after one flag (--exhibit 2 5) or the flag repeated (--exhibit 2 --exhibit 5): both as the
        # manual shows them.
        parser.add_argument("--exhibit", type=int, nargs="+", action="extend", default=[], metavar="ID",
                            help="exhibit ids, in the order to produce them")
        parser.add_argument("--confidentiality", default="", help="designation stamped on every document")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        if options["exhibit"]:
            found = {e.pk: e for e in Exhibit.objects.filter(matter=matter, pk__in=options["exhibit"])}
            if unknown := [pk for pk in options["exhibit"] if pk not in found]:
                raise CommandError(f"No exhibit {', '.join(map(str, unknown))} in matter {matter.pk}.")
            exhibits = [found[pk] for pk in options["exhibit"]]
        else:
            exhibits = list(default_exhibits(matter))
        try:
            production = production_create(
                matter=matter, exhibits=exhibits, prefix=options["prefix"], created_by=None, digits=options["digits"],
                start=options["start"], suffix=options["suffix"], position=options["position"],
                confidentiality={e.pk: options["confidentiality"] for e in exhibits},
                cover_sheets=options["cover_sheets"], with_index=not options["no_index"],
                with_images=options["images"], keep_forms=options["keep_forms"], enqueue=False,
            )
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error
        production = production_run(production_id=production.pk)
        files = production_files(production)
        done = production.status == Production.Status.DONE
        self.stdout.write(json.dumps({
            "production": production.pk, "status": production.status, "prefix": production.prefix,
            "first": production.first, "last": production.last, "pages": production.page_count,
            "pdf": str(files["pdf"]) if done else None, "zip": str(files["zip"]) if done else None,
        }))
