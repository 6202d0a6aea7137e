"""Template filters for showing exhibit text as it is, hidden characters included."""

import unicodedata

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# Zero-width characters and bidirectional controls change what a reader sees without showing themselves.
_INVISIBLE = {0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0xFEFF, 0x00AD, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A)}


@register.filter
def reveal_invisible(text: str) -> SafeString:
    """Escape ``text`` and show control, zero-width and bidi-override characters as visible ``U+XXXX`` marks."""
    out = []
    for char in text or "":
        code = ord(char)
        if code in _INVISIBLE or (unicodedata.category(char) == "Cc" and char not in "\n\t\r"):
            name = unicodedata.name(char, "control character").lower()
            out.append(f'<mark class="invisible" title="{escape(name)}">U+{code:04X}</mark>')
        else:
            out.append(escape(char))
    return mark_safe("".join(out))


@register.filter
def as_quoted(query: str) -> str:
    """Show a search query in quotation marks once: ``rent`` -> “rent”; a query holding its own quotes
    (``"Calvary Chapel"``, ``rent "late fee"``) keeps them, turned curly, and gets no second pair."""
    query = (query or "").strip()
    if '"' not in query and "“" not in query:
        return f"“{query}”"
    parts = query.split('"')
    # Straight quotes alternate opening and closing, as the search reads them (matters.search._PHRASE).
    return "".join(part if i == 0 else ("“" if i % 2 else "”") + part for i, part in enumerate(parts))


@register.filter(name="type_name")
def type_name_filter(mime_type: str) -> str:
    """What a lawyer calls a file of this detected type (see :func:`matters.sniff.type_name`)."""
    from matters.sniff import type_name

    return type_name(mime_type)
