"""Checks every service applies to what a person types or picks, whichever interface called it.

A form or a page may check the same things first; the service checks again, since a view, a command, an admin
action and a hand-made request all reach it.
"""

import unicodedata
from collections.abc import Callable
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.db.models import TextChoices

from .invisible import is_invisible

T = TypeVar("T")

# A reason goes into the audit log and the verification report: it must say something a reader can see.
MIN_REASON_PRINTABLE = 10

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1): characters a renderer shows
# as nothing, among them zero-width joiners, variation selectors, the Hangul fillers and the tag characters.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
# Printable characters that draw a blank like a space without being one (Braille pattern blank).
BLANKS = frozenset({0x2800})


def shows_nothing(char: str) -> bool:
    """Whether ``char`` (one character) leaves nothing a reader can see: a space, a control, a format or
    bidirectional character, a default-ignorable code point, a blank, or a combining mark on its own (it only
    changes the character before it)."""
    code = ord(char)
    if char.isspace() or not char.isprintable() or is_invisible(char) or code in BLANKS:
        return True
    if unicodedata.category(char) in ("Mn", "Me"):
        return True
    return any(low <= code <= high for low, high in DEFAULT_IGNORABLE)


def visible_count(text: str) -> int:
    """How many characters of ``text`` a reader can see (:func:`shows_nothing` for the others)."""
    return sum(1 for char in text if not shows_nothing(char))


def clean_reason(reason: str | None, *, field: str = "reason", what: str = "the reason") -> str:
    """Return ``reason`` stripped, if it holds at least MIN_REASON_PRINTABLE visible characters (spaces,
    zero-width, bidi, default-ignorable, combining and control characters do not count,
    :func:`shows_nothing`). Raises ValidationError({field: ...}) otherwise."""
    reason = (reason or "").strip()
    if visible_count(reason) < MIN_REASON_PRINTABLE:
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


def form_refusal(form, error: ValidationError) -> None:
    """Put a service's refusal on ``form``: each message keyed by a field the form has goes on that field, the
    rest (unkeyed, or keyed by a name the form does not show) on the form itself, so no refusal is lost and none
    raises (Django's ``add_error`` raises ValueError for a key that is not a field)."""
    if not hasattr(error, "error_dict"):
        form.add_error(None, error)
        return
    for field, errors in error.error_dict.items():
        form.add_error(field if field in form.fields else None, errors)


def form_submit(form, service: Callable[[dict], T]) -> T | None:
    """Validate ``form`` and call ``service`` with its cleaned data; return what the service returned, or None
    with the form's errors set (its own, or the service's ValidationError put on the field at fault by
    :func:`form_refusal`). ``form.errors`` says which: a service may itself return None. PermissionDenied
    passes through (the view's 403)."""
    if not form.is_valid():
        return None
    try:
        return service(form.cleaned_data)
    except ValidationError as error:
        form_refusal(form, error)
        return None


def form_error_messages(form) -> list[str]:
    """Every error of ``form``, the form's own first, then each field's in the form's order, each said once (the
    four numbers of a box share one message): for a view that redirects back to the page the form was posted from
    and says what was refused in the page's messages."""
    found = list(form.non_field_errors())
    for name in form.fields:
        found.extend(form.errors.get(name, []))
    return list(dict.fromkeys(found))


def form_outcome_message(request, form, done: str) -> None:
    """After ``form`` was posted from a page the view redirects back to: its refusals as one error message
    (:func:`form_error_messages`), or ``done`` as a success."""
    from django.contrib import messages

    if form.errors:
        messages.error(request, " ".join(form_error_messages(form)))
    else:
        messages.success(request, done)
