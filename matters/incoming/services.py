"""Import another party's production: a volume with DAT/OPT load files, or stamped PDFs without them.

Each produced document becomes an exhibit (origin ``opposing_party`` or ``third_party``) whose pages carry the
producing party's Bates numbers, so a draft citing ``DEF000123`` finds the page and its text. A volume that
names missing images, skips or repeats numbers, or disagrees with its images' page counts is imported as far as
it is consistent, and the report lists every discrepancy. The uploaded volume itself is kept byte for byte.
An import confirmed in the browser runs in the worker under a lease (:func:`import_confirmed`); if the worker dies,
another reads the volume again, and each record keeps the exhibit it already became (:mod:`matters.incoming.records`).
"""

import logging
import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_record
from matters.exhibits.reading import reading_form
from matters.exhibits.sniff import HEAD_BYTES, sniff
from matters.incoming.checks import (
    numbers_not_given,
    report_digit_counts,
    report_document_breaks,
    report_outside_records,
    text_file_pages,
    texts_of_their_pages,
)
from matters.incoming.encoding import decode_bytes, describe
from matters.incoming.families import FamilyRecord, link_families
from matters.incoming.loadfiles import BATES_MAX_CHARS, Bates, Report, bates_key, guess_field_map, read_dat
from matters.incoming.records import RecordExhibits
from matters.incoming.volume_files import (
    ImageMap,
    PageFilesRefused,
    _image_map,
    _image_rows,
    _index,
    _is_pdf,
    _is_zip,
    _lookup,
    _pdf_of_pages,
    _stamps_of,
    _unpacked,
    inspect_volume,
    load_files,
    report_unread,
)
from matters.leases import LeaseKeeper, LeaseLost, lease_expiry, lease_watch_schedule, worker_id
from matters.models import Exhibit, IncomingBatesPage, IncomingProduction, Matter, Page
from matters.models.incoming import bates_prefix
from matters.permissions import require
from matters.productions.overlaps import bates_overlaps
from matters.tasks import run_import as run_import_task
from matters.validation import require_choice

logger = logging.getLogger(__name__)

MAX_DOCUMENT_PAGES = 100_000
INCOMING_ORIGINS = ("opposing_party", "third_party")  # who produces volumes to us


def import_production(*, matter: Matter, paths: list[Path], origin: str, user, field_map: dict | None = None,
                      incoming: IncomingProduction | None = None) -> IncomingProduction:
    """Import a volume (one ZIP or folder) or stamped PDFs at ``paths`` now; return the IncomingProduction with
    its documents imported and its report: ``done``, or ``failed`` with a reason when no Bates number could be
    resolved to a page. Raises UnsafeArchive for an archive that breaks the limits, and ValidationError for an
    origin other than ``opposing_party`` or ``third_party``."""
    require_choice(origin, INCOMING_ORIGINS, field="origin")
    if incoming is None:
        first = paths[0]
        incoming = IncomingProduction.objects.create(
            matter=matter, origin=origin, source_name=", ".join(p.name for p in paths)[:500], created_by=user,
            sha256=store_upload(first) if first.is_file() else "", status=IncomingProduction.Status.IMPORTING)
    return _import_run(incoming, paths, field_map, user)


def _import_run(incoming: IncomingProduction, paths: list[Path], field_map: dict | None, user,
                keeper: LeaseKeeper | None = None, owner: str = "") -> IncomingProduction:
    """Read the volume into ``incoming`` from the start and record how it ended. ``owner``: the lease this
    worker holds (every write that ends the import is conditional on it); raises LeaseLost once it is lost."""
    report = Report()
    # Numbers a dead worker's reading gave pages are given again, to the same pages, by this one; the prefixes
    # kept with them (record_bates_pages) are read again with them.
    IncomingBatesPage.objects.filter(incoming=incoming).delete()
    incoming.bates_prefixes = []
    IncomingProduction.objects.filter(pk=incoming.pk).update(bates_prefixes=[])
    try:
        _import_paths(incoming, RecordExhibits(incoming, keeper), paths, field_map, report)
    except LeaseLost:
        raise
    except Exception as error:  # recorded for the user, then raised for the caller
        # In the worker nobody sees the exception, so the reason says that the import stopped on it.
        reason = f"The import stopped: {error}" if owner else str(error)
        _finish(incoming, owner, status=IncomingProduction.Status.FAILED, reason=reason, report=report.items)
        raise
    documents = incoming.bates_pages.values("page__exhibit").distinct().count()
    status, reason = IncomingProduction.Status.DONE, ""
    if not documents:
        # An import that resolved no Bates number to any page is not done, whatever else it read.
        status = IncomingProduction.Status.FAILED
        first = report.items[0] if report.items else "the upload names no documents"
        more = f" ({len(report.items) - 1} more in the report)" if len(report.items) > 1 else ""
        reason = f"No Bates number could be resolved to a page: {first}{more}"
    for overlap in bates_overlaps(incoming.matter):
        if overlap.involves(f"in:{incoming.pk}"):
            report.add(overlap.message())
    with transaction.atomic():
        if not _finish(incoming, owner, status=status, reason=reason, report=report.items):
            raise LeaseLost(f"import {incoming.pk}")
        incoming.refresh_from_db()
        audit_record(action="incoming_production.import", actor=user, matter=incoming.matter, obj=incoming,
                     file_sha256=incoming.sha256, detail={"documents": documents, "discrepancies": len(report.items),
                                                          "status": status})
    return incoming


def _finish(incoming: IncomingProduction, owner: str, **fields) -> bool:
    """End the import with ``fields`` and release its lease; False when ``owner`` no longer holds it."""
    rows = IncomingProduction.objects.filter(pk=incoming.pk, status=IncomingProduction.Status.IMPORTING)
    if owner:
        rows = rows.filter(lease_owner=owner)
    return bool(rows.update(lease_owner="", lease_expires_at=None, **fields))


def _import_paths(incoming, records: RecordExhibits, paths: list[Path], field_map: dict | None,
                  report: Report) -> None:
    if len(paths) > 1 and not all(p.is_file() and _is_pdf(p) for p in paths):
        raise ValueError("Import one volume (a ZIP or a folder) at a time, or only stamped PDFs together.")
    with tempfile.TemporaryDirectory(dir=storage.tmp_dir()) as work:
        if all(p.is_file() and _is_pdf(p) for p in paths):
            _import_stamped(incoming, records, paths, report)
        else:
            path = paths[0]
            root = _unpacked(path, Path(work))
            dats = load_files(root, ".dat")
            if dats:
                report_unread(dats, "DAT", report)
                _import_volume(incoming, records, root, dats[0], field_map, report)
            else:
                files = sorted(p for p in root.rglob("*") if p.is_file())
                pdfs = [p for p in files if _is_pdf(p)]
                for named in (p for p in files if p.suffix.lower() == ".pdf" and p not in pdfs):
                    report.add(f"{named.name} is named as a PDF but its content is not one; it was not imported.")
                report.add("No DAT load file: documents were read as stamped PDFs.")
                _import_stamped(incoming, records, pdfs, report)
            for nested in sorted(p for p in root.rglob("*") if p.is_file() and _is_zip(p) and not _is_document(p)):
                report.add(f"{nested.name} is an archive inside the archive; nested archives are not unpacked.")


def _import_volume(incoming, records: RecordExhibits, root: Path, dat_path: Path, field_map: dict | None,
                   report: Report) -> None:
    dat = read_dat(dat_path.read_bytes())
    header, rows = dat.header, dat.rows
    if not dat.decoded.certain:
        report.add(describe(dat_path.name, dat.decoded))
    for problem in dat.problems:
        report.add(problem)
    mapping = field_map or guess_field_map(header)
    IncomingProduction.objects.filter(pk=incoming.pk).update(header=header, field_map=mapping)
    if "begbates" not in mapping:
        report.add(f"No begin-Bates field among {header} (read with {dat.dialect.describe()}); nothing could be "
                   "imported.")
        return
    column = {name: header.index(mapping[name]) for name in mapping if mapping[name] in header}
    index = _index(root)
    base = str(dat_path.parent.parent.relative_to(root)).replace("\\", "/").lower()
    base = "" if base == "." else base
    image_rows, kind = _image_rows(root, report)
    images = _image_map(image_rows, kind, report)
    breaks = {bates_key(row.bates) for row in image_rows if row.document_break}
    given: dict[tuple, str] = {}  # every number given to a page so far, by its key
    ranged: set[tuple] = set()  # every number a DAT record's range holds, by its key
    widths: dict[str, dict[int, str]] = {}  # each prefix's digit counts, with a number written so
    previous_end: Bates | None = None
    families: list[FamilyRecord] = []
    for row in rows:
        def field(name: str) -> str:
            position = column.get(name)
            return row[position] if position is not None and position < len(row) else ""

        begin = Bates.parse(field("begbates"))
        end = Bates.parse(field("endbates")) if field("endbates") else begin
        if begin is None or end is None or end.number < begin.number:
            report.add(f"DAT row {[value[:100] for value in row[:2]]} has no usable Bates range (a begin number, and "
                       f"an end number not before it, each with digits and at most {BATES_MAX_CHARS} characters); "
                       "skipped.")
            continue
        if previous_end is not None and begin.prefix == previous_end.prefix and begin.number != previous_end.number + 1:
            gap = "repeats" if begin.number <= previous_end.number else "skips"
            report.add(f"Numbering {gap} between {previous_end} and {begin}.")
        previous_end = end
        for number in (begin, end):
            widths.setdefault(number.key[0], {}).setdefault(number.width, str(number))
        if end.number - begin.number >= MAX_DOCUMENT_PAGES:
            report.add(f"{begin}–{end} would be {end.number - begin.number + 1} pages, more than any document "
                       f"LawDesk imports ({MAX_DOCUMENT_PAGES}); the row was skipped.")
            continue
        if begin.prefix.lower() != end.prefix.lower():
            report.add(f"{begin}–{end}: the begin and end numbers have different prefixes.")
        numbers = [begin.shifted(i) for i in range(end.number - begin.number + 1)]
        ranged.update(number.key for number in numbers)
        if begin.key in images:  # a number with no image is reported as such
            report_document_breaks(numbers, breaks, kind, report)
        exhibit = _import_document(incoming, records, numbers, images, index, base, field("textpath"),
                                   field("nativepath"), report, title=field("title"), kind=kind, given=given)
        families.append(FamilyRecord(begin, end, field("begattach"), field("endattach"), field("parentbates"),
                                     exhibit))
    link_families(families, report)
    report_outside_records(images, ranged, kind, report)
    report_digit_counts(widths, report)


def _import_document(incoming, records: RecordExhibits, numbers: list[Bates], images: ImageMap,
                     index, base: str, text_ref: str, native_ref: str, report: Report, title: str = "",
                     kind: str = "OPT", given: dict | None = None) -> Exhibit | None:
    """Import one DAT record (its Bates ``numbers``) and return the exhibit the record became (a duplicate's own
    row), or None where nothing was imported (the report says why).

    The pages are the page images the image load file lists; or, for a document produced natively (a native that
    is not a PDF but a file an upload accepts: Word, a workbook, an email, ...) with one Bates number and at most
    one image (its slip sheet), the native read as an upload of it is, that one number citing every page; or a PDF
    native. The slip sheet stays in the volume kept as received."""
    first = str(numbers[0])
    present: list[tuple[Bates, Path, int]] = []
    for number in numbers:
        reference, page_index, _ = images.get(number.key, (None, 0, ""))
        path = _lookup(index, reference, base) if reference else None
        if reference is None and images:
            report.add(f"{number}: no image is listed for it in the {kind}.")
        elif reference and path is None:
            report.add(f"{number}: the image {reference} named in the {kind} is missing.")
        if path is not None:
            present.append((number, path, page_index))
    native = _lookup(index, native_ref, base) if native_ref else None
    if native_ref and native is None:
        report.add(f"{first}: the native file {native_ref[:200]} named in the DAT is missing from the volume.")
    produced_natively = False
    if native is not None and not _is_pdf(native) and (not present or len(numbers) == 1):
        readable = _native_kind(native)
        if readable.kind != Exhibit.Kind.OTHER:
            produced_natively = True
        elif not present:
            report.add(f"{first}: its native {native.name} is {_a(readable.description)}, which LawDesk does not read "
                       "as a document; the document was not imported.")
            return None
        else:
            report.add(f"{first}: its native {native.name} is {_a(readable.description)}, which LawDesk does not read "
                       "as a document; its page image was imported instead.")
    if produced_natively:
        data, page_numbers = native.read_bytes(), numbers
        name = f"{first}{native.suffix.lower()[:20]}"
    elif present:
        try:
            data, found = _pdf_of_pages([(path, page) for _, path, page in present], report, first)
        except PageFilesRefused as refused:
            report.add(f"{first}: {refused}")
            return None
        page_numbers = [number for (number, _, _), ok in zip(present, found) if ok]
        if not page_numbers:
            report.add(f"{first}–{numbers[-1]}: none of its images could be read; the document was not imported.")
            return None
        name = f"{first}.pdf"
    elif native is not None and _is_pdf(native):
        data, page_numbers, name = native.read_bytes(), numbers, f"{first}.pdf"
    else:
        reason = "no image or native LawDesk reads was found" if images or native_ref else (
            "the DAT names no native and there is no image load file")
        report.add(f"{first}–{numbers[-1]}: {reason}; the document was not imported.")
        return None
    exhibit = records.exhibit_for(data, name)
    own = records.own
    if title and exhibit.title in (first, name):
        Exhibit.objects.filter(pk=exhibit.pk).update(title=title[:300], updated_at=timezone.now())
    if exhibit.status != Exhibit.Status.READY:
        what = f"its native {native.name} could not be read" if produced_natively else "the document could not be read"
        report.add(f"{first}: {what} ({exhibit.reason}).")
        return own
    pages = list(exhibit.pages.order_by("number"))
    native_one_number = produced_natively and len(page_numbers) == 1
    if native_one_number:
        note = (f"Produced natively as {first}{' behind a slip sheet' if present else ''}: these pages are the "
                f"native {native.name} read as an upload of it is, and {first} cites every one of them.")
        if note not in exhibit.notes:
            Exhibit.objects.filter(pk=exhibit.pk).update(notes=[*exhibit.notes, note], updated_at=timezone.now())
    elif page_numbers and len(page_numbers) != len(pages):
        report.add(f"{first}: {len(pages)} pages, but {len(page_numbers)} Bates numbers.")
        page_numbers = page_numbers[: len(pages)]
    text_path = _lookup(index, text_ref, base) if text_ref else None
    if text_ref and text_path is None:
        report.add(f"{first}: the text file {text_ref[:200]} named in the DAT is missing from the volume; the "
                   "text was taken from the pages themselves.")
    page_texts = []
    if text_path is not None:
        decoded = decode_bytes(text_path.read_bytes())
        if not decoded.certain:
            report.add(describe(text_path.name, decoded))
        texts = text_file_pages(decoded.text)
        if len(texts) == len(pages):
            kept = texts_of_their_pages(first, [page.text for page in pages], texts, report)
            page_texts = [(page, text, reading_form(text)) for page, text in zip(pages, kept) if text is not None]
        elif native_one_number and len(texts) == 1:
            pass  # a native's text in one piece, as producing parties write it: the native's own pages are read
        else:
            report.add(f"{first}: the text file has {len(texts)} pages and the document {len(pages)}; the "
                       "text was taken from the pages themselves instead.")
    if native_one_number:
        # One number for the whole document: given once in the volume, then to every page of the native.
        pairs = [(page, page_numbers[0]) for page in pages] if numbers_not_given(
            first, pages[:1], page_numbers, given, report) else []
    else:
        pairs = numbers_not_given(first, pages, page_numbers, given, report)
    # One short transaction per document, its text read and put in reading form before it: page by page in
    # autocommit, a long document's updates followed each other with no gap and kept SQLite's lock from a page
    # view's audit entry until the last.
    with transaction.atomic():
        for page, text, reading in page_texts:
            # The text-layer key stood for the text read from the page, not for the load file's.
            Page.objects.filter(pk=page.pk).update(text=text, reading_text=reading, source=Page.Source.LOAD_FILE,
                                                   text_key="")
        if page_texts:
            # The verifier re-reads the new text; a draft verified before says it is stale (updated_at).
            Exhibit.objects.filter(pk=exhibit.pk).update(facts_index="", updated_at=timezone.now())
        record_bates_pages(incoming, [IncomingBatesPage(incoming=incoming, page=page, bates=str(number))
                                      for page, number in pairs])
    return own


def _native_kind(path: Path):
    """What an upload of the native at ``path`` would be read as (:func:`matters.exhibits.sniff.sniff`)."""
    with open(path, "rb") as stream:
        return sniff(path, stream.read(HEAD_BYTES))


def _is_document(path: Path) -> bool:
    """Whether a ZIP in the volume is a document an upload reads (DOCX, XLSX, ODS, ...), not an archive."""
    return _native_kind(path).kind != Exhibit.Kind.OTHER


def _a(description: str) -> str:
    return f"{'an' if description[:1].lower() in 'aeiou' else 'a'} {description}"


def _import_stamped(incoming, records: RecordExhibits, pdfs: list[Path], report: Report) -> None:
    seen: set[tuple] = set()
    for path in pdfs:
        exhibit = records.exhibit_for(path.read_bytes(), path.name)
        if exhibit.status != Exhibit.Status.READY:
            report.add(f"{path.name}: could not be read ({exhibit.reason}).")
            continue
        found, previous = [], None
        pages = list(exhibit.pages.order_by("number"))
        try:
            stamps = _stamps_of(exhibit, pages)
        except PageFilesRefused as refused:
            report.add(f"{path.name}: {refused}")
            continue
        for text, page in zip(stamps, pages):
            if text is None:
                report.add(f"{path.name}, page {page.number}: no Bates number found at its edges.")
                continue
            parsed = Bates.parse(text)
            if bates_key(text) in seen:
                report.add(f"{path.name}, page {page.number}: {text} was already used on an earlier page; "
                           "this page was left unnumbered.")
                continue
            if previous is not None and parsed and parsed.number != previous.number + 1:
                report.add(f"{path.name}, page {page.number}: {text} does not follow {previous}.")
            previous = parsed
            seen.add(bates_key(text))
            found.append(IncomingBatesPage(incoming=incoming, page=page, bates=text))
        record_bates_pages(incoming, found)


def record_bates_pages(incoming: IncomingProduction, rows: list[IncomingBatesPage]) -> None:
    """Write ``rows`` (the Bates numbers of pages of ``incoming``) and add their prefixes to
    ``incoming.bates_prefixes``, which search and the verifier read to know a number of this matter when they see
    one. Called by the import holding the volume's lease, so no other writer changes the prefixes meanwhile."""
    IncomingBatesPage.objects.bulk_create(rows)
    prefixes = set(incoming.bates_prefixes) | {bates_prefix(row.bates) for row in rows}
    prefixes.discard("")
    if prefixes != set(incoming.bates_prefixes):
        incoming.bates_prefixes = sorted(prefixes)
        IncomingProduction.objects.filter(pk=incoming.pk).update(bates_prefixes=incoming.bates_prefixes)


def store_upload(upload_path: Path) -> str:
    """Keep an uploaded volume byte for byte in the originals store; return its SHA-256."""
    with open(upload_path, "rb") as stream:
        staged = storage.stage_stream(stream)
    storage.commit_staged(staged, quarantined=False)
    return staged.sha256


def upload_dir(incoming_id: int) -> Path:
    return storage.data_path("incoming", str(int(incoming_id)))


def incoming_receive(*, matter: Matter, uploads: list, origin: str, user) -> IncomingProduction:
    """Keep the uploaded files (each also stored byte for byte among the originals) and read the volume's DAT
    header, so the user can confirm the field mapping before anything is imported. ``uploads`` are file-like
    objects with a ``name``. A ZIP that breaks a limit is recorded as failed with the reason. Raises
    PermissionDenied for a user who may not receive productions in the matter, and ValidationError for an origin
    other than ``opposing_party`` or ``third_party`` (on ``origin``) or no file at all (on ``files``)."""
    require(user, "receive_productions", matter)
    require_choice(origin, INCOMING_ORIGINS, field="origin")
    if not uploads:
        raise ValidationError({"files": "Choose the production's files (a ZIP volume or PDFs)."})
    incoming = IncomingProduction.objects.create(
        matter=matter, origin=origin, source_name=", ".join(u.name for u in uploads)[:500], sha256="",
        created_by=user, status=IncomingProduction.Status.AWAITING_CONFIRMATION)
    folder = upload_dir(incoming.pk)
    folder.mkdir(parents=True)
    digests = []
    for index, upload in enumerate(uploads):
        staged = storage.stage_stream(upload)
        kind = sniff(staged.path, staged.head)
        suffix = ".pdf" if kind.kind == "pdf" else ".zip" if staged.head[:4] == b"PK\x03\x04" else ".bin"
        target = folder / f"{index:04d}{suffix}"
        shutil.copyfile(staged.path, target)
        storage.commit_staged(staged, quarantined=False)
        digests.append(staged.sha256)
    updates = {"sha256": digests[0] if digests else ""}
    zips = sorted(folder.glob("*.zip"))
    try:
        if zips:
            header, mapping = inspect_volume(zips[0])
            updates.update(header=header, field_map=mapping)
    except ValueError as error:  # UnsafeArchive included
        updates.update(status=IncomingProduction.Status.FAILED, reason=str(error))
    IncomingProduction.objects.filter(pk=incoming.pk).update(**updates)
    incoming.refresh_from_db()
    audit_record(action="incoming_production.receive", actor=user, matter=matter, obj=incoming,
                 file_sha256=incoming.sha256, detail={"files": len(uploads), "status": incoming.status})
    return incoming


def incoming_confirm(*, incoming: IncomingProduction, field_map: dict, user) -> IncomingProduction:
    """Record the field mapping the user confirmed and queue the import. PermissionDenied as for receiving."""
    require(user, "receive_productions", incoming.matter)
    IncomingProduction.objects.filter(pk=incoming.pk).update(field_map=field_map, queued_at=timezone.now(),
                                                           status=IncomingProduction.Status.IMPORTING)
    incoming.refresh_from_db()
    audit_record(action="incoming_production.confirm", actor=user, matter=incoming.matter, obj=incoming,
                 detail={"field_map": field_map})
    transaction.on_commit(lambda: run_import_task.enqueue(incoming.pk))
    return incoming


def import_confirmed(*, incoming_id: int) -> IncomingProduction:
    """The worker's side: import the kept files with the confirmed mapping; failures are recorded, not raised.

    The worker claims the import with a lease (:mod:`matters.leases`) and renews it while it reads; an import
    claimed by a live worker, or no longer ``importing``, is returned unchanged. If the worker dies,
    :mod:`matters.recovery` queues it again and another worker reads it again from the start, keeping every
    exhibit already made (:mod:`matters.incoming.records`)."""
    owner = worker_id()
    if not IncomingProduction.objects.filter(pk=incoming_id, status=IncomingProduction.Status.IMPORTING,
                                             lease_owner="").update(
            lease_owner=owner, lease_expires_at=lease_expiry(settings.LAWDESK_DOCUMENT_LEASE_S)):
        return IncomingProduction.objects.get(pk=incoming_id)
    lease_watch_schedule("import", incoming_id)
    incoming = IncomingProduction.objects.select_related("matter", "created_by").get(pk=incoming_id)
    lease_s = settings.LAWDESK_DOCUMENT_LEASE_S
    keeper = LeaseKeeper(model=IncomingProduction, pk=incoming.pk, owner=owner, lease_s=lease_s,
                         live={"status": IncomingProduction.Status.IMPORTING})
    with keeper:
        try:
            paths = sorted(upload_dir(incoming.pk).iterdir())
            return _import_run(incoming, paths, incoming.field_map or None, incoming.created_by, keeper, owner)
        except LeaseLost:
            logger.warning("import %s was taken over by another worker; this one stops", incoming.pk)
        except Exception as error:  # an unreadable volume must not stop the worker; the user sees why
            logger.warning("import %s failed", incoming.pk, exc_info=True)
            # Written only if the reading did not record its own failure already (it ends the import).
            _finish(incoming, owner, status=IncomingProduction.Status.FAILED, reason=f"The import stopped: {error}")
    incoming.refresh_from_db()
    return incoming
