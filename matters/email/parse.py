"""Read one email message into what its exhibit shows and keeps: headers, body text, attachments, problems.

RFC 5322 messages (``.eml``, a message inside a mailbox or attached to another) are read with the standard
library's ``email`` package and its modern policy (``email.policy.default``); Outlook ``.msg`` files with
``extract-msg`` (:mod:`matters.email.outlook`). Nothing here raises for a bad message: a header, body or attachment
that cannot be read becomes a problem written for an attorney, and the rest of the message goes on. Django-free.
"""

import email
import hashlib
import mimetypes
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.utils import parsedate_to_datetime

from .html_body import MAX_NESTING, MAX_TABLE_ROWS, html_to_text, nesting_depth, sanitised_html, table_rows
from .smime import read_opaque

# Parts that carry a message's own security wrapping rather than content (RFC 8551 section 3.2): an opaque one
# (signed, encrypted or compressed data) is read by matters.email.smime; a detached signature is said, not checked.
_SMIME_OPAQUE = {"application/pkcs7-mime", "application/x-pkcs7-mime"}
_SMIME_SIGNATURE = {"application/pkcs7-signature", "application/x-pkcs7-signature"}
# Signed inside signed inside ...: a message wraps its content once or twice (signed, then encrypted); past this the
# wrapper is said and not opened.
_SMIME_MAX_NESTING = 3
_SMIME_ENCRYPTED_NOTE = ("S/MIME-encrypted: its content can be read only with the recipient's private key, which "
                         "LawDesk does not hold; the encrypted original is kept unchanged.")
# What a reply or forward puts before a subject, in the languages Outlook and Apple Mail write it (Re, Fwd, Fw,
# AW/WG German, SV/VS Nordic, RIF/I Italian, TR French, RV Spanish), with counters ("Re[2]:") and list tags ("[x]").
_SUBJECT_PREFIX = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|rif|tr|rv|antw)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]|\[[^\]]{1,40}\])\s*", re.IGNORECASE)
# Outlook's Transport-Neutral Encapsulation Format ([MS-OXTNEF]), sent as winmail.dat: its files are unpacked.
_TNEF = {"application/ms-tnef", "application/vnd.ms-tnef"}
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")
_SPACES = re.compile(r"\s+")


@dataclass
class Attachment:
    """One attached file: ``data`` its decoded bytes (None when it could not be decoded, with ``reason`` saying
    why); ``is_message`` for an attached message (``message/rfc822``), whose bytes are that message's."""

    name: str
    content_type: str
    data: bytes | None
    reason: str = ""
    is_message: bool = False


@dataclass
class ParsedMessage:
    """A message as its exhibit shows it. Addresses are the header values as decoded (``Ana Ruiz
    <ana@example.com>, ...``); ``date_header`` is the Date as written and ``sent_at`` that instant as an aware
    datetime in the header's own timezone (None when missing or unreadable). ``body`` is plain text (an HTML body
    turned to text by :func:`html_to_text`), ``body_kind`` "plain", "html" or "none". ``body_html`` is the
    message's HTML rendering of its body, sanitised (:func:`matters.email.html_body.sanitised_html`), when it has
    one (the only body, or the HTML alternative of a plain one), else ''; ``body_after_html`` the text of any
    further body parts (not alternatives), which a page showing ``body_html`` shows after it. ``problems`` are notes for
    the attorney about parts that could not be read; ``security`` says when the message is S/MIME signed or
    encrypted."""

    source_format: str
    sender: str = ""
    to: str = ""
    cc: str = ""
    bcc: str = ""
    subject: str = ""
    date_header: str = ""
    sent_at: datetime | None = None
    message_id: str = ""
    in_reply_to: str = ""
    references: list[str] = field(default_factory=list)
    body: str = ""
    body_kind: str = "none"
    body_html: str = ""
    body_after_html: str = ""
    attachments: list[Attachment] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    security: str = ""

    @property
    def attachment_names(self) -> list[str]:
        return [attachment.name for attachment in self.attachments]


def looks_like_message(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) begins with an RFC 5322 header block a mail program wrote: header
    lines up to a blank line, among them From and at least one of Date, Subject, To, Message-ID or Received
    (RFC 5322 section 3.6 requires From and Date; a draft or a gateway's copy may lack Date)."""
    text = head[:65536].decode("latin-1")
    block = re.split(r"\r?\n\r?\n", text, maxsplit=1)[0]
    names = set()
    for line in block.splitlines():
        if not line or line[0] in " \t":
            continue  # a folded continuation (RFC 5322 section 2.2.3)
        found = re.match(r"([!-9;-~]+):", line)
        if not found:
            return False
        names.add(found.group(1).lower())
    return "from" in names and bool(names & {"date", "subject", "to", "message-id", "received"})


def parse_eml(data: bytes) -> ParsedMessage:
    """Read an RFC 5322 message's bytes; never raises (see the module docstring)."""
    try:
        message = email.message_from_bytes(data, policy=policy.default)
    except Exception as exc:  # the parser is lenient; this is a guard, not a path
        parsed = ParsedMessage("eml")
        parsed.problems.append(f"The message could not be read at all ({type(exc).__name__}); its original is kept "
                               "unchanged.")
        return parsed
    return parsed_from_message(message, "eml")


def parsed_from_message(message: EmailMessage, source_format: str) -> ParsedMessage:
    """The ParsedMessage of a message the standard library has parsed (``email.policy.default``)."""
    parsed = ParsedMessage(source_format)
    parsed.sender = _header(message, "From", parsed)
    parsed.to = _header(message, "To", parsed)
    parsed.cc = _header(message, "Cc", parsed)
    parsed.bcc = _header(message, "Bcc", parsed)
    parsed.subject = _header(message, "Subject", parsed)
    parsed.date_header = _header(message, "Date", parsed)
    parsed.sent_at = sent_at(parsed.date_header, parsed)
    parsed.message_id = first_message_id(_header(message, "Message-ID", parsed))
    parsed.in_reply_to = first_message_id(_header(message, "In-Reply-To", parsed))
    parsed.references = _MESSAGE_ID.findall(_header(message, "References", parsed))
    _read_parts(message, parsed)
    if message.defects:
        kinds = sorted({type(defect).__name__ for defect in message.defects})
        parsed.problems.append(f"The message's structure is damaged ({', '.join(kinds)}); what could be read is "
                               "shown, and the original is kept unchanged.")
    return parsed


def _header(message: EmailMessage, name: str, parsed: ParsedMessage) -> str:
    """A header's decoded value ('' when absent); the raw value when it cannot be decoded, with a problem noted."""
    try:
        value = message.get(name)
        return "" if value is None else _SPACES.sub(" ", str(value)).strip()
    except Exception as exc:  # the header parser raises on some malformed values instead of recording a defect
        raw = next((value for key, value in message.raw_items() if key.lower() == name.lower()), "")
        parsed.problems.append(f"The {name} header could not be decoded ({type(exc).__name__}); it is shown as "
                               "written.")
        return _SPACES.sub(" ", str(raw)).strip()


def sent_at(date_header: str, parsed: ParsedMessage) -> datetime | None:
    """The Date header as an aware datetime in its own timezone (RFC 5322 section 3.3); None, with a problem
    noted, when it is missing a timezone or cannot be read (a header of "-0000" means the zone is unknown and is
    read as UTC, as RFC 5322 section 3.3 says)."""
    if not date_header:
        return None
    try:
        when = parsedate_to_datetime(date_header)
    except (TypeError, ValueError, IndexError):
        parsed.problems.append(f"The Date header “{date_header}” could not be read as a date; the message is "
                               "undated in threads.")
        return None
    if when.tzinfo is None:
        parsed.problems.append(f"The Date header “{date_header}” gives no timezone; it is read as UTC.")
        when = when.replace(tzinfo=UTC)
    return when


def first_message_id(value: str) -> str:
    """The first ``<id@host>`` in a header value ('' when none)."""
    found = _MESSAGE_ID.search(value or "")
    return found.group(0) if found else ""


def _leaves(part: EmailMessage, inside_alternative: bool = False):
    """Yield ``(leaf part, inside a multipart/alternative)`` in order; an attached message is a leaf (its own
    parts are its family's business, read when it is processed as an exhibit)."""
    if part.get_content_maintype() == "multipart":
        alternative = part.get_content_subtype() == "alternative"
        try:
            subparts = list(part.iter_parts())
        except Exception:
            subparts = []
        for sub in subparts:
            yield from _leaves(sub, inside_alternative or alternative)
        return
    yield part, inside_alternative


def _filename(part: EmailMessage) -> str:
    try:
        return (part.get_filename() or "").strip()
    except Exception:
        return ""


def _read_parts(message: EmailMessage, parsed: ParsedMessage, depth: int = 0) -> None:
    """Fill the body and attachments: the body is the first plain-text part (else the first HTML part) not
    named as a file; other text parts that are not files and not an alternative of the body join it (Apple Mail
    writes text after an attachment so); every other leaf is an attachment."""
    leaves = list(_leaves(message))
    body_part = None
    for wanted in ("text/plain", "text/html"):
        body_part = next((leaf for leaf, _ in leaves if leaf.get_content_type() == wanted and not _filename(leaf)
                          and not leaf.is_attachment()), None)
        if body_part is not None:
            break
    html_part = _html_rendering(message, body_part)
    opened: list[EmailMessage] = []
    texts = []
    html_index = None
    for index, (leaf, in_alternative) in enumerate(leaves, start=1):
        content_type = leaf.get_content_type()
        name = _filename(leaf)
        if content_type in _SMIME_OPAQUE:
            inner = _opened(leaf, parsed, depth)
            if inner is not None:
                opened.append(inner)
            continue
        if content_type in _SMIME_SIGNATURE:
            _add_security(parsed, "S/MIME-signed: the signature is kept in the original and was not verified.")
            continue
        is_text_body = (leaf is body_part or (content_type in ("text/plain", "text/html") and not name
                                              and not leaf.is_attachment() and not in_alternative))
        if is_text_body:
            text, problem = decode_text(leaf)
            if problem:
                parsed.problems.append(f"The body {problem}")
            texts.append(html_to_text(text) if content_type == "text/html" else text)
            if leaf is body_part:
                parsed.body_kind = "plain" if content_type == "text/plain" else "html"
                html_index = len(texts) - 1
            continue
        if in_alternative and content_type.startswith("text/") and content_type != "text/calendar" and not name:
            continue  # another rendering of the body (a meeting invitation's calendar part is not: it is kept)
        attachment = _attachment(leaf, name, index)
        if attachment.data is not None and (content_type in _TNEF or attachment.name.lower() == "winmail.dat"):
            parsed.attachments += _tnef_attachments(attachment, parsed)
        else:
            parsed.attachments.append(attachment)
    parsed.body = _joined(texts)
    if html_part is not None and html_index is not None:
        markup, problem = decode_text(html_part)
        if problem and html_part is not body_part:  # the body's own problem is noted already
            parsed.problems.append(f"The body's HTML version {problem}")
        if (nesting := nesting_depth(markup)) > MAX_NESTING:
            parsed.problems.append(f"The body's HTML nests its elements {nesting} deep, more than the {MAX_NESTING} "
                                   "laid out as HTML; its text is shown instead.")
        elif (rows := table_rows(markup)) > MAX_TABLE_ROWS:
            parsed.problems.append(f"The body's HTML holds {rows:,} table rows, more than the {MAX_TABLE_ROWS:,} laid "
                                   "out as HTML; its text is shown instead.")
        else:
            parsed.body_html = sanitised_html(markup)
            parsed.body_after_html = _joined(texts[html_index + 1:])
    for inner in opened:  # what an opaque signature wrapped: the message's content, read as if it were not wrapped
        before = parsed.body
        _read_parts(inner, parsed, depth + 1)
        parsed.body = _joined([before, parsed.body])


def _add_security(parsed: ParsedMessage, note: str) -> None:
    if note not in parsed.security:
        parsed.security = f"{parsed.security} {note}".strip()


def _opened(part: EmailMessage, parsed: ParsedMessage, depth: int) -> EmailMessage | None:
    """Say what an S/MIME ``pkcs7-mime`` part is (:func:`matters.email.smime.read_opaque`) and return the MIME
    entity an opaque signature wraps, parsed; None when there is none to read (encrypted, compressed, damaged)."""
    try:
        payload = part.get_payload(decode=True) or b""
    except Exception:
        payload = b""
    found = read_opaque(payload)
    if found.kind == "encrypted":
        _add_security(parsed, _SMIME_ENCRYPTED_NOTE)
        return None
    if found.kind == "compressed":
        _add_security(parsed, "S/MIME-compressed: its content is compressed inside the S/MIME wrapper (RFC 3274) "
                              "and was not unpacked; the original is kept unchanged.")
        return None
    if found.kind == "unknown":
        _add_security(parsed, f"An S/MIME part could not be read: {found.problem}. The original is kept unchanged.")
        return None
    carrying = (f" (it carries the certificate of {'; '.join(found.signers)})" if found.signers else "")
    if found.content is None or depth >= _SMIME_MAX_NESTING:
        why = found.problem or f"it is wrapped more than {_SMIME_MAX_NESTING} times"
        _add_security(parsed, f"S/MIME-signed{carrying}: the signature was not verified, and {why}; the original "
                              "is kept unchanged.")
        return None
    _add_security(parsed, f"S/MIME-signed (opaque){carrying}: the content shown was read out of the signature's "
                          "wrapper; the signature was not verified. The signed original is kept unchanged.")
    try:
        return email.message_from_bytes(found.content, policy=policy.default)
    except Exception:  # the parser is lenient; a guard
        return None


def _joined(texts: list[str]) -> str:
    return "\n\n".join(text.strip("\n") for text in texts if text.strip())


def _html_rendering(message: EmailMessage, body_part: EmailMessage | None) -> EmailMessage | None:
    """The HTML part a mail program shows for ``body_part``: itself when it is HTML, else the HTML alternative in
    the same ``multipart/alternative`` (RFC 2046 section 5.1.4: the last alternative the reader supports is the
    one shown, and a mail program supports HTML); None when there is none."""
    if body_part is None:
        return None
    if body_part.get_content_type() == "text/html":
        return body_part
    try:
        for part in message.walk():
            if part.get_content_type() != "multipart/alternative":
                continue
            leaves = [leaf for leaf, _ in _leaves(part)]
            if any(leaf is body_part for leaf in leaves):
                return next((leaf for leaf in reversed(leaves) if leaf.get_content_type() == "text/html"
                             and not _filename(leaf) and not leaf.is_attachment()), None)
    except Exception:  # a damaged structure: the plain body is shown
        return None
    return None


def _attachment(part: EmailMessage, name: str, index: int) -> Attachment:
    content_type = part.get_content_type()
    if not name:
        extension = ".eml" if content_type == "message/rfc822" else (mimetypes.guess_extension(content_type) or ".bin")
        name = f"attachment-{index}{extension}"
    if content_type == "message/rfc822":
        try:
            inner = part.get_payload(0)
            # The attached message's bytes as it was written: headers are not folded again (refold_source).
            data = inner.as_bytes(policy=policy.default.clone(refold_source="none", max_line_length=0))
            return Attachment(name, content_type, data, is_message=True)
        except Exception as exc:
            return Attachment(name, content_type, None, f"the attached message could not be read ({exc})")
    try:
        data = part.get_payload(decode=True)
    except Exception as exc:
        return Attachment(name, content_type, None, f"its encoding could not be decoded ({type(exc).__name__})")
    if data is None:
        return Attachment(name, content_type, None, "it holds no content")
    if part.defects:
        kinds = sorted({type(defect).__name__ for defect in part.defects})
        return Attachment(name, content_type, data, f"its encoding is damaged ({', '.join(kinds)}); the bytes "
                                                     "that could be decoded are kept")
    return Attachment(name, content_type, data)


def _tnef_attachments(wrapper: Attachment, parsed: ParsedMessage) -> list[Attachment]:
    """The files inside a TNEF ``winmail.dat`` (read with ``tnefparse``), in order; the wrapper itself, with a
    problem noted, when it cannot be unpacked."""
    try:
        from tnefparse.tnef import TNEF

        tnef = TNEF(wrapper.data, do_checksum=False)
        found = [Attachment(item.long_filename() or item.name or f"winmail-{number}.bin",
                            "application/octet-stream", bytes(item.data))
                 for number, item in enumerate(tnef.attachments, start=1) if item.data]
    except Exception as exc:  # tnefparse raises several types on damaged data; ImportError where not installed
        parsed.problems.append(f"The Outlook (TNEF) attachment “{wrapper.name}” could not be unpacked "
                               f"({type(exc).__name__}); it is kept as it came.")
        return [wrapper]
    if not found:
        parsed.problems.append(f"The Outlook (TNEF) attachment “{wrapper.name}” holds no files; it is kept as it "
                               "came.")
        return [wrapper]
    parsed.problems.append(f"The Outlook (TNEF) attachment “{wrapper.name}” was unpacked into "
                           f"{len(found)} file(s), each an attachment below.")
    return found


def decode_text(part: EmailMessage) -> tuple[str, str]:
    """A text part's content and a problem ('' when none). The declared charset is tried first; a missing,
    unknown or wrong one falls back to UTF-8, then Windows-1252 (what mail mislabelled as Latin-1 or left
    undeclared is most often written in, per the WHATWG Encoding Standard's label table)."""
    try:
        payload = part.get_payload(decode=True) or b""
    except Exception as exc:
        return "", f"could not be decoded ({type(exc).__name__}); it is not shown."
    declared = part.get_content_charset()
    if declared:
        try:
            return payload.decode(declared), ""
        except LookupError:
            problem = f"declares the charset “{declared}”, which is unknown"
        except UnicodeDecodeError:
            problem = f"is not valid in the charset it declares (“{declared}”)"
    else:
        try:
            return payload.decode("ascii"), ""
        except UnicodeDecodeError:
            problem = "declares no charset but is not plain ASCII"
    try:
        return payload.decode("utf-8"), f"{problem}; it was read as UTF-8."
    except UnicodeDecodeError:
        return payload.decode("cp1252", errors="replace"), f"{problem}; it was read as Windows-1252."


def normalised_subject(subject: str) -> str:
    """The subject without reply and forward prefixes and list tags, case-folded, spaces collapsed: what a thread's
    messages share ("RE: FW: Lease renewal" and "Lease  renewal" give "lease renewal")."""
    value = subject or ""
    while True:
        stripped = _SUBJECT_PREFIX.sub("", value, count=1)
        if stripped == value:
            break
        value = stripped
    return _SPACES.sub(" ", value).strip().casefold()[:500]


def normalised_body_sha256(body: str) -> str:
    """SHA-256 of the body text in Unicode NFC with every run of white space one space and the ends trimmed, so
    the same message exported by two mail programs (CRLF or LF, re-wrapped trailing spaces, a charset re-encoded)
    hashes alike."""
    text = _SPACES.sub(" ", unicodedata.normalize("NFC", body or "")).strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
