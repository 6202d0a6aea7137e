"""Bates productions, last step: the finished files, and serving them on the other side."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from matters import storage
from matters.audit.services import audit_record
from matters.models import Production
from matters.permissions import require


def production_files(production: Production) -> dict[str, "storage.Path"]:
    """The finished production's combined PDF and volume ZIP, by kind (``pdf``, ``zip``)."""
    out_dir = storage.production_dir(production.pk)
    return {"pdf": out_dir / f"{production.first}-{production.last}.pdf", "zip": out_dir / f"{production.volume}.zip"}


MIN_SERVED_TO_CHARS = 3


def production_serve(*, production: Production, user, served_to: str) -> Production:
    """Record that ``production`` was served on ``served_to`` (the party or counsel it went to): by ``user``, now.

    Serving is an attorney's act (permission ``serve_production``, docs/glossary.md) and is audited
    (``production.serve``). Only a ``done`` production can be served, and only once. Raises PermissionDenied for
    a user who may not serve in the matter; ValidationError for another status, a production already served, or
    a ``served_to`` without at least three printable characters."""
    require(user, "serve_production", production.matter)
    served_to = " ".join((served_to or "").split())[:300]
    if sum(ch.isprintable() and not ch.isspace() for ch in served_to) < MIN_SERVED_TO_CHARS:
        raise ValidationError({"served_to": "Say whom the production was served on (the party or its counsel)."})
    with transaction.atomic():
        locked = Production.objects.select_for_update().get(pk=production.pk)
        if locked.status != Production.Status.DONE:
            raise ValidationError(f"Only a finished production can be served; this one is {locked.status}.")
        if locked.served_at is not None:
            raise ValidationError(f"This production was already served on {locked.served_to} "
                                  f"({locked.served_at:%Y-%m-%d %H:%M}).")
        now = timezone.now()
        Production.objects.filter(pk=locked.pk).update(served_to=served_to, served_by=user, served_at=now)
        production.refresh_from_db()
        audit_record(action="production.serve", actor=user, matter=production.matter, obj=production,
                     file_sha256=production.pdf_sha256,
                     detail={"served_to": served_to, "first": production.first, "last": production.last})
    return production
