"""Messages the email tests build with the standard library (never a file copied from elsewhere)."""

import io
from email.message import EmailMessage
from email.policy import SMTP

import pymupdf

from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_create


def pdf_bytes(text: str) -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text)
    return doc.tobytes()


def message(*, subject: str = "Lease renewal", sender: str = "Ana Ruiz <ana@ruiz-law.example>",
            to: str = "Ben Stone <ben@stone.example>", date: str = "Tue, 03 Mar 2026 23:30:00 -0800",
            message_id: str = "<lease-1@ruiz-law.example>", body: str = "Ben, the renewal is attached.\n",
            **headers) -> EmailMessage:
    """A plain-text message; ``headers`` adds more (``cc``, ``bcc``, ``in_reply_to``, ``references``)."""
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    for name, value in headers.items():
        mail[name.replace("_", "-").title().replace("Id", "ID")] = value
    mail["Subject"] = subject
    mail["Date"] = date
    if message_id:
        mail["Message-ID"] = message_id
    mail.set_content(body)
    return mail


def as_bytes(mail: EmailMessage) -> bytes:
    return mail.as_bytes(policy=SMTP)


def ingest_bytes(matter, attorney, data: bytes, name: str = "message.eml", custodian: str = "", origin="client"):
    """Upload ``data`` and process it and everything it unpacks into, now, as the command line does."""
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(data), original_name=name, origin=origin,
                             uploaded_by=attorney, enqueue=False, custodian=custodian)
    return exhibit_process(exhibit_id=exhibit.pk, previews="skip", members="inline")


def quoted(text: str) -> str:
    """``text`` as a reply quotes it, each line after "> "."""
    return "".join(f"> {line}\n" for line in text.splitlines())


def reply_body(own: str, earlier: str) -> str:
    """A reply's body: its own text, then the earlier message quoted under an attribution line."""
    return f"{own}\n\nOn Tue, Mar 3, 2026 at 11:30 PM Ana Ruiz <ana@ruiz-law.example> wrote:\n{quoted(earlier)}"


def page_text(exhibit) -> str:
    return "\n".join(exhibit.pages.order_by("number").values_list("text", flat=True))
