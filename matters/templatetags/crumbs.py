"""The breadcrumb trail at the top of a page, one tag for every page so the separator is written in one place."""

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

register = template.Library()

SEPARATOR = " › "


@register.simple_tag
def crumbs(*labels_and_urls) -> SafeString:
    """Return ``<p class="crumbs">`` linking each ``label, url`` pair given in order (``{% crumbs matter.name
    matter.get_absolute_url "Drafts" drafts_url %}``), the pairs joined by ``SEPARATOR``: a separator stands
    only between two links, never after the last. Raises TypeError for an odd number of arguments."""
    if len(labels_and_urls) % 2:
        raise TypeError("crumbs takes label, url pairs")
    pairs = list(zip(labels_and_urls[::2], labels_and_urls[1::2], strict=True))
    links = format_html_join(SEPARATOR, '<a href="{1}">{0}</a>', pairs)
    return format_html('<p class="crumbs">{}</p>', links)
