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
    """Show a search query as typed, in curly quotation marks when it holds no quotation mark of its own:
    ``rent`` -> “rent”; ``"Calvary Chapel"`` and ``"unterminated`` stay as typed, so a quote the search did not
    read as a phrase is not shown as one. Not marked safe: the template escapes it."""
    query = (query or "").strip()
    if '"' in query or "“" in query or "”" in query:
        return query
    return f"“{query}”"


@register.filter(name="type_name")
def type_name_filter(mime_type: str) -> str:
    """What a lawyer calls a file of this detected type (see :func:`matters.exhibits.sniff.type_name`)."""
    return type_name(mime_type)


@register.simple_tag
def exhibit_row(exhibit, oob: str = "") -> SafeString:
    """The exhibit list's row for ``exhibit`` (see :func:`matters.exhibits.rows.exhibit_row_html`)."""
    return exhibit_row_html(exhibit, oob)
