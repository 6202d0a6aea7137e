"""The first attorney account, created by the run command on a fresh install."""

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import transaction

from matters.permissions import ATTORNEY
from matters.roles import role_group


class WeakPassword(ValueError):
    """LAWDESK_ADMIN_PASSWORD breaks a rule of AUTH_PASSWORD_VALIDATORS; the message names each rule broken."""


@dataclass(frozen=True)
class FirstAccount:
    username: str
    password: str | None  # None when the password came from the environment and must not be echoed
    created: bool


def ensure_first_attorney(*, username: str, password: str | None) -> FirstAccount:
    """Create an attorney superuser named ``username`` when no user exists yet.

    ``password`` is used when given (from LAWDESK_ADMIN_PASSWORD); otherwise one is generated and returned so the
    caller can show it once. Returns ``created=False`` and no password when any user already exists.
    A given password goes through the same validators as every other password (settings.AUTH_PASSWORD_VALIDATORS:
    length, similarity to the username, common passwords, all digits); :class:`WeakPassword` if it breaks one.
    """
    User = get_user_model()
    with transaction.atomic():
        if User.objects.exists():
            return FirstAccount(username=username, password=None, created=False)
        generated = password is None or password == ""
        secret = secrets.token_urlsafe(12) if generated else password
        try:
            password_validation.validate_password(secret, user=User(username=username))
        except ValidationError as error:
            raise WeakPassword(
                "LAWDESK_ADMIN_PASSWORD is refused: " + " ".join(error.messages)
                + " Choose another, or leave it unset to have one generated."
            ) from error
        user = User.objects.create_superuser(username=username, password=secret, email="")
        user.groups.add(role_group(ATTORNEY))
    return FirstAccount(username=username, password=secret if generated else None, created=True)
