"""Bates productions, second step (in the worker): stamp and combine the exhibits, write the volume.

:func:`production_run` stamps a production whose range :mod:`matters.productions.reservation` reserved. It holds
the production's lease while it works (:mod:`matters.leases`); if its worker dies, :mod:`matters.recovery` has it
stamped again from the start in the same range. Files are written under temporary names and renamed once whole,
and the generated-document records of its files are written only with ``done``, so an interrupted attempt leaves
neither a file that looks finished nor a record of one. If stamping fails, the range stays reserved and is void.
"""

import hashlib
import logging
import os
import shutil
import zipfile
from dataclasses import dataclass

import pymupdf
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_record
from matters.leases import LeaseKeeper, LeaseLost, lease_expiry, lease_watch_schedule, worker_id
from matters.models import BatesPage, Origin, Production, ProductionDocument
from matters.privilege.log import log_rows
from matters.privilege.services import entry_of, produced_source, produced_title
from matters.provenance import generated_record

from .bates.dedup import ResourceMerger
from .bates.leak_pool import NativeScan
from .bates.leaks import IngestedPages, Secrets
from .bates.links import file_key, link_files, link_natives, outside_links
from .bates.pageobjects import appended_pages, pdf_of
from .bates.stamp import StampSpec, cover_sheet, stamp_and_append
from .bates.tags import retarget_structure
from .bates.volume import dat_bytes, index_csv_bytes, opt_bytes, tiff_bytes
from .delivery import production_files
from .families import add_family_and_email_fields
from .leak_scan import (
    LeakFound,
    ingested_pages,
    leak_message,
    log_findings,
    native_scan,
    production_secrets,
    scan_production,
)
from .natives import native_suffix, slip_sheet

logger = logging.getLogger(__name__)

INDEX_LINES_PER_PAGE = 40


@dataclass
class _Planned:
    document: ProductionDocument
    cover_number: int | None
    numbers: list[int]


def _plan(production: Production) -> list[_Planned]:
    """Give every page its number before stamping, so the index page can list the ranges first."""
    number = production.first_number
    plan = []
    for document in production.documents.select_related("exhibit", "privilege_entry"):
        cover_number = None
        if production.cover_sheets == Production.CoverSheets.NUMBERED:
            cover_number, number = number, number + 1
        numbers = list(range(number, number + document.page_count))
        number += document.page_count
        plan.append(_Planned(document, cover_number, numbers))
    return plan


def _index_pages(production: Production, plan: list[_Planned]) -> pymupdf.Document:
    doc = pymupdf.open()
    lines = [f"{'Label':<10}{'Begin':<22}{'End':<22}{'Pages':>6}  Title"]
    for item in plan:
        exhibit, numbers = item.document.exhibit, ([item.cover_number] if item.cover_number else []) + item.numbers
        lines.append(f"{exhibit.label:<10}{production.bates(numbers[0]):<22}{production.bates(numbers[-1]):<22}"
                     f"{len(numbers):>6}  {produced_title(item.document)[:60]}")
    for start in range(0, len(lines) - 1, INDEX_LINES_PER_PAGE):
        page = doc.new_page(width=612, height=792)
        page.insert_text((54, 60), f"Production index — {production.matter.name}"[:90], fontname="helv", fontsize=13)
        page.insert_text((54, 80), f"{production.first} – {production.last}, {production.page_count} pages",
                         fontname="helv", fontsize=10)
        body = [lines[0]] + lines[1 + start:1 + start + INDEX_LINES_PER_PAGE]
        page.insert_text((54, 110), "\n".join(body), fontname="cour", fontsize=8, lineheight=1.6)
    return doc


def production_run(*, production_id: int) -> Production:
    """Stamp, combine and pack a ``stamping`` production; return it ``done``, or ``failed`` with its range void.

    The worker claims the production with a lease (:mod:`matters.leases`) and renews it while it stamps; a
    production already claimed by a live worker, or no longer ``stamping``, is returned unchanged. If the worker
    dies, :mod:`matters.recovery` has it stamped again from the start in the same range. Files are written under
    temporary names and renamed once whole, so a stopped attempt never leaves a file that looks finished.
    """
    production = Production.objects.select_related("matter").get(pk=production_id)
    owner = worker_id()
    if not Production.objects.filter(pk=production.pk, status=Production.Status.STAMPING, lease_owner="").update(
            lease_owner=owner, lease_expires_at=lease_expiry(settings.LAWDESK_DOCUMENT_LEASE_S), pages_done=0):
        return production
    lease_watch_schedule("production", production.pk)
    keeper = LeaseKeeper(model=Production, pk=production.pk, owner=owner, lease_s=settings.LAWDESK_DOCUMENT_LEASE_S,
                         live={"status": Production.Status.STAMPING})
    with keeper:
        return _run_claimed(production, owner, keeper)


def _run_claimed(production: Production, owner: str, keeper: LeaseKeeper) -> Production:
    out_dir = storage.production_dir(production.pk)
    shutil.rmtree(out_dir, ignore_errors=True)
    try:
        # Numbers an interrupted attempt gave pages are given again, to the same pages, by this one.
        BatesPage.objects.filter(production=production).delete()
        out_dir.mkdir(parents=True)
        _build(production, owner, keeper)
    except LeaseLost:
        logger.warning("production %s was taken over by another worker; this one stops", production.pk)
        production.refresh_from_db()
        return production
    except Exception as exc:  # any failure voids the range; the reason is kept for the attorney
        logger.exception("production %s failed", production.pk)
        if keeper.lost:  # the folder is the new owner's now
            production.refresh_from_db()
            return production
        shutil.rmtree(out_dir, ignore_errors=True)
        reason = (storage.DISK_FULL_MESSAGE if storage.is_disk_full(exc)
                  else f"The production could not be made: {exc}")
        with transaction.atomic():
            if not Production.objects.filter(pk=production.pk, lease_owner=owner,
                                             status=Production.Status.STAMPING).update(
                    status=Production.Status.FAILED, reason=reason, finished_at=timezone.now(), lease_owner="",
                    lease_expires_at=None):
                production.refresh_from_db()
                return production
            BatesPage.objects.filter(production=production).delete()
            production.refresh_from_db()
            audit_record(action="production.void", matter=production.matter, obj=production,
                         detail={"first": production.first, "last": production.last, "reason": production.reason})
        return production
    production.refresh_from_db()
    return production


def _build(production: Production, owner: str, keeper: LeaseKeeper) -> None:
    # What the volume must not hold, read before stamping (the leak scan, leak_scan.py). A large production's
    # natives are scanned beside the stamping as each is written; the child process doing it stops with the
    # production, however it ends.
    secrets = production_secrets(production)
    ingested = ingested_pages(production) if secrets else None
    with native_scan(production, secrets, ingested) as natives_scan:
        _build_volume(production, owner, keeper, secrets, ingested, natives_scan)


def _build_volume(production: Production, owner: str, keeper: LeaseKeeper, secrets: Secrets,
                  ingested: IngestedPages | None, natives_scan: NativeScan | None) -> None:
    spec = StampSpec.from_position(production.position)
    plan = _plan(production)
    volume = production.volume
    combined = _index_pages(production, plan) if production.with_index else pymupdf.open()
    # Fonts, images and forms the documents share are kept once as each is appended (bates/dedup.py).
    merger = ResourceMerger(pdf_of(combined))
    toc, dat_rows, index_rows, opt_documents = [], [], [], []
    dat_documents: list = []  # (exhibit, own pages produced) of each DAT row, for its family and email fields
    # Where each document's own first page lands, for links between documents (bates/links.py).
    natives, starts, stamped_documents = {}, {}, []
    # The page images a redaction or a placeholder changed (read through OCR by the leak scan).
    changed_images = set()
    # (sha256, title) of each native, recorded as generated documents only when the production is done.
    native_records: list[tuple[str, str]] = []
    # The suffix each document's native has: a spreadsheet is produced as itself (natives.py), anything else as PDF.
    suffixes = {}
    for item in plan:
        shift = 1 if item.cover_number is not None else 0
        entry = entry_of(item.document)
        suffixes[item.document.pk] = ("" if entry is not None and entry.withheld
                                      else native_suffix(item.document.exhibit)) or ".pdf"
        natives[file_key(item.document.exhibit.original_name)] = (
            f"{production.bates(item.cover_number if shift else item.numbers[0])}{suffixes[item.document.pk]}", shift)
    files = production_files(production)
    archive_path = files["zip"]
    archive_part = archive_path.with_name(archive_path.name + ".part")
    with zipfile.ZipFile(archive_part, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in plan:
            if keeper.lost:
                raise LeaseLost(f"production {production.pk}")
            document, exhibit = item.document, item.document.exhibit
            produced = produced_source(document)  # a withheld document's placeholder, or redactions applied
            source, page_texts, title = produced.pdf, produced.page_texts, produced_title(document)
            suffix = suffixes[document.pk] if produced.own_pages else ".pdf"
            if suffix != ".pdf":
                # Produced natively: the page stream holds one slip sheet; the text is every printed page's.
                source.close()
                source = slip_sheet(f"NATIVES\\{production.bates(item.numbers[0])}{suffix}")
                page_texts = ["\n".join(page_texts)]
            if source.page_count != document.page_count:
                raise ValueError(f"{exhibit.display_label} has {source.page_count} pages, not {document.page_count}.")
            toc.append([1, f"Exhibit {exhibit.label} – {title}", combined.page_count + 1])
            numbers = list(item.numbers)
            if production.cover_sheets != Production.CoverSheets.NONE:
                covers = pymupdf.open()
                cover_sheet(covers, f"EXHIBIT {exhibit.label}")
                if item.cover_number is None:
                    # An unnumbered slip sheet is in the combined PDF only; its font is every other sheet's.
                    first_new_object = combined.xref_length()
                    combined.insert_pdf(covers)
                    merger.merge(appended_pages(combined, 1), first_new_object)
                else:
                    # A numbered cover sheet is the document's first page everywhere: BEGBATES, native, text, image.
                    source.insert_pdf(covers, start_at=0)
                    numbers.insert(0, item.cover_number)
                    page_texts.insert(0, f"EXHIBIT {exhibit.label}")
            bates = [production.bates(n) for n in numbers]
            stamped = stamp_and_append(combined, source, bates, spec, document.confidentiality,
                                       what=exhibit.display_label, keep_forms=production.keep_forms,
                                       merger=merger)
            shift = 1 if item.cover_number is not None else 0
            starts[file_key(exhibit.original_name)] = (stamped.start + shift, document.page_count)
            stamped_documents.append(stamped)
            if stamped.unresolved_names:
                logger.warning("production %s: %s links to named destinations that name no page: %s",
                               production.pk, exhibit.display_label, stamped.unresolved_names)
            link_natives(source, stamped.file_links, natives)
            # Counted, not named: a file name the other side is not given (a folder, a privileged memo's title) is
            # itself what a production must not carry.
            outside = len(outside_links(stamped.file_links, natives))
            removed = produced.removed + ([f"{outside} link{'s' if outside != 1 else ''} to files outside the "
                                           "production"] if outside else [])
            retarget_structure(pdf_of(source), stamped.tagged)  # the native keeps its tags (bates/tags.py)
            native = f"{volume}/NATIVES/{bates[0]}{suffix}"
            if suffix != ".pdf":
                # The original file, byte for byte; it is the matter's own evidence, not LawDesk's output, so it
                # is not recorded as a generated document.
                archive.write(storage.blob_path(exhibit.content.sha256), native)
            else:
                native_bytes = source.tobytes(garbage=2, deflate=True)
                archive.writestr(native, native_bytes)
                if natives_scan is not None:
                    natives_scan.submit(native, native_bytes)
                native_records.append((hashlib.sha256(native_bytes).hexdigest(),
                                       f"{bates[0]}.pdf, native of {exhibit.display_label} in production {production}"))
            text = "\f".join(f"[{b}]\n{t}\n" for b, t in zip(bates, page_texts))
            text_path = f"{volume}/TEXT/{bates[0]}.txt"
            archive.writestr(text_path, text.encode("utf-8"))
            if production.with_images:
                redacted = (set(exhibit.content.pages.filter(redactions__isnull=False).values_list("number", flat=True))
                            if produced.own_pages else None)
                for index, (page, number) in enumerate(zip(source, bates)):
                    archive.writestr(f"{volume}/IMAGES/{number}.tif", tiff_bytes(page))
                    if redacted is None or index - shift + 1 in redacted:
                        changed_images.add(f"{volume}/IMAGES/{number}.tif")
                opt_documents.append(bates)
            source.close()
            pages = list(exhibit.content.pages.order_by("number")) if produced.own_pages else [None]
            rows = ([BatesPage(production=production, document=document, page=p, number=n, bates=production.bates(n))
                     for p, n in zip(pages, item.numbers)]
                    + ([BatesPage(production=production, document=document, page=None, number=item.cover_number,
                                  bates=production.bates(item.cover_number))] if item.cover_number else []))
            first, last = bates[0], bates[-1]
            # A withheld document's hash would identify it; its row carries only its numbers and the placeholder.
            sha256 = exhibit.sha256 if produced.own_pages else ""
            dat_documents.append((exhibit, produced.own_pages))
            dat_rows.append({"BEGBATES": first, "ENDBATES": last, "PAGECOUNT": len(numbers), "TITLE": title,
                             "ORIGIN": exhibit.origin, "CUSTODIAN": "; ".join(exhibit.custodian_names),
                             "CONFIDENTIALITY": document.confidentiality, "SHA256": sha256,
                             "TEXTPATH": text_path.replace("/", "\\"), "NATIVEPATH": native.replace("/", "\\")})
            index_rows.append({"label": exhibit.label, "title": title, "first_bates": first,
                               "last_bates": last, "pages": len(numbers), "sha256": sha256,
                               "origin": exhibit.origin, "confidentiality": document.confidentiality,
                               "removed": "; ".join(removed)})
            # A document's numbers, its range and the production's progress in one short transaction: three
            # autocommit writes took SQLite's lock three times in a row for every document stamped.
            with transaction.atomic():
                BatesPage.objects.bulk_create(rows)
                ProductionDocument.objects.filter(pk=document.pk).update(first_number=numbers[0],
                                                                         last_number=numbers[-1])
                Production.objects.filter(pk=production.pk).update(
                    pages_done=numbers[-1] - production.first_number + 1)
        add_family_and_email_fields(dat_rows, dat_documents)
        archive.writestr(f"{volume}/DATA/{volume}.dat", dat_bytes(dat_rows))
        if production.with_images:
            archive.writestr(f"{volume}/DATA/{volume}.opt", opt_bytes(volume, opt_documents))
        archive.writestr(f"{volume}/index.csv", index_csv_bytes(index_rows))
    for stamped in stamped_documents:
        link_files(combined, stamped.start, stamped.file_links, starts)
    combined.set_toc(toc)
    pdf_path = files["pdf"]
    # Duplicates were merged as the documents came in (bates/dedup.py): garbage=2 drops what nothing refers to
    # and numbers the objects afresh, in time linear in the objects. garbage=4's own merge of duplicates
    # compares each object with those before it, minutes at 50,000 pages.
    pdf_part = pdf_path.with_name(pdf_path.name + ".part")
    combined.save(pdf_part, garbage=2, deflate=True)
    combined.close()
    # Both files keep their .part names until the scan finds them clean: a volume that leaks is never at its
    # delivered path, for a download, a backup or a recovery after a crash to find.
    findings = scan_production(production, secrets, archive_part, pdf_part, changed_images, ingested, natives_scan)
    findings += log_findings(log_rows(production), secrets, production)
    if findings:
        raise LeakFound(leak_message(findings))
    os.replace(archive_part, archive_path)
    os.replace(pdf_part, pdf_path)
    pdf_sha256, zip_sha256 = _sha256(pdf_path), _sha256(archive_path)
    native_records += [(pdf_sha256, f"production {production.first}–{production.last} (combined PDF)"),
                       (zip_sha256, f"production {production.first}–{production.last} (volume)")]
    with transaction.atomic():
        if not Production.objects.filter(pk=production.pk, lease_owner=owner,
                                         status=Production.Status.STAMPING).update(
                status=Production.Status.DONE, finished_at=timezone.now(), pdf_sha256=pdf_sha256,
                zip_sha256=zip_sha256, pages_done=production.page_count, lease_owner="", lease_expires_at=None):
            raise LeaseLost(f"production {production.pk}")
        # With done and only by the lease's owner: one record per delivered file, none of an interrupted attempt.
        for sha256, title in native_records:
            generated_record(matter=production.matter, origin=Origin.PRODUCTION, sha256=sha256, title=title)
        production.refresh_from_db()
        audit_record(action="production.done", matter=production.matter, obj=production,
                     file_sha256=production.pdf_sha256,
                     detail={"first": production.first, "last": production.last, "pages": production.page_count,
                             "zip_sha256": production.zip_sha256})


def _sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
