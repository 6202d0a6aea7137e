"""Template filters for showing exhibit text as it is, hidden characters included."""

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ..invisible import is_invisible, mark_html

register = template.Library()


@register.filter
def reveal_invisible(text: str) -> SafeString:
    """Escape ``text`` and show control, zero-width and bidi-override characters as visible ``U+XXXX`` marks."""
    return mark_safe("".join(mark_html(char) if is_invisible(char) else escape(char) for char in text or ""))
