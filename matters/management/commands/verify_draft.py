import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from matters.drafts.verifier.check import verify_text
from matters.models import Matter


class Command(BaseCommand):
    help = ("Check a draft's citations, record cites, dates, amounts and quotations against a matter; print one JSON "
            "line per finding (kind, status, blocking, start, end, text, message, sources). Offsets are into FILE's "
            "text. Exits 1 when a blocking finding is open.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--matter", type=int, required=True)
        parser.add_argument("file", help="the draft as UTF-8 text (Markdown is read as text)")

    def handle(self, *args, **options) -> None:
        matter = Matter.objects.filter(pk=options["matter"]).first()
        if matter is None:
            raise CommandError(f"No matter with id {options['matter']}.")
        path = Path(options["file"])
        try:
            # Bytes decoded as they are: text mode would turn CRLF into LF and every offset after the first line
            # break would miss FILE's text by one character per break.
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise CommandError(f"{path}: no such file.") from None
        except IsADirectoryError:
            raise CommandError(f"{path} is a directory; give the draft's file.") from None
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
        except OSError as exc:
            raise CommandError(f"{path} cannot be read: {exc.strerror}.") from None
        findings = verify_text(matter=matter, text=text)
        for finding in findings:
            self.stdout.write(json.dumps(finding.as_json(), ensure_ascii=False))
        if any(f.blocking for f in findings):
            raise SystemExit(1)
