"""Writes to the case file at the level of the matter: the matter and its members. Exhibits have their own
services (:mod:`matters.exhibits.services`)."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from matters.audit.services import audit_record
from matters.models import Matter
from matters.permissions import forget_memberships, is_member, may, require


def matter_create(*, name: str, created_by: AbstractBaseUser | None, **fields) -> Matter:
    """Create a matter with its creator as first member. ``fields``: court, case_number, client, opposing_party,
    label_style, bates_prefix. Raises PermissionDenied unless ``created_by`` may open matters (``create_matters``,
    :mod:`matters.permissions`; None, the command line with no member, is not checked); ValidationError on bad
    values."""
    require(created_by, "create_matters")
    matter = Matter(name=name, **fields)
    matter.full_clean()
    with transaction.atomic():
        matter.save()
        if created_by is not None:
            matter.members.add(created_by)
        audit_record(action="matter.create", actor=created_by, matter=matter, obj=matter, detail={"name": name})
    return matter


def matter_add_member(*, matter: Matter, user: AbstractBaseUser, added_by: AbstractBaseUser | None) -> None:
    """Make ``user`` a member of ``matter``, recorded in the audit trail (``added_by=None``: the command line).
    Raises PermissionDenied unless ``added_by`` may manage the matter's members (an attorney of the matter);
    ValidationError for an inactive account or one already a member."""
    require(added_by, "manage_members", matter)
    if not user.is_active:
        raise ValidationError({"user": f"{user.get_username()} is not an active account."})
    with transaction.atomic():
        forget_memberships()  # read as it is now, not as this request first read it
        if is_member(user, matter):
            raise ValidationError({"user": f"{user.get_username()} is already a member of this matter."})
        matter.members.add(user)
        forget_memberships()
        audit_record(action="matter.member_add", actor=added_by, matter=matter, obj=matter,
                     detail={"user": user.get_username()})


def matter_remove_member(*, matter: Matter, user: AbstractBaseUser, removed_by: AbstractBaseUser | None) -> None:
    """Take ``user`` off ``matter``'s members, recorded in the audit trail. Raises PermissionDenied unless
    ``removed_by`` may manage the members; ValidationError for someone who is not a member, or for the last
    attorney of the matter (a matter nobody may approve or serve in is a matter nobody can finish)."""
    require(removed_by, "manage_members", matter)
    with transaction.atomic():
        members = list(matter.members.select_for_update())
        forget_memberships()  # the rules below read the members as they are now
        if user not in members:
            raise ValidationError({"user": f"{user.get_username()} is not a member of this matter."})
        others_approve = any(may(m, "approve_draft", matter) for m in members if m.pk != user.pk)
        if may(user, "approve_draft", matter) and not others_approve:
            raise ValidationError({"user": f"{user.get_username()} is the matter's last attorney; add another "
                                           "attorney first."})
        matter.members.remove(user)
        forget_memberships()
        audit_record(action="matter.member_remove", actor=removed_by, matter=matter, obj=matter,
                     detail={"user": user.get_username()})
