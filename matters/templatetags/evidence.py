"""Template filters for showing exhibit text as it is, hidden characters included, and the exhibit list's row tag."""

from django import template
from django.utils.safestring import SafeString, mark_safe

from matters.exhibits.sniff import type_name

from ..exhibits.rows import exhibit_row_html
from ..invisible import reveal

register = template.Library()


@register.filter
def reveal_invisible(text: str) -> SafeString:
    """Escape ``text`` and show control, zero-width and bidi-override characters as visible ``U+XXXX`` marks."""
    return mark_safe(reveal(text))


@register.filter
def as_quoted(query: str) -> str:
    """Show a search query in quotation marks once: ``rent`` -> “rent”; a query holding its own quotes
    (``"Calvary Chapel"``, ``rent "late fee"``) keeps them, turned curly, and gets no second pair."""
    query = (query or "").strip()
    if '"' not in query and "“" not in query:
        return f"“{query}”"
    parts = query.split('"')
    # Straight quotes alternate opening and closing, as the search reads them (matters.exhibits.search._PHRASE).
    return "".join(part if i == 0 else ("“" if i % 2 else "”") + part for i, part in enumerate(parts))


@register.filter(name="type_name")
def type_name_filter(mime_type: str) -> str:
    """What a lawyer calls a file of this detected type (see :func:`matters.exhibits.sniff.type_name`)."""
    return type_name(mime_type)


@register.simple_tag
def exhibit_row(exhibit, oob: str = "") -> SafeString:
    """The exhibit list's row for ``exhibit`` (see :func:`matters.exhibits.rows.exhibit_row_html`)."""
    return exhibit_row_html(exhibit, oob)
