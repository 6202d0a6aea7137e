"""Bates productions, first step: reserve a range of numbers and register what a production holds.

:func:`production_create` validates the request and reserves the numbers in one transaction (serialised per
matter: ``select_for_update`` on the matter row on PostgreSQL, SQLite's write lock, taken at the start of every
transaction here), then queues the stamping (:mod:`matters.productions.stamping`) on commit. A reserved range is
never reused: if the production fails, its range is void, logged in the audit log and shown on the matter's
productions list.
"""

import re

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from matters.audit.services import audit_record
from matters.models import Exhibit, Matter, Production, ProductionDocument
from matters.models.case import BATES_PREFIX_HTML_PATTERN
from matters.permissions import require
from matters.privilege.services import check_withheld, privilege_entries_create, production_blockers
from matters.selectors import evidence_exhibits
from matters.tasks import run_production as run_production_task
from matters.validation import require_choice

from .bates.stamp import StampSpec, missing_glyphs
from .families import whole_families
from .natives import native_suffix

# The rule for a prefix (no digit last) is the matter's, kept with its field (matters/models/case.py).
PREFIX_HTML_PATTERN = BATES_PREFIX_HTML_PATTERN
PREFIX_PATTERN = re.compile(rf"^{PREFIX_HTML_PATTERN}$")
CONFIDENTIAL = "CONFIDENTIAL"
AEO = "HIGHLY CONFIDENTIAL - ATTORNEYS' EYES ONLY"


def default_exhibits(matter: Matter):
    """All ready evidence of the matter, in label order: what a production offers by default."""
    return evidence_exhibits(matter).order_by("label_seq")


def default_prefix(matter: Matter) -> str:
    """The prefix the New production form offers: the one set on the matter (``Matter.bates_prefix``), else the
    prefix of the matter's last production (a matter's productions keep one prefix: the other side cites them
    by it), else, for a first production, the client's (or the matter's) first word in capitals when that makes
    a valid prefix; '' when nothing does."""
    if matter.bates_prefix:
        return matter.bates_prefix
    last = matter.productions.order_by("-created_at", "-pk").values_list("prefix", flat=True).first()
    if last:
        return last
    words = (matter.client or matter.name).split()
    guess = words[0].upper()[:10] if words else ""
    return guess if PREFIX_PATTERN.match(guess) else ""


def next_number(matter: Matter, prefix: str) -> int:
    """The first number after every range ever reserved for ``prefix`` in ``matter`` (void ranges included)."""
    top = Production.objects.filter(matter=matter, prefix__iexact=prefix).aggregate(top=Max("last_number"))["top"]
    return (top or 0) + 1


def production_create(
    *,
    matter: Matter,
    exhibits: list[Exhibit],
    prefix: str,
    created_by,
    digits: int = 6,
    start: int | None = None,
    suffix: str = "",
    position: str = Production.Position.BOTTOM_RIGHT,
    confidentiality: dict[int, str] | None = None,
    cover_sheets: str = Production.CoverSheets.NONE,
    with_index: bool = True,
    with_images: bool = False,
    keep_forms: bool = False,
    withheld: dict[int, dict] | None = None,
    enqueue: bool = True,
) -> Production:
    """Reserve a Bates range and register a production of ``exhibits`` (in that order); return it, ``stamping``.

    ``confidentiality`` maps exhibit ids to a designation (CONFIDENTIAL, AEO or custom text). ``keep_forms``
    leaves form fields fillable (see matters/productions/bates/forms.py); annotations are baked into the pages
    either way.
    A chosen exhibit of a family (an email and its attachments) brings its whole family, in family order
    (:func:`matters.productions.families.whole_families`).
    ``withheld`` maps exhibit ids to ``{"basis", "basis_text", "description"}`` (see
    :func:`matters.privilege.services.check_withheld`): each such document is produced as one placeholder page. Raises
    ValidationError for a bad prefix, digits outside 6-15, an exhibit that is not ready or not in the matter, a
    start number inside a range already reserved, a range that does not fit in ``digits``, or a page with an
    improper redaction still open; PermissionDenied for a user who may not start productions in the matter
    (:mod:`matters.permissions`), or who withholds a document without being an attorney.
    """
    require(created_by, "start_productions", matter)
    prefix, suffix = prefix.strip(), suffix.strip()
    if not PREFIX_PATTERN.match(prefix):
        raise ValidationError({"prefix": "A Bates prefix is a letter followed by up to 29 letters, digits, - or _, "
                                         "and does not end in a digit."})
    if not 6 <= digits <= 15:
        raise ValidationError({"digits": "Bates numbers have 6 to 15 digits."})
    # Letters and digits of any script (a suffix such as ".機密" or "-КОНФ"), never spaces or punctuation that
    # load files use as delimiters.
    if suffix and not re.fullmatch(r"[\w.-]{1,30}", suffix):
        raise ValidationError({"suffix": "A suffix is up to 30 letters, digits, '.', '-' or '_'."})
    if suffix and (missing := missing_glyphs(suffix)):
        raise ValidationError({"suffix": f"“{suffix}” has characters no stamp font can show ({missing})."})
    for designation in (confidentiality or {}).values():
        if missing := missing_glyphs(designation):
            raise ValidationError({"confidentiality": f"“{designation}” has characters no stamp font can show "
                                                      f"({missing}); the stamp fonts cover Latin, Greek, Cyrillic, "
                                                      "Chinese, Japanese and Korean."})
    require_choice(position, Production.Position, field="position")
    require_choice(cover_sheets, Production.CoverSheets, field="cover_sheets")
    StampSpec.from_position(position)
    if not exhibits:
        raise ValidationError("Choose at least one exhibit to produce.")
    for exhibit in exhibits:
        if exhibit.matter_id != matter.pk or exhibit.status != Exhibit.Status.READY:
            raise ValidationError(f"{exhibit.display_label} is not a ready exhibit of this matter.")
    if len({e.pk for e in exhibits}) != len(exhibits):
        raise ValidationError("An exhibit is listed twice.")
    exhibits = whole_families(exhibits)
    withheld = check_withheld(withheld or {}, created_by, matter)
    if set(withheld) - {e.pk for e in exhibits}:
        raise ValidationError("A withheld document must be one of the production's documents.")
    blockers = production_blockers(exhibits, set(withheld))
    if blockers:
        raise ValidationError(blockers)
    confidentiality = confidentiality or {}
    # A withheld document is one placeholder page, a spreadsheet produced natively one slip sheet (natives.py).
    page_counts = {e.pk: 1 if e.pk in withheld or native_suffix(e) else e.content.page_count for e in exhibits}
    numbered_covers = len(exhibits) if cover_sheets == Production.CoverSheets.NUMBERED else 0
    pages = sum(page_counts.values()) + numbered_covers
    with transaction.atomic():
        Matter.objects.select_for_update().get(pk=matter.pk)
        first = next_number(matter, prefix) if start is None else start
        last = first + pages - 1
        if first < 1:
            raise ValidationError({"start": "Bates numbers start at 1."})
        if last >= 10**digits:
            raise ValidationError({"digits": f"{pages} pages from {first} do not fit in {digits} digits."})
        # Prefixes compare without case: ABC000001 and abc000001 name the same page to a reader.
        clash = Production.objects.filter(matter=matter, prefix__iexact=prefix).filter(
            Q(first_number__lte=last) & Q(last_number__gte=first)
        ).first()
        if clash is not None:
            raise ValidationError(
                {"start": f"{clash.first}–{clash.last} are already used by production {clash.pk}; numbers never "
                          f"repeat. The next free number is {next_number(matter, prefix)}."}
            )
        volume = f"VOL{matter.productions.count() + 1:03d}"
        production = Production.objects.create(
            matter=matter, prefix=prefix, volume=volume, digits=digits, suffix=suffix, first_number=first,
            last_number=last, position=position, cover_sheets=cover_sheets, with_index=with_index,
            with_images=with_images, keep_forms=keep_forms, page_count=pages, created_by=created_by,
            queued_at=timezone.now() if enqueue else None,
        )
        ProductionDocument.objects.bulk_create(
            ProductionDocument(production=production, exhibit=e, order=n, confidentiality=confidentiality.get(e.pk, ""),
                               page_count=page_counts[e.pk])
            for n, e in enumerate(exhibits, start=1)
        )
        privilege_entries_create(documents=list(production.documents.all()), withheld=withheld)
        audit_record(action="production.start", actor=created_by, matter=matter, obj=production,
                     detail={"first": production.first, "last": production.last, "pages": pages,
                             "exhibits": [e.pk for e in exhibits], "withheld": sorted(withheld)})
        if enqueue:
            transaction.on_commit(lambda: production_enqueue(production.pk))
    return production


def production_enqueue(production_id: int) -> None:
    """Queue the stamping of a production on the ``documents`` queue (call it from ``transaction.on_commit``)."""
    run_production_task.enqueue(production_id)
