"""Email intake throughput: text-only messages into ready exhibits against a bare parse of the same messages, side
by side in one run.

Run from the repository root as ``.venv/bin/python bench/email_intake.py [--messages N] [--rounds R] [--html]``
(``taskset -c 0`` in front for one core, as the target is stated). ``--html`` gives each message an HTML
alternative of the same text with a table of rent figures, which the page then lays out as HTML (sanitised with
nh3, set in Liberation Sans) instead of the plain text.

``N`` text-only messages (100 by default; each its own Message-ID, subject and a body of about 1 KB), written by
the standard library, are timed two ways, each over the same bytes, in turns for ``R`` rounds (3 by default):

- ours: :func:`matters.exhibits.services.exhibit_create` and :func:`matters.exhibits.processing.exhibit_process`
  for each (a fresh matter each round, a SQLite database of the bench's own): sniffing, storing the original,
  parsing, the header-block PDF, the message's metadata and thread, the readers' child reading its pages, the
  audit entries, up to ``ready``; page images are not made (a later job's work);
- bare: ``email.message_from_bytes(data, policy=policy.default)`` and the body's ``get_content()`` for each.

Printed: messages per second of each side (the median round) and ours / bare. The target is ours >= 0.5 of
bare; what separates them is the work a ready exhibit needs that a parse does not (a child process's round trip,
a PDF laid out and read back, a dozen database writes), which the figures show.
"""

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from email import policy
from email.message import EmailMessage
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.django_env import setup_django  # noqa: E402


def messages(count: int, round_number: int, html: bool = False) -> list[bytes]:
    out = []
    for number in range(count):
        mail = EmailMessage()
        mail["From"] = "Ana Ruiz <ana@ruiz-law.example>"
        mail["To"] = "Ben Stone <ben@stone.example>, Cy Park <cy@stone.example>"
        mail["Subject"] = f"Lease schedule {round_number}-{number}"
        mail["Date"] = f"Tue, 03 Mar 2026 {number % 24:02d}:30:00 -0800"
        mail["Message-ID"] = f"<bench-{round_number}-{number}@ruiz-law.example>"
        mail.set_content(f"Ben,\n\nSchedule {number}: rent of ${1000 + number:,}.00 is due on the first.\n"
                         + "The tenant keeps the premises in good repair. " * 20 + "\n\nAna\n")
        if html:
            mail.add_alternative(
                f"<html><body><p>Ben,</p><p>Schedule {number}: rent of <b>${1000 + number:,}.00</b> is due on the "
                "first.</p><p>" + "The tenant keeps the premises in good repair. " * 20 + "</p><table><tr><th>Month"
                "</th><th>Rent</th></tr>" + "".join(f"<tr><td>{month}</td><td>${1000 + number:,}.00</td></tr>"
                                                     for month in ("January", "February", "March"))
                + "</table><p>Ana</p></body></html>", subtype="html")
        out.append(mail.as_bytes())
    return out


def ours(batch: list[bytes], round_number: int) -> float:
    from matters.exhibits.processing import exhibit_process
    from matters.exhibits.services import exhibit_create
    from matters.models import Exhibit
    from matters.services import matter_create

    matter = matter_create(name=f"Bench {round_number}", created_by=None)
    started = time.perf_counter()
    for number, data in enumerate(batch):
        exhibit = exhibit_create(matter=matter, stream=io.BytesIO(data), original_name=f"m{number}.eml",
                                 origin="client", uploaded_by=None, enqueue=False)
        exhibit = exhibit_process(exhibit_id=exhibit.pk, previews="skip", members="inline")
        if exhibit.status != Exhibit.Status.READY:
            raise SystemExit(f"message {number} ended {exhibit.status}: {exhibit.reason}")
    return time.perf_counter() - started


def bare(batch: list[bytes]) -> float:
    import email

    started = time.perf_counter()
    for data in batch:
        message = email.message_from_bytes(data, policy=policy.default)
        body = message.get_body(preferencelist=("plain", "html"))
        body.get_content()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--html", action="store_true", help="messages with an HTML alternative, laid out as HTML")
    args = parser.parse_args()
    kind = "text-and-HTML" if args.html else "text-only"
    setup_django(Path(tempfile.mkdtemp(prefix="bench-email-")))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.messages} {kind} messages, {args.rounds} rounds; "
          f"cores allowed: {len(os.sched_getaffinity(0))}")
    ours(messages(2, -1), -1)  # warm-up: the fork server and the first pooled child start once, as in a worker
    ours_s, bare_s = [], []
    for round_number in range(args.rounds):
        batch = messages(args.messages, round_number, args.html)
        ours_s.append(ours(batch, round_number))
        bare_s.append(bare(batch))
    ours_rate = args.messages / statistics.median(ours_s)
    bare_rate = args.messages / statistics.median(bare_s)
    print(f"ours: {ours_rate:.1f} messages/s into ready exhibits ({1000 / ours_rate:.1f} ms each)")
    print(f"bare: {bare_rate:.1f} messages/s parsed ({1000 / bare_rate:.2f} ms each)")
    print(f"ours / bare = {ours_rate / bare_rate:.3f} (target >= 0.5)")


if __name__ == "__main__":
    main()
