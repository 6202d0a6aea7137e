"""The first attorney account, created by the run command on a fresh install."""

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from matters.roles import role_group


@dataclass(frozen=True)
class FirstAccount:
    username: str
    password: str | None  # None when the password came from the environment and must not be echoed
    created: bool


def ensure_first_attorney(*, username: str, password: str | None) -> FirstAccount:
    """Create an attorney superuser named ``username`` when no user exists yet.

    ``password`` is used when given (from LAWDESK_ADMIN_PASSWORD); otherwise one is generated and returned so the
    caller can show it once. Returns ``created=False`` and no password when any user already exists.
    """
    User = get_user_model()
    with transaction.atomic():
        if User.objects.exists():
            return FirstAccount(username=username, password=None, created=False)
        generated = password is None or password == ""
        secret = secrets.token_urlsafe(12) if generated else password
        user = User.objects.create_superuser(username=username, password=secret, email="")
        user.groups.add(role_group("attorney"))
    return FirstAccount(username=username, password=secret if generated else None, created=True)
