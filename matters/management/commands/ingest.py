import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create
from matters.models import UPLOAD_ORIGINS, Matter


class Command(BaseCommand):
    help = (
        "Add files to a matter as an upload would, process them now, and print one JSON line per file "
        "(keys: exhibit, label, title, status, reason, pages, pages_pdf, pages_ocr, sha256, origin)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--origin", required=True, choices=[str(o) for o in UPLOAD_ORIGINS])
        parser.add_argument("--custodian", default="", help="who the files were collected from (default: nobody)")
        parser.add_argument("files", nargs="+")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        for name in options["files"]:
            path = Path(name)
            if not path.is_file():
                self.stdout.write(json.dumps({"file": name, "status": "failed", "reason": "No such file."}))
                continue
            try:
                with path.open("rb") as stream:
                    exhibit = exhibit_create(
                        matter=matter, stream=stream, original_name=path.name, origin=options["origin"],
                        uploaded_by=None, enqueue=False, custodian=options["custodian"],
                    )
            except (ValidationError, OSError) as error:
                self.stdout.write(json.dumps({"file": name, "status": "failed", "reason": str(error)}))
                continue
            exhibit = exhibit_process(exhibit_id=exhibit.pk, previews="inline", members="inline")
            self.stdout.write(
                json.dumps(
                    {
                        "exhibit": exhibit.pk,
                        "label": exhibit.label,
                        "title": exhibit.title,
                        "status": exhibit.status,
                        "reason": exhibit.stated_reason,
                        "pages": exhibit.page_count,
                        "pages_pdf": exhibit.pages_pdf,
                        "pages_ocr": exhibit.pages_ocr,
                        "sha256": exhibit.sha256,
                        "origin": exhibit.origin,
                    }
                )
            )
