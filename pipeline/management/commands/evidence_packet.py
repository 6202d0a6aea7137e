import json

from django.core.management.base import BaseCommand, CommandError

from lawdesk.cli import quiet_broken_pipe
from matters.models import Matter
from pipeline.packet import evidence_packet


class Command(BaseCommand):
    help = ("Print a matter's evidence packet as a stage receives it: one JSON line per page (exhibit, label, "
            "title, origin, page, bates, ocr_confidence, injection_flag, text), then a last line with its SHA-256, "
            "page count and the pages left out under --budget-chars. --summary prints each page's length instead "
            "of its text.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--instructions", default="", help="the job's instructions (rank pages under a budget)")
        parser.add_argument("--budget-chars", type=int)
        parser.add_argument("--summary", action="store_true",
                            help="one short line per page (exhibit, page, bates, origin, chars, injection_flag)")

    @quiet_broken_pipe
    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        packet = evidence_packet(matter, query=options["instructions"], budget_chars=options["budget_chars"])
        for page in packet.pages:
            if options["summary"]:
                line = {"exhibit": page.exhibit, "page": page.page, "bates": page.bates, "origin": page.origin,
                        "chars": len(page.text), "injection_flag": bool(page.injection_flag)}
            else:
                # Every field of the packet page, the ones its SHA-256 covers, exactly as a stage's prompt gets them.
                line = {"exhibit": page.exhibit, "label": page.label, "title": page.title, "origin": page.origin,
                        "page": page.page, "bates": page.bates, "ocr_confidence": page.ocr_confidence,
                        "injection_flag": page.injection_flag, "text": page.text}
            self.stdout.write(json.dumps(line, ensure_ascii=False))
        self.stdout.write(json.dumps({"sha256": packet.sha256, "pages": len(packet.pages),
                                      "omitted": [{"exhibit": e, "page": p} for e, p in packet.omitted]}))
