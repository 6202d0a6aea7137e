"""Threads, inclusive messages and near-duplicates for one message just read: updating the threads it touches
against recomputing the whole matter, side by side in one run.

Run from the repository root as ``.venv/bin/python bench/email_threads.py [--messages N] [--new M]``.

A matter of ``N`` messages (2,000 by default) in conversations of five (each reply quoting the message before it,
bodies of about 600 bytes) is written straight to a SQLite database of the bench's own; then ``M`` new replies (20
by default) are added one at a time, and after each the threads are brought up to date two ways over the same
rows, in turns:

- touched: :func:`matters.email.threads.message_threads_update` (the threads the message touches, their
  inclusive messages marked again), what reading a message now does;
- whole: :func:`matters.email.threads.matter_threads_update` (every message of the matter grouped again and every
  thread's inclusive messages marked again), what reading a message did before, plus the marking.

Also printed: :func:`matters.email.near_duplicates.message_near_duplicates_update` per message (its candidates are
the thread and the subject). Printed figures: milliseconds per message (median) of each and whole / touched.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.django_env import setup_django  # noqa: E402

PARAGRAPH = ("the tenant keeps the premises in good repair and the landlord answers for the roof and the walls; "
             "rent is due on the first of each month at the address the landlord names. ")


def body(thread: int, position: int, earlier: str) -> str:
    own = f"Note {position} of conversation {thread}: {PARAGRAPH * 3}"
    quoted = "".join(f"> {line}\n" for line in earlier.splitlines())
    return f"{own}\n\nOn Tue, Mar 3, 2026 someone wrote:\n{quoted}" if earlier else own


def build(matter, count: int):
    from matters.models import EmailMessage, Exhibit

    exhibits = Exhibit.objects.bulk_create(
        Exhibit(matter=matter, original_name=f"m{n}.eml", title=f"m{n}", sha256=f"{n:064x}", size_bytes=1000,
                mime_type="message/rfc822", kind=Exhibit.Kind.EMAIL, status=Exhibit.Status.READY, origin="client")
        for n in range(count))
    records, earlier = [], ""
    for n, exhibit in enumerate(exhibits):
        thread, position = divmod(n, 5)
        earlier = "" if position == 0 else earlier
        text = body(thread, position, earlier)
        records.append(EmailMessage(
            exhibit=exhibit, source_format="eml", message_id=f"<{n}@bench>", native_sha256=exhibit.sha256,
            in_reply_to=f"<{n - 1}@bench>" if position else "", references=[f"<{n - 1}@bench>"] if position else [],
            subject_normalised=f"conversation {thread}", body_sha256="0" * 64, body_text=text, body_recorded=True))
        earlier = text
    EmailMessage.objects.bulk_create(records)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--new", type=int, default=20)
    args = parser.parse_args()
    setup_django(Path(tempfile.mkdtemp(prefix="bench-threads-")))
    from matters.email.near_duplicates import message_near_duplicates_update
    from matters.email.threads import matter_threads_update, message_threads_update
    from matters.models import EmailMessage, Exhibit
    from matters.services import matter_create

    matter = matter_create(name="Bench threads", created_by=None)
    build(matter, args.messages)
    matter_threads_update(matter)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.messages} messages in threads of 5, {args.new} new replies")
    touched_s, whole_s, near_s = [], [], []
    for n in range(args.new):
        answered = EmailMessage.objects.get(message_id=f"<{5 * n + 4}@bench>")
        exhibit = Exhibit.objects.create(matter=matter, original_name=f"new{n}.eml", title=f"new{n}",
                                         sha256=f"{10 ** 9 + n:064x}", size_bytes=1000, mime_type="message/rfc822",
                                         kind=Exhibit.Kind.EMAIL, status=Exhibit.Status.READY, origin="client")
        record = EmailMessage.objects.create(
            exhibit=exhibit, source_format="eml", message_id=f"<new-{n}@bench>", in_reply_to=answered.message_id,
            references=[answered.message_id], subject_normalised=answered.subject_normalised,
            native_sha256=exhibit.sha256, body_sha256="0" * 64, body_recorded=True,
            body_text=body(n, 5, answered.body_text))
        started = time.perf_counter()
        message_threads_update(record)
        touched_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        matter_threads_update(matter)
        whole_s.append(time.perf_counter() - started)
        record.refresh_from_db()
        started = time.perf_counter()
        message_near_duplicates_update(record)
        near_s.append(time.perf_counter() - started)
    touched, whole, near = (statistics.median(s) * 1000 for s in (touched_s, whole_s, near_s))
    print(f"touched threads: {touched:.1f} ms per message")
    print(f"whole matter:    {whole:.1f} ms per message")
    print(f"whole / touched = {whole / touched:.1f}")
    print(f"near-duplicates: {near:.1f} ms per message")


if __name__ == "__main__":
    main()
