import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from matters.incoming.archive import UnsafeArchive
from matters.incoming.services import import_production
from matters.models import Matter


class Command(BaseCommand):
    help = ("Import another party's production (a volume ZIP or folder with DAT/OPT load files, or stamped PDFs). "
            "Prints one JSON line per document (exhibit, label, first, last, pages, status, reason) and a last "
            "line with the discrepancies.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--origin", required=True, choices=["opposing_party", "third_party"])
        parser.add_argument("paths", nargs="+")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        paths = [Path(p) for p in options["paths"]]
        if missing := [str(p) for p in paths if not p.exists()]:
            raise CommandError(f"Not found: {', '.join(missing)}")
        try:
            incoming = import_production(matter=matter, paths=paths, origin=options["origin"], user=None)
        except (UnsafeArchive, ValueError) as error:
            raise CommandError(str(error)) from error
        by_exhibit: dict[int, list[str]] = {}
        for row in incoming.bates_pages.select_related("page").order_by("page__exhibit_id", "page__number"):
            by_exhibit.setdefault(row.page.exhibit_id, []).append(row.bates)
        for exhibit in matter.exhibits.filter(pk__in=by_exhibit).order_by("label_seq"):
            numbers = by_exhibit[exhibit.pk]
            self.stdout.write(json.dumps({"exhibit": exhibit.pk, "label": exhibit.label, "first": numbers[0],
                                          "last": numbers[-1], "pages": exhibit.page_count,
                                          "status": exhibit.status, "reason": exhibit.stated_reason}))
        self.stdout.write(json.dumps({"discrepancies": incoming.report}))
