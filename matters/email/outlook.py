"""Read an Outlook ``.msg`` file (an OLE2 compound file, [MS-OXMSG]) with ``extract-msg``.

``extract-msg`` turns the message into a standard-library ``EmailMessage`` (``asEmailMessage``: its transport
headers, recipients, bodies and attachments, an attached Outlook item as an attached message), which is then read
as any RFC 5322 message is (:func:`matters.email.parse.parsed_from_message`). Django-free.
"""

from pathlib import Path

from .parse import ParsedMessage, parsed_from_message


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
            parsed = parsed_from_message(email_message, "msg")
    except Exception as exc:  # extract-msg and olefile raise many types for files that are not messages
        return _refused("The file is not a readable Outlook message: its compound-file structure holds no message "
                        f"extract-msg can read ({type(exc).__name__}: {str(exc)[:200]}). It may be another Office "
                        "file, or damaged. The original is kept unchanged.")
    return parsed


def _refused(reason: str) -> ParsedMessage:
    parsed = ParsedMessage("msg")
    parsed.problems.append(reason)
    parsed.body_kind = "unreadable"
    return parsed
