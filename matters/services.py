"""Writes to the case file at the level of the matter: the matter and its members. Exhibits have their own
services (:mod:`matters.exhibits.services`)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from matters.audit.services import audit_record
from matters.models import Matter


def matter_create(*, name: str, created_by: AbstractBaseUser | None, **fields) -> Matter:
    """Create a matter with its creator as first member. ``fields``: court, case_number, client, opposing_party,
    label_style, bates_prefix. Raises ValidationError on bad values."""
    matter = Matter(name=name, **fields)
    matter.full_clean()
    with transaction.atomic():
        matter.save()
        if created_by is not None:
            matter.members.add(created_by)
        audit_record(action="matter.create", actor=created_by, matter=matter, obj=matter, detail={"name": name})
    return matter


def matter_add_member(*, matter: Matter, user: AbstractBaseUser, added_by: AbstractBaseUser | None) -> None:
    matter.members.add(user)
    audit_record(
        action="matter.member_add", actor=added_by, matter=matter, obj=matter, detail={"user": user.get_username()}
    )
