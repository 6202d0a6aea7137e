"""The two long pieces of the review page, the draft's text and the margin, rendered in one pass in Python.

A draft of 300 findings has some 600 segments and 300 margin items; as template loops they cost about 1,800
``{% url %}`` lookups and 40,000 node renders, most of the page's time. Here each URL is built once by
``reverse()`` and then by appending a margin key, and each element is one formatted string. The markup is the
one the template had (``static/js/review.js`` reads its classes and data attributes); every text is escaped, and
draft text shows its invisible characters as :func:`matters.invisible.reveal` marks them. Nothing is cached: a
finding's new status shows on the next render.

Escaping is ``html.escape``, what Django's ``escape()`` runs, called directly: the lazy-string check around
``escape()`` cost more than the escaping of these short strings, some 2,000 times a page.
"""

import unicodedata
from html import escape

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from matters.invisible import reveal
from matters.models import DraftVersion, Finding, ReviewAttack

from .review import MarginItem, Segment

_STATUS_LABELS = dict(Finding.Status.choices)
_KIND_LABELS = dict(Finding.Kind.choices)
_SEVERITY_LABELS = dict(ReviewAttack.Severity.choices)
_KEY_PLACEHOLDER = "f0"


def _snip(text: str, length: int) -> str:
    """``Truncator(text).chars(length)``: the same string, without Truncator's walk over every character for a
    text of at most ``length`` characters already in NFC (a date, an amount, a cite), which it returns whole."""
    if len(text) <= length and unicodedata.is_normalized("NFC", text):
        return text
    return Truncator(text).chars(length)


def draft_text_html(segments: list[Segment]) -> SafeString:
    """The ``<span class="seg">`` of every segment, in order: the inside of ``<article id="draft-text">``."""
    out = []
    for seg in segments:
        classes = "seg"
        if seg.status:
            classes += f" st-{escape(seg.status)}"
        if seg.severity:
            classes += f" atk atk-{escape(seg.severity)}"
        keys = seg.keys
        attributes = f' data-keys="{keys}"' if keys else ""
        if seg.anchors:
            attributes += f' data-starts="{" ".join(seg.anchors)}"'
        out.append(f'<span class="{classes}"{attributes}>{reveal(seg.text)}</span>')
    return mark_safe("".join(out))


def item_url_prefix(version: DraftVersion) -> str:
    """The path of a margin item's panel without its key: ``prefix + "f12/"`` is the URL of finding 12's.

    Raises ValueError if the URL pattern no longer ends in the key, so a change to ``urls.py`` cannot make
    the margin link to wrong pages silently."""
    sample = reverse("matters:review_item",
                     args=[version.draft.matter_id, version.draft_id, version.number, _KEY_PLACEHOLDER])
    suffix = f"{_KEY_PLACEHOLDER}/"
    if not sample.endswith(suffix):
        raise ValueError(f"The review item URL {sample!r} does not end in its key.")
    return sample[: -len(suffix)]


def margin_html(version: DraftVersion, items: list[MarginItem], *, filter_active: bool) -> SafeString:
    """The ``<li>`` of every margin item (findings and attacks in reading order): the inside of
    ``<ol id="margin">``; one explanatory item when there are none."""
    if not items:
        # An unverified version has no findings because nothing was checked yet, not because nothing is claimed.
        why = ("Nothing matches the filter." if filter_active else
               "The verifier has not checked this version yet: approving it checks it first." if not version.verified_at
               else "The verifier found no claim to check, and no reviewer attacked this version.")
        return mark_safe(f'<li class="muted">{why}</li>')
    page_url = escape(reverse("matters:draft_version",
                              args=[version.draft.matter_id, version.draft_id, version.number]))
    prefix = escape(item_url_prefix(version))
    out = []
    for item in items:
        obj, key = item.obj, item.key
        item_url = f"{prefix}{key}/"
        if item.is_attack:
            severity = escape(obj.severity)
            classes = f"margin-item atk-{severity}" + (" outdated" if obj.outdated else "")
            body = (f'<span class="badge atk-{severity}">{escape(_SEVERITY_LABELS.get(obj.severity, obj.severity))}'
                    " attack</span>" + (' <span class="badge">outdated</span>' if obj.outdated else "")
                    + f' <span class="snip">{escape(_snip(obj.attack, 90))}</span>')
        else:
            status = escape(obj.status)
            classes = f"margin-item st-{status}"
            body = (f'<span class="badge st-{status}">{escape(_STATUS_LABELS.get(obj.status, obj.status))}</span>'
                    f' <span class="muted small">{escape(_KIND_LABELS.get(obj.kind, obj.kind))}</span>'
                    f' <span class="snip">{escape(_snip(obj.text, 70))}</span>')
        out.append(f'<li class="{classes}" id="m-{key}" data-key="{key}" data-url="{item_url}">'
                   f'<a href="{page_url}?item={key}&amp;open=1" hx-get="{item_url}?open=1" hx-target="#panel">'
                   f"{body}</a></li>")
    return mark_safe("\n".join(out))
