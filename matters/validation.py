"""Checks every service applies to what a person types or picks, whichever interface called it.

A form or a page may check the same things first; the service checks again, since a view, a command, an admin
action and a hand-made request all reach it.
"""

from django.core.exceptions import ValidationError
from django.db.models import TextChoices

from .invisible import is_invisible

# A reason goes into the audit log and the verification report: it must say something a reader can see.
MIN_REASON_PRINTABLE = 10


def clean_reason(reason: str | None, *, field: str = "reason", what: str = "the reason") -> str:
    """Return ``reason`` stripped, if it holds at least MIN_REASON_PRINTABLE printable characters (spaces,
    zero-width, bidi and control characters do not count). Raises ValidationError({field: ...}) otherwise."""
    reason = (reason or "").strip()
    printable = sum(1 for char in reason if char.isprintable() and not char.isspace() and not is_invisible(char))
    if printable < MIN_REASON_PRINTABLE:
        raise ValidationError({field: f"Write {what} (at least {MIN_REASON_PRINTABLE} characters, not counting "
                                      "spaces or invisible ones): it goes into the audit log."})
    return reason


def require_choice(value: str, choices: type[TextChoices] | tuple[str, ...], *, field: str) -> str:
    """Return ``value`` if it is one of ``choices`` (a TextChoices class or a tuple of values); raise
    ValidationError({field: ...}) naming the allowed values otherwise."""
    allowed = tuple(choices.values) if isinstance(choices, type) else tuple(choices)
    if value not in allowed:
        raise ValidationError({field: f"{value!r} is not one of the choices: {', '.join(map(str, allowed))}."})
    return value
