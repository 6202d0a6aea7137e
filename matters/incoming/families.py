"""The families of a received volume: which documents are an email and its attachments, read from the DAT.

Review platforms write a family on every member's row: ``BEGATTACH``/``ENDATTACH`` are the family's first and last
Bates numbers (the top document's begin number and the last attachment's end number), and ``PARENT_BATES`` the
begin number of the document an attachment is attached to (its immediate parent, so an email attached to an email
keeps its own attachments). A family's members become one family of exhibits (``Exhibit.parent``, in DAT order),
shown together like an email uploaded with its attachments (docs/email.md). A number that names no document of the
volume, or a range that does not hold the row, is reported and the row is left out of any family: a family is
never guessed.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from matters.models import Exhibit

from .loadfiles import Bates, Report

# Exhibit.family_path keeps five characters a generation ("0002.") in 100.
MAX_FAMILY_DEPTH = 19


@dataclass(eq=False)
class FamilyRecord:
    """One DAT row as a family reads it: its range, the family columns as written (empty where not given), and
    the exhibit the row became (the row's own, a duplicate's row itself; None where it was not imported)."""

    begin: Bates
    end: Bates
    begattach: str = ""
    endattach: str = ""
    parent: str = ""
    exhibit: Exhibit | None = None


def link_families(records: list[FamilyRecord], report: Report) -> int:
    """Link each row's exhibit to its parent's (see the module docstring); return how many were linked. Every
    row whose family columns cannot be resolved, and every member missing from its family, is a line of
    ``report``."""
    by_begin: dict[tuple, FamilyRecord] = {}
    by_end: dict[tuple, FamilyRecord] = {}
    for record in records:
        by_begin.setdefault(record.begin.key, record)
        by_end.setdefault(record.end.key, record)
    order = {id(record): place for place, record in enumerate(records)}
    parents: dict[int, FamilyRecord] = {}
    children: dict[int, list[FamilyRecord]] = {}
    for record in records:
        parent = _parent(record, by_begin, by_end, order, report)
        if parent is not None:
            parents[id(record)] = parent
            children.setdefault(id(parent), []).append(record)
    linked = 0
    tops = [record for record in records if id(record) not in parents and id(record) in children]
    placed: set[int] = set()
    with transaction.atomic():
        for top in tops:
            linked += _link_under(top, children, report, placed, depth=0)
    for record in records:
        if id(record) in parents and id(record) not in placed:
            report.add(f"{record.begin}: its PARENT_BATES lead round in a loop back to it; it was not linked to a "
                       "family.")
    return linked


def _parent(record: FamilyRecord, by_begin: dict, by_end: dict, order: dict, report: Report) -> FamilyRecord | None:
    """The row ``record`` is attached to, or None: a top document, a document alone, or columns that name no
    document of the volume (reported)."""
    first = last = named = None
    if record.begattach or record.endattach:
        begin = Bates.parse(record.begattach) if record.begattach else None
        end = Bates.parse(record.endattach) if record.endattach else None
        first = by_begin.get(begin.key) if begin else None
        last = by_end.get(end.key) if end else None
        if first is None or last is None or not order[id(first)] <= order[id(record)] <= order[id(last)]:
            why = (f"no document of this volume begins at {record.begattach[:100] or '(blank)'}" if first is None
                   else f"no document of this volume ends at {record.endattach[:100] or '(blank)'}" if last is None
                   else "the range does not hold this document")
            report.add(f"{record.begin}: its family range {record.begattach[:100]}–{record.endattach[:100]} "
                       f"(BEGATTACH–ENDATTACH) cannot be resolved ({why}); it was not linked to a family.")
            return None
    if record.parent:
        parsed = Bates.parse(record.parent)
        named = by_begin.get(parsed.key) if parsed else None
        if named is None:
            report.add(f"{record.begin}: its parent {record.parent[:100]} (PARENT_BATES) is the begin number of no "
                       "document of this volume; it was not linked to a family.")
            return None
        if named is record:
            named = None  # a top document naming itself
        elif first is not None and not order[id(first)] <= order[id(named)] <= order[id(last)]:
            report.add(f"{record.begin}: its parent {record.parent[:100]} (PARENT_BATES) is outside its family range "
                       f"{record.begattach[:100]}–{record.endattach[:100]}; it was not linked to a family.")
            return None
    if named is not None:
        return named
    return first if first is not None and first is not record else None


def _link_under(parent: FamilyRecord, children: dict, report: Report, placed: set, depth: int) -> int:
    """Link ``parent``'s children (in DAT order) and theirs in turn; return how many were linked."""
    linked = 0
    members = children.get(id(parent), [])
    exhibit = parent.exhibit
    if exhibit is not None:
        exhibit.refresh_from_db(fields=["family_seq", "family_path"])
    for position, child in enumerate(members, start=1):
        if id(child) in placed:
            continue
        placed.add(id(child))
        if depth >= MAX_FAMILY_DEPTH:
            report.add(f"{child.begin}: its family is nested more than {MAX_FAMILY_DEPTH} deep; it was not linked.")
            continue
        if exhibit is None:
            report.add(f"{child.begin}: its parent {parent.begin} was not imported, so it stands alone.")
        elif child.exhibit is None:
            report.add(f"{child.begin}: it was not imported, so the family of {parent.begin} is without it.")
        elif not _made_by_parent(child.exhibit, exhibit):
            Exhibit.objects.filter(pk=child.exhibit.pk).update(
                parent=exhibit, family_position=position, family_seq=exhibit.family_seq,
                family_path=f"{exhibit.family_path}{position:04d}.", updated_at=timezone.now())
            linked += 1
        linked += _link_under(child, children, report, placed, depth + 1)
    return linked


def _made_by_parent(child: Exhibit, parent: Exhibit) -> bool:
    """Whether ``child`` repeats a file its parent already made a member of the family (an email native's own
    attachment, produced again as a row of its own): the family holds it once."""
    return (child.status == Exhibit.Status.DUPLICATE and child.duplicate_of_id is not None
            and Exhibit.objects.filter(pk=child.duplicate_of_id, parent=parent.content).exists())
