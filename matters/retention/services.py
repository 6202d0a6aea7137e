"""Legal hold: while a matter is on hold nothing of it can be deleted, by any path.

An attorney of the matter (permission ``hold_matter``, :mod:`matters.permissions`) puts the matter on hold and
lifts it, each time with a reason, both audited in the matter's chain (``matter.hold``, ``matter.hold_lift``).
The hold is checked where deletion happens:

- :func:`matters.retention.purge.matter_purge` refuses a matter on hold;
- the admin offers no deletion of matters or exhibits at all (a matter leaves only by purge, which keeps its
  audit chain);
- any other deletion through the ORM of a matter, or of one of its documents (exhibits, productions, productions
  received, drafts and their versions, generated documents, jobs), is refused by :func:`refuse_delete_on_hold`,
  connected in ``MattersConfig.ready``: a guard on an invariant, not a step of any workflow.

Reprocessing an exhibit replaces its page rows from the original it keeps, so pages are not guarded: a hold
preserves the documents, and every document keeps its original byte for byte.
"""

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models.signals import pre_delete

from matters.audit.services import audit_record
from matters.models import DraftVersion, Matter
from matters.permissions import require
from matters.validation import visible_count

REASON_MAX_CHARS = 500


class MatterOnHold(ValidationError):
    """Raised when something of a matter on legal hold was about to be deleted; the message names the matter."""


def hold_refusal(matter: Matter, what: str) -> MatterOnHold:
    """Return the error that refuses deleting ``what`` (words, "the matter", "Exhibit 3") of ``matter``."""
    return MatterOnHold(f"{matter.name} is on legal hold: {what} cannot be deleted until an attorney lifts the "
                        "hold.")


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    # Zero-width, bidirectional and other characters that show nothing are not a reason (matters.validation).
    if not visible_count(reason):
        raise ValidationError({"reason": "Say why (a litigation hold notice, a preservation letter, a court order)."})
    return reason[:REASON_MAX_CHARS]


def matter_hold(*, matter: Matter, user, reason: str) -> Matter:
    """Put ``matter`` on legal hold and return it. Raises PermissionDenied for anyone but an attorney of the matter,
    ValidationError without a reason or for a purged matter. Holding a matter already on hold changes nothing and
    records nothing."""
    require(user, "hold_matter", matter)
    reason = _reason(reason)
    with transaction.atomic():
        matter = Matter.objects.select_for_update().get(pk=matter.pk)
        if matter.purged_at is not None:
            raise ValidationError("This matter was purged; there is nothing left to hold.")
        if matter.legal_hold:
            return matter
        Matter.objects.filter(pk=matter.pk).update(legal_hold=True)
        matter.legal_hold = True
        audit_record(action="matter.hold", actor=user, matter=matter, obj=matter, detail={"reason": reason})
    return matter


def matter_hold_lift(*, matter: Matter, user, reason: str) -> Matter:
    """Lift the legal hold of ``matter`` and return it. Same checks as :func:`matter_hold`; lifting a hold that is
    not set changes nothing and records nothing."""
    require(user, "hold_matter", matter)
    reason = _reason(reason)
    with transaction.atomic():
        matter = Matter.objects.select_for_update().get(pk=matter.pk)
        if not matter.legal_hold:
            return matter
        Matter.objects.filter(pk=matter.pk).update(legal_hold=False)
        matter.legal_hold = False
        audit_record(action="matter.hold_lift", actor=user, matter=matter, obj=matter, detail={"reason": reason})
    return matter


def _matter_of(instance) -> Matter | None:
    """The matter a guarded row belongs to: itself, its ``matter``, or its draft's matter (a draft version)."""
    if isinstance(instance, Matter):
        return instance
    if getattr(instance, "matter_id", None) is not None:
        return Matter.objects.filter(pk=instance.matter_id).only("name", "legal_hold").first()
    draft_id = getattr(instance, "draft_id", None)
    if draft_id is not None:
        return Matter.objects.filter(drafts__pk=draft_id).only("name", "legal_hold").first()
    return None


def refuse_delete_on_hold(sender, instance, **kwargs) -> None:
    """``pre_delete`` receiver: raise :class:`MatterOnHold` when ``instance`` belongs to a matter on hold."""
    matter = _matter_of(instance)
    if matter is not None and matter.legal_hold:
        raise hold_refusal(matter, f"{sender._meta.verbose_name} {instance}")


def guarded_models():
    """The models whose rows are documents of a matter (or the matter itself): every model with a non-null
    ``matter`` foreign key to :class:`Matter`, in any app, and draft versions. Audit entries are append-only
    anyway."""
    found = [Matter, DraftVersion]
    for model in apps.get_models():
        field = next((f for f in model._meta.concrete_fields if f.name == "matter"), None)
        if field is not None and field.is_relation and field.related_model is Matter and not field.null:
            found.append(model)
    return found


def connect_hold_guard() -> None:
    """Connect :func:`refuse_delete_on_hold` to every guarded model (called once, from ``MattersConfig.ready``)."""
    for model in guarded_models():
        pre_delete.connect(refuse_delete_on_hold, sender=model, dispatch_uid=f"legal-hold-{model._meta.label}")
