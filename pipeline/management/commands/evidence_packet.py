import json

from django.core.management.base import BaseCommand, CommandError

from matters.models import Matter
from pipeline.packet import evidence_packet


class Command(BaseCommand):
    help = ("Print a matter's evidence packet as JSON lines (exhibit, page, bates, origin, chars, injection_flag), "
            "then its SHA-256 (and the pages left out when --budget-chars is given).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--instructions", default="")
        parser.add_argument("--budget-chars", type=int)

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        packet = evidence_packet(matter, query=options["instructions"], budget_chars=options["budget_chars"])
        for page in packet.pages:
            self.stdout.write(json.dumps({"exhibit": page.exhibit, "page": page.page, "bates": page.bates,
                                          "origin": page.origin, "chars": len(page.text),
                                          "injection_flag": bool(page.injection_flag)}))
        self.stdout.write(json.dumps({"sha256": packet.sha256, "pages": len(packet.pages),
                                      "omitted": [{"exhibit": e, "page": p} for e, p in packet.omitted]}))
