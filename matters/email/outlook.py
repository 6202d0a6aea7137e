"""Read an Outlook ``.msg`` file (an OLE2 compound file, [MS-OXMSG]) with ``extract-msg``.

``extract-msg`` turns the message into a standard-library ``EmailMessage`` (``asEmailMessage``: its transport
headers, recipients, bodies and attachments, an attached Outlook item as an attached message), which is written
out and parsed again, then read as any RFC 5322 message is (:func:`matters.email.parse.parsed_from_message`).
Django-free.
"""

import email
from email import policy
from pathlib import Path

from .parse import ParsedMessage, parsed_from_message

# Headers are written as they came (no refolding), so what is parsed again is what the .msg holds.
_WRITE = policy.default.clone(refold_source="none", max_line_length=0)


def parse_msg(path: Path) -> ParsedMessage:
    """Read the ``.msg`` at ``path``; never raises. A file that is not an Outlook message (another compound
    file, a damaged one) gives a ParsedMessage whose ``problems`` say so and which holds nothing else."""
    try:
        import extract_msg
    except ImportError:
        return _refused("Outlook .msg files are read with the extract-msg package, which is not installed on this "
                        "server. Ask the operator to install the requirements, then process the file again.")
    try:
        with extract_msg.openMsg(str(path), strict=False, delayAttachments=False) as message:
            email_message = message.asEmailMessage()
            _fill_from_properties(email_message, message)
            # asEmailMessage nests the standard library's legacy MIME classes (MIMEMultipart, MIMEText) inside an
            # EmailMessage; they lack the modern API the reader walks (iter_parts, is_attachment), so the message
            # is written out and parsed again as one tree of the modern policy, as an .eml would be.
            email_message = email.message_from_bytes(email_message.as_bytes(policy=_WRITE), policy=policy.default)
            parsed = parsed_from_message(email_message, "msg")
    except Exception as exc:  # extract-msg and olefile raise many types for files that are not messages
        return _refused("The file is not a readable Outlook message: its compound-file structure holds no message "
                        f"extract-msg can read ({type(exc).__name__}: {str(exc)[:200]}). It may be another Office "
                        "file, or damaged. The original is kept unchanged.")
    return parsed


# Headers a message without transport headers (one from Sent Items or Drafts, which never crossed the internet)
# holds only as MAPI properties ([MS-OXPROPS]); asEmailMessage builds From, To, Cc and Date from them but not these.
_PROPERTY_HEADERS = (("Subject", "__substg1.0_0037"), ("Message-ID", "__substg1.0_1035"),
                     ("In-Reply-To", "__substg1.0_1042"), ("References", "__substg1.0_1039"))


def _fill_from_properties(email_message, message) -> None:
    """Set each of :data:`_PROPERTY_HEADERS` the built message lacks (or has empty) from its property stream."""
    for name, stream in _PROPERTY_HEADERS:
        if str(email_message.get(name) or "").strip():
            continue
        value = " ".join((message.getStringStream(stream) or "").split())
        if not value:
            continue
        del email_message[name]
        try:
            email_message[name] = value
        except Exception:  # a value the header registry refuses: the message reads on without it
            continue


def _refused(reason: str) -> ParsedMessage:
    parsed = ParsedMessage("msg")
    parsed.problems.append(reason)
    parsed.body_kind = "unreadable"
    return parsed
