import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from matters.models import Matter
from matters.selectors import evidence_exhibits
from pipeline.digests.services import digest_make, digest_queue


class Command(BaseCommand):
    help = ("Digest a matter's ready evidence exhibits with the summarizer role (a backfill): each exhibit without "
            "a digest under the current prompt and model is queued for the model workers, or with --wait made "
            "here, one after another. One JSON line per exhibit (exhibit, label, sha256, status, reason, model, "
            "prompt_template, pages_read, facts, flagged_facts, duration_ms). A done digest is never made again; "
            "--again makes the failed ones again. Exit status 1 when a digest ends failed.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--exhibit", type=int, nargs="+", action="extend", default=[], metavar="ID",
                            help="only these exhibit ids (several after one flag, or the flag repeated)")
        parser.add_argument("--again", action="store_true", help="make failed digests again")
        parser.add_argument("--wait", action="store_true", help="make the digests here instead of queueing them")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        exhibits = evidence_exhibits(matter).order_by("label_seq", "pk")
        if options["exhibit"]:
            exhibits = exhibits.filter(pk__in=options["exhibit"])
        failed = False
        for exhibit in exhibits:
            try:
                row = digest_queue(exhibit=exhibit, again=options["again"], enqueue=not options["wait"])
            except ValidationError as error:
                raise CommandError(" ".join(error.messages)) from None
            if options["wait"]:
                row = digest_make(exhibit_id=exhibit.pk) or row
            failed |= row.status == "failed"
            self.stdout.write(json.dumps(row.as_json(exhibit)))
        if failed:
            raise SystemExit(1)
