import json
import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from matters.models import Matter
from pipeline.job_models import StageRun, StageStatus
from pipeline.stages.control import job_start
from pipeline.stages.runner import stage_execute, worker_id


class Command(BaseCommand):
    help = ("Start a job in a matter. Without --wait the stages are queued for the workers and the queued stage is "
            "printed; with --wait they run here, in order, and one JSON line is printed per stage as it ends "
            "(job, stage, role, server, status, prompt_tokens, completion_tokens, decode_tok_s, prompt_tok_s, "
            "duration_ms, error). Exit status 1 when the job does not end done.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("--kind", choices=["motion", "summary", "extraction"], default="",
                            help="blank: the router role classifies the instructions")
        parser.add_argument("--instructions", required=True)
        parser.add_argument("--exhibit", type=int, nargs="+", action="extend", default=[], metavar="ID",
                            help="exhibit ids (several after one flag, or the flag repeated)")
        parser.add_argument("--wait", action="store_true")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        try:
            job = job_start(matter=matter, instructions=options["instructions"], kind=options["kind"],
                            exhibits=options["exhibit"], enqueue=not options["wait"])
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        if not options["wait"]:
            for run in job.stage_runs.all():
                self.stdout.write(json.dumps(run.as_json()))
            return
        owner = worker_id()
        while True:
            run = StageRun.objects.filter(job=job, status__in=[StageStatus.QUEUED, StageStatus.WAITING_FOR_SERVER]
                                          ).order_by("order", "attempt").first()
            if run is None:
                break
            if run.status == StageStatus.WAITING_FOR_SERVER:
                self.stdout.write(json.dumps(run.as_json()))
                time.sleep(min(30.0, 2.0 ** run.waits))
            run = stage_execute(run.pk, owner=owner, enqueue_next=False)
            if run is not None and run.status != StageStatus.WAITING_FOR_SERVER:
                self.stdout.write(json.dumps(run.as_json()))
        job.refresh_from_db()
        if job.status != StageStatus.DONE:
            raise SystemExit(1)
