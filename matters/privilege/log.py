"""The privilege log of a production: one row per withheld or redacted document, as CSV and as PDF.

Columns (docs/glossary.md, "Privilege log"): ``bates_begin``, ``bates_end``, ``date``, ``author``,
``recipients``, ``document_type``, ``treatment`` (``withheld`` or ``redacted``), ``privilege_basis``,
``description``, ``family`` (an attachment's message, a message's withheld attachments: :func:`family_of_rows`).
Fed. R. Civ. P. 26(b)(5)(A)(ii) asks for a description of the nature of the documents withheld that, without
revealing the privileged information, enables other parties to assess the claim; date, author and recipients are
the usual columns courts expect. Date, author, recipients and type are prefilled from the
document's own metadata (an email message's parsed headers, Bcc included, which its attachments share; PDF
document information; Word core properties; or an email or memo header on its first page) and stay editable.
"""

import csv
import html
import io
import re
import zipfile
from datetime import timedelta
from datetime import timezone as dt_timezone

import pymupdf
from django.core.exceptions import ValidationError
from django.db import transaction
from lxml import etree

from matters import storage
from matters.audit.services import audit_record
from matters.html_pdf import html_pdf
from matters.models import EmailMessage, Exhibit, PrivilegeLogEntry, Production, RedactionReason
from matters.permissions import require

FIELDS = ["bates_begin", "bates_end", "date", "author", "recipients", "document_type", "treatment",
          "privilege_basis", "description", "family"]
EDITABLE = ["date", "author", "recipients", "document_type", "description"]
_HEADER = re.compile(r"^\s*(from|to|cc|date|sent|subject)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_PDF_DATE = re.compile(r"^D:(\d{4})(\d{2})?(\d{2})?")
_CORE = {"dc": "http://purl.org/dc/elements/1.1/", "dcterms": "http://purl.org/dc/terms/",
         "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"}


def _pdf_date(value: str) -> str:
    found = _PDF_DATE.match(value or "")
    if not found:
        return ""
    return "-".join(part for part in found.groups() if part)


def _docx_core(exhibit: Exhibit) -> dict:
    """Author and created date from a Word file's core properties (docProps/core.xml), parsed without entities
    or network access."""
    try:
        with zipfile.ZipFile(storage.blob_path(exhibit.sha256)) as package:
            data = package.read("docProps/core.xml")
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
        root = etree.fromstring(data, parser)
    except Exception:  # no core properties, or damaged: nothing to prefill
        return {}
    author = root.findtext("dc:creator", default="", namespaces=_CORE).strip()
    created = root.findtext("dcterms:created", default="", namespaces=_CORE).strip()[:10]
    return {"author": author, "date": created}


def _document_type(exhibit: Exhibit, headers: dict) -> str:
    if {"from", "to"} <= headers.keys() and ("subject" in headers or "sent" in headers):
        return "Email"
    first = (exhibit.pages.order_by("number").values_list("text", flat=True).first() or "")[:400].upper()
    if "MEMORANDUM" in first:
        return "Memorandum"
    return {"docx": "Word document", "image": "Image", "workbook": "Spreadsheet"}.get(exhibit.kind, "PDF document")


def prefill(exhibit: Exhibit) -> dict:
    """Date, author, recipients and document type for a log row, from the document itself; '' where unknown.

    An email message gives its own headers (:func:`_message_prefill`); an attachment takes its message's, typed
    "Attachment". Any other document: its PDF or Word metadata, else an email or memo header on its first page."""
    if (found := _message_prefill(exhibit)) is not None:
        return found
    exhibit = exhibit.content  # a duplicate is read through the exhibit whose pages it repeats
    first_text = exhibit.pages.order_by("number").values_list("text", flat=True).first() or ""
    headers: dict[str, str] = {}
    for name, value in _HEADER.findall(first_text[:3000]):
        headers.setdefault(name.lower(), value)
    meta = {}
    if exhibit.kind == Exhibit.Kind.DOCX:
        meta = _docx_core(exhibit)
    else:
        try:
            with pymupdf.open(storage.display_pdf(exhibit)) as doc:
                info = doc.metadata or {}
            meta = {"author": (info.get("author") or "").strip(), "date": _pdf_date(info.get("creationDate", ""))}
        except Exception:  # an unreadable file has no metadata to offer
            meta = {}
    recipients = "; ".join(v for v in (headers.get("to", ""), headers.get("cc", "")) if v)
    return {
        "date": (meta.get("date") or headers.get("date") or headers.get("sent") or "")[:40],
        "author": (meta.get("author") or headers.get("from") or "")[:300],
        "recipients": recipients,
        "document_type": _document_type(exhibit, headers)[:100],
    }


def _message_prefill(exhibit: Exhibit) -> dict | None:
    """The log fields of an email message from its own parsed headers (:class:`matters.models.EmailMessage`, never
    the text of its page): author is From, recipients To, Cc and Bcc (a blind copy is a recipient the privilege
    claim must account for), the date the day it was sent in the sender's own timezone (YYYY-MM-DD), type "Email".
    An attachment (or an attachment of an attachment) takes the fields of the nearest message above it, typed
    "Attachment"; a message attached to a message has its own. None for a document of no message."""
    return message_facts(exhibit)[1]


def message_facts(exhibit: Exhibit) -> tuple[int | None, dict | None]:
    """``(id of the message exhibit the facts come from, the fields of :func:`_message_prefill`)``; ``(None,
    None)`` for a document of no message. The leak scan lets a log row state these facts of a withheld message
    (they are what Fed. R. Civ. P. 26(b)(5)(A) asks the log to state), though its header block holds them."""
    current, depth = exhibit, 0
    while current is not None and depth < 100:
        record = EmailMessage.objects.filter(exhibit_id=current.pk).first()
        if record is not None:
            local = None
            if record.sent_at is not None:
                offset = timedelta(minutes=record.sent_utc_offset_min or 0)
                local = record.sent_at.astimezone(dt_timezone(offset))
            return current.pk, {
                "date": f"{local:%Y-%m-%d}" if local else "",
                "author": " ".join(record.sender.split())[:300],
                "recipients": "; ".join(" ".join(v.split()) for v in (record.to, record.cc, record.bcc) if v.strip()),
                "document_type": "Email" if current.pk == exhibit.pk else "Attachment",
            }
        current, depth = current.parent, depth + 1
    return None, None


def log_entries(production: Production):
    return PrivilegeLogEntry.objects.filter(document__production=production).select_related(
        "document", "document__exhibit").order_by("document__order")


def family_of_rows(production: Production) -> dict[int, str]:
    """The ``family`` column of the log, by production document id, for the documents that have one.

    A withheld or redacted attachment names the message it was attached to, so the other side can see which
    message it went with: ``attachment 2 of RUIZ000010, email “Lease renewal”`` (the parent's first Bates number in
    this production, else its exhibit label). The subject is named only when the parent is produced without
    redactions, where the other side reads it anyway; a parent withheld or redacted is said to be so instead, since
    its subject may be what is privileged. A message's row names its withheld attachments
    (``withheld attachments: RUIZ000012 (attachment 1)``). Fed. R. Civ. P. 26(b)(5)(A) asks that a withheld
    document be described so the claim can be assessed; which family it belongs to is part of that."""
    documents = list(production.documents.select_related("exhibit__parent", "privilege_entry").order_by("order"))
    by_exhibit = {document.exhibit_id: document for document in documents}
    parents = {document.exhibit.parent_id for document in documents if document.exhibit.parent_id}
    subjects = dict(EmailMessage.objects.filter(exhibit_id__in=parents).values_list("exhibit_id", "subject"))

    def entry(document):
        try:
            return document.privilege_entry
        except PrivilegeLogEntry.DoesNotExist:
            return None

    def where(document, exhibit) -> str:
        if document is not None and document.first_number:
            return production.bates(document.first_number)
        return exhibit.display_label

    withheld_children: dict[int, list[str]] = {}
    for document in documents:
        exhibit, own = document.exhibit, entry(document)
        if exhibit.parent_id and own is not None and own.withheld:
            withheld_children.setdefault(exhibit.parent_id, []).append(
                f"{where(document, exhibit)} (attachment {exhibit.family_position})")
    family: dict[int, str] = {}
    for document in documents:
        exhibit, own = document.exhibit, entry(document)
        if own is None:
            continue
        parts = []
        if exhibit.parent_id:
            parent_document = by_exhibit.get(exhibit.parent_id)
            parent_entry = entry(parent_document) if parent_document is not None else None
            text = f"attachment {exhibit.family_position} of {where(parent_document, exhibit.parent)}"
            if parent_document is None:
                text += " (not in this production)"
            elif parent_entry is not None:
                text += f", {'withheld' if parent_entry.withheld else 'redacted'}"
            elif exhibit.parent_id in subjects:
                text += f", email “{' '.join(subjects[exhibit.parent_id].split()) or '(no subject)'}”"
            parts.append(text)
        if exhibit.pk in withheld_children:
            parts.append("withheld attachments: " + ", ".join(withheld_children[exhibit.pk]))
        if parts:
            family[document.pk] = "; ".join(parts)
    return family


def log_rows(production: Production) -> list[dict]:
    """The log's rows, keyed by FIELDS, in production order."""
    rows = []
    family = family_of_rows(production)
    for entry in log_entries(production):
        document = entry.document
        begin = production.bates(document.first_number) if document.first_number else ""
        end = production.bates(document.last_number) if document.last_number else ""
        if entry.withheld:
            basis = entry.basis_label
        else:
            codes = [c.strip() for c in entry.redaction_reasons.split(",") if c.strip()]
            basis = "; ".join(RedactionReason(c).label if c in RedactionReason.values else c for c in codes)
        rows.append({"bates_begin": begin, "bates_end": end, "date": entry.date, "author": entry.author,
                     "recipients": entry.recipients, "document_type": entry.document_type,
                     "treatment": "withheld" if entry.withheld else "redacted", "privilege_basis": basis,
                     "description": entry.description, "family": family.get(document.pk, "")})
    return rows


def log_csv_bytes(production: Production) -> bytes:
    """The log as CSV (UTF-8 with a byte-order mark so spreadsheet programs read accents, CRLF line ends)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(log_rows(production))
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


_CSS = """
* { font-family: sans-serif; }
h1 { font-size: 13pt; margin: 0 0 4pt 0; }
p { font-size: 8pt; margin: 0 0 8pt 0; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 0.5pt solid #000; padding: 2pt; font-size: 7pt; vertical-align: top; text-align: left; }
th { background-color: #ddd; }
"""
HEADINGS = ["Bates begin", "Bates end", "Date", "Author", "Recipients", "Type", "Treatment", "Privilege basis",
            "Description", "Family"]


def log_pdf_bytes(production: Production) -> bytes:
    """The log as a landscape Letter PDF with one table row per document (PyMuPDF Story, which flows the table
    over as many pages as it needs)."""
    rows = log_rows(production)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(row[f]))}</td>" for f in FIELDS) + "</tr>" for row in rows)
    heading = "".join(f"<th>{h}</th>" for h in HEADINGS)
    matter = production.matter
    document = (f"<h1>Privilege log — {html.escape(matter.name)}</h1>"
                f"<p>{html.escape(matter.case_number)} · Production {html.escape(str(production))} "
                f"({html.escape(production.volume)}) · {len(rows)} document(s) withheld or redacted</p>"
                f"<table><tr>{heading}</tr>{body}</table>")
    return html_pdf(document, _CSS, page=pymupdf.paper_rect("letter-l"), margin_pt=36)


def log_entry_update(*, entry: PrivilegeLogEntry, user, **fields: str) -> PrivilegeLogEntry:
    """Change the editable fields of a log row (EDITABLE); recorded in the audit log. Raises PermissionDenied for
    a user who may not serve productions, ValidationError for a value holding what the production must not
    (a redacted string, a withheld document's text: the production's leak scan, which the log goes through)."""
    from matters.productions.leak_scan import production_secrets

    require(user, "serve_production", entry.document.production.matter)
    changed = {}
    limits = {f.name: f.max_length for f in PrivilegeLogEntry._meta.fields if f.name in EDITABLE}
    for name in EDITABLE:
        if name in fields:
            value = (fields[name] or "").strip()
            if limits.get(name):
                value = value[:limits[name]]
            if value != getattr(entry, name):
                changed[name] = value
                setattr(entry, name, value)
    if changed:
        secrets = production_secrets(entry.document.production)
        for name, value in changed.items():
            found = secrets.find(value)
            if found:
                entry.refresh_from_db()
                raise ValidationError({name: f"“{found[0][0]}” is {found[0][1]}: the privilege log goes to the other "
                                             "side with the production and must not hold it."})
        with transaction.atomic():
            entry.updated_by = user
            entry.save()
            audit_record(action="privilege_log.edit", actor=user, matter=entry.document.production.matter,
                         obj=entry, detail={"document": entry.document_id, "fields": sorted(changed)})
    return entry
