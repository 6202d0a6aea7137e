"""The leak scan of a production: what it must not hold (every redacted string, every withheld document's
text), read from the matter, and the scan of every file it wrote (:mod:`.bates.leaks`).

A production is scanned after it is built and before it is ``done``; what the scan finds fails it, its range void,
with the reason naming each file and place. The privilege log's fields go through the same scan
(:func:`log_findings`).
"""

import contextlib
import re
import tempfile
from pathlib import Path

import pymupdf
from django.conf import settings
from django.db.models import Q

from matters import storage
from matters.models import Exhibit, Page, PrivilegeBasis, Production, Redaction, RedactionReason
from matters.privilege import log
from matters.privilege.page_words import centre_of, page_words
from matters.privilege.services import entry_of, produced_title

from .bates.leak_pool import NativeScan, scan_volume
from .bates.leaks import Finding, IngestedPages, Scanner, Secrets
from .bates.redact import PLACEHOLDER_TITLE
from .bates.volume import DAT_FIELDS, INDEX_FIELDS

MAX_FINDINGS_SHOWN = 5
# The pages from which a production's natives are scanned beside the stamping (bates/leak_pool.py): under them,
# starting the child process costs about as much as it saves.
BESIDE_MIN_PAGES = 1000
# A search typed as a pattern is not a string to look for; one with none of these characters is.
_PATTERN_CHARACTERS = re.compile(r"[\\^$.|?*+()\[\]{}]")


class LeakFound(Exception):
    """Something that must not leave is in a production's files; the message names each place for the
    attorney."""


def production_secrets(production: Production) -> Secrets:
    """What ``production`` must not hold, less what it rightly holds elsewhere.

    Looked for: each withheld document's text (:meth:`Secrets.add_document`); the words under each redaction box
    of the original page (from its text layer: the run of words, and each word that holds a digit or begins with a
    capital, as names and numbers do), and the words a box was found by when they are words and not a pattern.
    Allowed (not looked for): the text of every page produced without a box, the words clear of every box on a
    redacted page, each produced document's label and the title of each one without a box, and what the
    production writes itself (the matter's name, client and case number, designations, reason codes and privilege
    bases, placeholder wording, the headings of the load files, the index and the log). On a page read by OCR the
    words under a box come from Tesseract's word boxes."""
    secrets = Secrets()
    if not _holds_privilege(production):
        # Nothing to look for: the texts that would be allowed are not read (a production of 100,000 pages read
        # every page's text and split it into words for nothing before it stamped its first page).
        return secrets
    matter = production.matter
    allowed: list[str] = [
        matter.name, matter.client, matter.case_number, production.prefix, production.volume, PLACEHOLDER_TITLE,
        "Privilege basis Withheld Production index Label Begin End Pages Title EXHIBIT", *RedactionReason.labels,
        *PrivilegeBasis.labels, " ".join(DAT_FIELDS + INDEX_FIELDS + log.FIELDS + log.HEADINGS)]
    documents = production.documents.select_related("exhibit", "privilege_entry")
    for document in documents:
        exhibit, entry = document.exhibit, entry_of(document)
        # A family's duplicate attachment is produced with the pages of the exhibit it repeats.
        pages = list(exhibit.content.pages.order_by("number").prefetch_related("redactions"))
        if entry is not None and entry.withheld:
            secrets.add_document("\n".join(p.text for p in pages), withheld_text_of(exhibit))
            continue
        allowed += [exhibit.label, document.confidentiality]
        if entry is not None:
            allowed.append(entry.basis_text)
        redacted = [p for p in pages if p.redactions.all()]
        if not redacted:  # a redacted document's title is looked at like the rest: it may name what was redacted
            allowed.append(produced_title(document))
        allowed += [p.text for p in pages if not p.redactions.all()]
        if not redacted:
            continue
        with pymupdf.open(storage.display_pdf(exhibit.content)) as pdf:
            for page in redacted:
                what = f"redacted on {exhibit.display_label}, page {page.number}"
                rects = [pymupdf.Rect(r.rect) for r in page.redactions.all()]
                for redaction in page.redactions.all():
                    if redaction.found_by and not _PATTERN_CHARACTERS.search(redaction.found_by):
                        secrets.add(redaction.found_by, what)
                # The text layer's words, or a scan's from Tesseract: the words under a box on a scan are looked
                # for as well (in the privilege log, which may have read them from the page's OCR text).
                shown = page_words(page, pdf[page.number - 1])
                for rect in rects:
                    under = [w.text for w in shown if centre_of(w) in rect]
                    secrets.add(" ".join(under), what)
                    for word in under:
                        if word[:1].isupper() or any(c.isdigit() for c in word):
                            secrets.add(word, what)
                allowed.append(" ".join(w.text for w in shown if not any(centre_of(w) in rect for rect in rects)))
    for text in allowed:
        secrets.allow(text)
    return secrets


def _holds_privilege(production: Production) -> bool:
    """Whether ``production`` withholds a document or has a redaction box on a page it produces (of a document's
    own exhibit, or of the exhibit a duplicate repeats): only then has its leak scan anything to look for."""
    if production.documents.filter(privilege_entry__withheld=True).exists():
        return True
    produced = production.documents.values("exhibit")
    repeated = production.documents.filter(exhibit__status=Exhibit.Status.DUPLICATE).values("exhibit__duplicate_of")
    return Redaction.objects.filter(Q(page__exhibit__in=produced) | Q(page__exhibit__in=repeated)).exists()


def _ocr(data: bytes) -> str:
    from matters.exhibits.ingest.ocr import ocr_page_image

    with tempfile.TemporaryDirectory(prefix="lawdesk-leaks-") as work:
        path = Path(work) / "page.tif"
        path.write_bytes(data)
        return ocr_page_image(path, lang=settings.LAWDESK_OCR_LANG, dpi=300).text


def ingested_pages(production: Production) -> IngestedPages:
    """The pages of the production's documents whose text ingest read from the PDF's own text layer
    (``Page.Source.PDF``) and that no box is drawn on: a produced page that is one of them unchanged holds its
    stored text (:class:`.bates.leaks.IngestedPages`). Each by the key ingest stored with its text
    (``Page.text_key``); a page stored without one (ingested before keys were) by the key of the exhibit's display
    PDF, the file ingest read, worked out now. A withheld document's pages are not among them (a placeholder is
    produced instead)."""
    ingested = IngestedPages()
    for document in production.documents.select_related("exhibit", "privilege_entry"):
        entry = entry_of(document)
        if entry is not None and entry.withheld:
            continue
        unkeyed = {}
        for page in document.exhibit.pages.filter(source=Page.Source.PDF, redactions__isnull=True).only(
                "number", "text", "text_key"):
            if page.text_key:
                ingested.add_key(bytes.fromhex(page.text_key), page.text)
            else:
                unkeyed[page.number - 1] = page.text
        if unkeyed:
            with pymupdf.open(storage.display_pdf(document.exhibit)) as pdf:
                ingested.add(pdf, unkeyed)
    return ingested


def scan_production(production: Production, secrets: Secrets, zip_path: Path, pdf_path: Path,
                    read_images: set[str] = frozenset(), ingested: IngestedPages | None = None,
                    natives: NativeScan | None = None) -> list[Finding]:
    """Scan every member of the volume ZIP and the combined PDF for ``secrets``; return the findings (empty when
    clean). ``read_images``: the volume's page images (member names) to read through OCR (the pages a redaction
    or a placeholder changed); other page images show pages whose text was allowed and are not read. A page the
    production left as ingest read it is not extracted again: its stored text stands for it (``ingested``, from
    :func:`ingested_pages`, worked out here when not given). ``natives``: the natives already handed to a
    :class:`.bates.leak_pool.NativeScan` as they were written, whose findings are taken over instead of reading
    them again."""
    if ingested is None and secrets:
        ingested = ingested_pages(production)
    scanner = Scanner(secrets, ocr=_ocr, ingested=ingested)
    scan_volume(scanner, zip_path, pdf_path, f"the combined PDF {pdf_path.name.removesuffix('.part')}", read_images,
                natives)
    return scanner.findings


def native_scan(production: Production, secrets: Secrets, ingested: IngestedPages | None):
    """A context manager giving a :class:`.bates.leak_pool.NativeScan` for ``production``'s natives, to hand each
    to as it is written, when there is something to look for and the production has at least BESIDE_MIN_PAGES
    pages; else giving None (the natives are read with the rest of the volume)."""
    if not secrets or production.page_count < BESIDE_MIN_PAGES:
        return contextlib.nullcontext()
    return NativeScan(secrets, frozenset(ingested.texts) if ingested else frozenset())


def withheld_text_of(exhibit) -> str:
    """What a withheld document's text is called among the secrets (and in a finding)."""
    return f"text of the withheld {exhibit.display_label}"


def log_findings(rows: list[dict], secrets: Secrets, production: Production | None = None) -> list[Finding]:
    """The privilege log's fields (rows as :func:`matters.privilege.log.log_rows` gives them) that hold a
    secret. With ``production`` (whose log the rows are, in the same order), a row's date, author, recipients
    and type that are still its message's own header facts (:func:`matters.privilege.log.message_facts`) are not
    a leak of that withheld message: its header block holds them, and the log must state them."""
    own: list[tuple[str, dict]] = [("", {})] * len(rows)
    if production is not None:
        own = []
        for entry in log.log_entries(production):
            source, facts = log.message_facts(entry.document.exhibit)
            source_exhibit = entry.document.exhibit if source == entry.document.exhibit_id else (
                Exhibit.objects.filter(pk=source).first() if source else None)
            own.append((withheld_text_of(source_exhibit) if source_exhibit else "", facts or {}))
    findings = []
    for row, (source_what, facts) in zip(rows, own, strict=True):
        for name, value in row.items():
            stated = name in facts and value == facts[name]
            findings += [Finding(f"the privilege log, {row.get('bates_begin') or 'a row'}, {name}", found, what)
                         for found, what in secrets.find(str(value or ""))
                         if not (stated and what == source_what)]
    return findings


def leak_message(findings: list[Finding]) -> str:
    shown = "; ".join(str(f) for f in findings[:MAX_FINDINGS_SHOWN])
    more = f" and {len(findings) - MAX_FINDINGS_SHOWN} more" if len(findings) > MAX_FINDINGS_SHOWN else ""
    return (f"what must not leave is in the production's files: {shown}{more}. Nothing of this production was "
            "kept; remove it at its source (redact it, or withhold the document) and produce again.")
