"""Purge: remove a matter that is not on legal hold, after its name is typed again.

What goes: every database row of the matter (found by following the non-null foreign keys that lead to it, in
every app, so the jobs of the pipeline go too, and its member list), the originals no other matter uses (an
original is stored once by content address and may be shared; every upload of a production received is one,
not only the first), quarantined uploads likewise, derived files, production files and kept uploads of
productions received. What stays: the matter's row, marked ``purged_at``, and its audit chain, which ends with a
``matter.purge`` entry holding the row counts per model and the SHA-256 of every file the matter held (one digest
over the sorted list, and each original's own), so the purge itself can be proved and the chain still verifies.
Every entry before that one loses its detail (the case text an entry may hold: redaction search words, exhibit and
draft titles, job instructions, reasons) and keeps who, what and when; its hash covers only the detail's salted
keyed digest, so the chain verifies without it (:mod:`matters.audit.schemes`).

Whether an original stays because another matter uses it is told only to the system chain (``original.remove``),
never to the matter's chain or to the attorney purging: the other matter may lie behind another ethical wall, and
"someone else here holds this document" is itself something the wall keeps in. The matter's entry is the same
whether an original is shared or not.

A purge is refused while a worker holds work of the matter (an exhibit being processed, a production being
stamped, a job's stage running: a row under a lease that has not expired): the worker would write files after
the purge removed them.

The admin's log entries about the matter's rows go too: each keeps the object's name (an exhibit's title) and
what was changed; the audit chain is the matter's record. On SQLite the deletion overwrites what it frees
(``secure_delete``) and the search index is merged, so the matter's text does not stay in the database file's
free pages (which a backup copies) or in the index's segments; a checkpoint then empties the write-ahead log
where no reader holds it.

Rows are deleted in one transaction, children before parents; files are removed only once it has committed.
"""

import hashlib
import logging
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import DatabaseError, IntegrityError, connections, models, transaction
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_erase_details, audit_record
from matters.models import AuditEntry, Exhibit, IncomingProduction, Matter
from matters.permissions import require
from matters.retention.services import hold_refusal

logger = logging.getLogger(__name__)


@dataclass
class PurgeReport:
    """What a purge removed: ``rows`` per model label, ``files`` the matter held (data-directory relative path ->
    SHA-256 hex, its originals included whether or not another matter keeps them), their ``bytes``, the matter's
    ``originals`` (SHA-256 hex); and, for the system chain only, originals removed from disk and originals kept
    because another matter uses them."""

    matter_id: int
    rows: dict[str, int] = field(default_factory=dict)
    originals: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    bytes: int = 0
    originals_removed: list[str] = field(default_factory=list)
    originals_kept_shared: list[str] = field(default_factory=list)
    audit_details_erased: int = 0  # entries of the matter's chain whose detail the purge erased

    @property
    def files_sha256(self) -> str:
        """SHA-256 over the lines ``<sha256>  <path>`` of every removed file, sorted by path."""
        lines = "".join(f"{digest}  {path}\n" for path, digest in sorted(self.files.items()))
        return hashlib.sha256(lines.encode("utf-8")).hexdigest()

    def as_detail(self) -> dict:
        """The ``matter.purge`` entry's detail, which the matter's members read: nothing in it depends on what
        other matters hold."""
        return {"rows": self.rows, "files": len(self.files), "bytes": self.bytes, "files_sha256": self.files_sha256,
                "originals": self.originals}

    def as_system_detail(self) -> dict:
        """The ``original.remove`` entry's detail, in the system chain: which originals left the disk."""
        return {"matter": self.matter_id, "originals_removed": self.originals_removed,
                "originals_kept_shared": self.originals_kept_shared}


def matter_models() -> list[tuple[type[models.Model], list[str]]]:
    """Every model holding rows of a matter, with the lookups from it to the matter, children before parents.

    A model belongs to the matter through a non-null foreign key to a model that does (or to ``Matter`` itself),
    and an automatic many-to-many table through its foreign keys. Nullable keys are not followed: a row that only
    may point into the matter (a job's draft) belongs to whatever owns it. Audit entries are left out: the chain
    stays. Raises RuntimeError if the keys form a cycle."""
    lookups: dict[type[models.Model], list[str]] = {Matter: ["pk"]}
    parents: dict[type[models.Model], set] = defaultdict(set)
    queue = [Matter]
    while queue:
        parent = queue.pop(0)
        for model in apps.get_models(include_auto_created=True):
            for fk in model._meta.concrete_fields:
                if not (fk.many_to_one or fk.one_to_one) or fk.null or fk.related_model is not parent:
                    continue
                if model is AuditEntry or model is parent:
                    continue
                paths = [f"{fk.name}" if p == "pk" else f"{fk.name}__{p}" for p in lookups[parent]]
                known = lookups.setdefault(model, [])
                known.extend(p for p in paths if p not in known)
                parents[model].add(parent)
                if model not in queue:
                    queue.append(model)
    order: list[type[models.Model]] = []
    done: set = set()

    def visit(model, path=()):
        if model in done:
            return
        if model in path:
            raise RuntimeError(f"foreign keys form a cycle through {model._meta.label}")
        # A model's children (rows pointing at it) go before it.
        for child in [m for m, ps in parents.items() if model in ps]:
            visit(child, (*path, model))
        done.add(model)
        order.append(model)

    visit(Matter)
    return [(model, lookups[model]) for model in order if model is not Matter]


def _rows_of(model, paths: list[str], matter: Matter) -> models.QuerySet:
    condition = Q()
    for path in paths:
        condition |= Q(**{path: matter.pk})
    return model._base_manager.filter(condition)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(storage.CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _incoming_folders(matters) -> list[Path]:
    return [storage.data_path("incoming", str(int(pk)))
            for pk in IncomingProduction.objects.filter(matter__in=matters).values_list("pk", flat=True)]


def _matter_folders(matter: Matter) -> list[Path]:
    """The folders and files of the matter outside the shared stores: derived files, PDF passwords waiting for a
    worker, production files, kept uploads of productions received."""
    targets: list[Path] = []
    for exhibit_id in Exhibit.objects.filter(matter=matter).values_list("pk", flat=True):
        targets += [storage.derived_dir(exhibit_id), storage.password_path(exhibit_id)]
    targets += [storage.production_dir(pk) for pk in matter.productions.values_list("pk", flat=True)]
    return targets + _incoming_folders([matter])


def _files_in(targets: list[Path]) -> list[Path]:
    found = []
    for target in targets:
        found += sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else (
            [target] if target.is_file() else [])
    return found


def _hash_matter_files(matter: Matter) -> dict[Path, str]:
    """SHA-256 of every file of the matter outside the shared stores, read before the purge takes its lock (there
    may be tens of thousands of page images; nothing else waits while they are read)."""
    return {path: _hash_file(path) for path in _files_in(_matter_folders(matter))}


def _used_elsewhere(matter: Matter, sha: str, quarantined: bool) -> bool:
    """Whether another matter uses the original ``sha``: an exhibit of it, or an upload of a production it
    received (whose first upload the row names, and every upload the kept copy in ``incoming/<id>/`` holds)."""
    if Exhibit.objects.filter(sha256=sha, quarantined=quarantined).exclude(matter=matter).exists():
        return True
    if quarantined:
        return False
    if IncomingProduction.objects.filter(sha256=sha).exclude(matter=matter).exists():
        return True
    blob = storage.blob_path(sha)
    size = blob.stat().st_size if blob.is_file() else None
    others = Matter.objects.exclude(pk=matter.pk)
    return any(path.stat().st_size == size and _hash_file(path) == sha
               for path in _files_in(_incoming_folders(others)))


def _planned_files(matter: Matter, report: PurgeReport,
                   hashed: dict[Path, str]) -> tuple[list[Path], list[tuple[str, bool]]]:
    """Return the files and folders the purge removes, and the originals (SHA-256, quarantined) it removes unless
    another matter takes them up meanwhile (:func:`_remove_originals`); fill the report's file and original
    lists.

    Runs under the purge's lock, so whether another matter uses an original is decided against the rows as they
    are when the purge commits. An original's SHA-256 is its stored name (checked when it was uploaded). Every
    original of the matter is in the report's file list whether it is removed or kept for another matter."""
    root = Path(storage.data_path())
    targets = _matter_folders(matter)
    blobs = set(Exhibit.objects.filter(matter=matter).values_list("sha256", "quarantined"))
    blobs |= {(sha, False) for sha in IncomingProduction.objects.filter(matter=matter).values_list("sha256", flat=True)
              if sha}
    # Every upload of a production received is stored among the originals; its row names only the first.
    incoming = _incoming_folders([matter])
    blobs |= {(hashed.get(path) or _hash_file(path), False) for path in _files_in(incoming)}
    held: list[Path] = []
    originals: list[tuple[str, bool]] = []
    for sha, quarantined in sorted(blobs):
        report.originals.append(sha)
        blob = storage.blob_path(sha, quarantined=quarantined)
        if blob.is_file():
            held.append(blob)
            hashed = {**hashed, blob: sha}
        if _used_elsewhere(matter, sha, quarantined):
            report.originals_kept_shared.append(sha)
        else:
            report.originals_removed.append(sha)
            originals.append((sha, quarantined))
    report.originals = sorted(set(report.originals))
    for path in _files_in(targets) + held:
        # A file written after the early pass (a page image of a file still processing) is read now.
        report.files[str(path.relative_to(root))] = hashed.get(path) or _hash_file(path)
        report.bytes += path.stat().st_size
    return targets, originals


def _remove_originals(matter: Matter, originals: list[tuple[str, bool]]) -> None:
    """Remove the stored originals the purge left to no other matter, each unless another matter took it up since
    the purge committed: an upload of the same bytes keeps the stored file it finds (``storage.commit_staged``)
    and its row commits after. The check and the removal run in one transaction that waits for uploads under
    way and holds new ones back (SQLite: the write lock every transaction takes first; PostgreSQL: the exhibits
    table locked against the row lock an upload takes before it stores its file)."""
    for sha, quarantined in originals:
        with transaction.atomic():
            connection = connections[Exhibit.objects.db]
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(f"LOCK TABLE {connection.ops.quote_name(Exhibit._meta.db_table)} IN EXCLUSIVE MODE")
            if _used_elsewhere(matter, sha, quarantined):
                logger.warning("an original of purged matter %s was uploaded again meanwhile and stays", matter.pk)
                audit_record(action="original.keep", obj=matter, detail={
                    "matter": matter.pk, "sha256": sha, "reason": "uploaded to another matter during the purge"})
                continue
            _remove([storage.blob_path(sha, quarantined=quarantined)])


def _remove(targets: list[Path]) -> None:
    for target in targets:
        try:
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
        except OSError:
            # The rows are gone already; a file left behind is reported, never a reason to undo the purge.
            logger.exception("purge could not remove a file of a purged matter")


def _delete_admin_log(matter: Matter) -> int:
    """Delete the admin's log entries about the matter and its rows (an entry keeps the object's name, an
    exhibit's title, and what was changed) and return how many; the audit chain is the matter's record."""
    removed = 0
    for model, paths in [(Matter, ["pk"]), *matter_models()]:
        content_type = ContentType.objects.filter(app_label=model._meta.app_label,
                                                  model=model._meta.model_name).first()
        if content_type is None:
            continue
        ids = _rows_of(model, paths, matter).annotate(text_pk=Cast("pk", TextField())).values("text_pk")
        removed += LogEntry.objects.filter(content_type=content_type, object_id__in=ids).delete()[0]
    return removed


def _refuse_if_held_or_purged(matter: Matter) -> None:
    if matter.purged_at is not None:
        raise ValidationError("This matter was purged already.")
    if matter.legal_hold:
        raise hold_refusal(matter, "the matter")


def _refuse_if_worked_on(matter: Matter) -> None:
    """Raise ValidationError when a worker holds a live lease on a row of ``matter`` (:mod:`matters.leases`): it
    would go on writing that row's files after the purge removed them."""
    now = timezone.now()
    for model, paths in matter_models():
        if not any(f.name == "lease_expires_at" for f in model._meta.concrete_fields):
            continue
        if _rows_of(model, paths, matter).filter(lease_expires_at__gt=now).exists():
            raise ValidationError(f"A worker is working on {model._meta.verbose_name_plural} of {matter.name} (an "
                                  "exhibit being processed, a production being stamped or a job running). Wait "
                                  "until it finishes, or cancel it, then purge; nothing was purged.")


def _overwrite_freed_space(using: str):
    """On SQLite, make this connection overwrite what it deletes (``secure_delete``) until the returned function
    is called, which merges the search index (dropping the deleted pages' terms) and restores the setting."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return lambda: None
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA secure_delete")
        before = cursor.fetchone()[0]
        cursor.execute("PRAGMA secure_delete = ON")

    def done() -> None:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO matters_page_fts(matters_page_fts) VALUES ('optimize')")
            cursor.execute(f"PRAGMA secure_delete = {int(before)}")
    return done


def _checkpoint(using: str) -> None:
    """Copy the write-ahead log into the database file and empty it, where no reader holds it (SQLite only; a
    step of hygiene, so a reader that holds it, or an enclosing transaction, leaves it for SQLite's own)."""
    connection = connections[using]
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except DatabaseError:
        logger.warning("after a purge, the write-ahead log could not be checkpointed now", exc_info=True)


def matter_purge(*, matter: Matter, user, confirm_name: str) -> PurgeReport:
    """Purge ``matter`` (see the module) and return what was removed.

    ``confirm_name`` must be the matter's name typed again (surrounding spaces ignored, otherwise exact; never
    empty, even for a matter whose name is only spaces). Raises PermissionDenied for anyone but an attorney of the
    matter (``user=None``, the command line, passes), :class:`matters.retention.services.MatterOnHold` for a matter
    on legal hold, ValidationError when the name does not match, the matter was purged already, a worker is
    working on it, or a record outside the matter points into it (found by the database at commit; nothing is
    purged then)."""
    require(user, "hold_matter", matter)
    matter = Matter.objects.get(pk=matter.pk)  # the name as stored, not as the caller's copy has it
    typed = (confirm_name or "").strip()
    if not typed or typed != matter.name.strip():
        raise ValidationError({"confirm_name": f"Type the matter's name exactly as it reads ({matter.name}) to purge "
                                               "it."})
    report = PurgeReport(matter_id=matter.pk)
    _refuse_if_held_or_purged(matter)  # before reading its files; again under the lock
    _refuse_if_worked_on(matter)
    hashed = _hash_matter_files(matter)
    try:
        with transaction.atomic():
            # The lock makes a hold set at the same moment wait: the purge sees it, or the hold comes after.
            matter = Matter.objects.select_for_update().get(pk=matter.pk)
            _refuse_if_held_or_purged(matter)
            _refuse_if_worked_on(matter)
            targets, originals = _planned_files(matter, report, hashed)
            using = Matter.objects.db
            overwritten = _overwrite_freed_space(using)
            if logged := _delete_admin_log(matter):
                report.rows[LogEntry._meta.label_lower] = logged
            for model, paths in matter_models():
                rows = _rows_of(model, paths, matter)
                count = rows.count()
                if count:
                    report.rows[model._meta.label_lower] = count
                    # Collector-based delete() refuses rows that PROTECT one another even when all of them go
                    # together; the database's deferred foreign-key checks at commit still refuse the purge if
                    # anything outside the matter points at a deleted row.
                    rows._raw_delete(rows.db)
            Matter.objects.filter(pk=matter.pk).update(purged_at=timezone.now())
            purge_entry = audit_record(action="matter.purge", actor=user, matter=matter, obj=matter,
                                       detail=report.as_detail())
            # The entries before it may hold the matter's text (search words, titles, instructions, reasons):
            # their detail goes (overwritten where it lay, on SQLite), their sealed digests stay, and the chain
            # still verifies.
            report.audit_details_erased = audit_erase_details(matter=matter, before_seq=purge_entry.seq,
                                                               actor=user)
            overwritten()
            audit_record(action="original.remove", actor=user, obj=matter, detail=report.as_system_detail())
            transaction.on_commit(lambda: (_remove(targets), _remove_originals(matter, originals),
                                           _checkpoint(using)))
    except IntegrityError as exc:
        raise ValidationError(f"Nothing was purged: a record outside {matter.name} points at one of its records "
                              f"({exc}). Tell the administrator; the matter is as it was.") from exc
    return report
