"""One row of the matter page's exhibit list, rendered in Python.

The list shows 100 rows a page; as a template each row cost some twenty variable lookups and filters, about
a quarter of a millisecond, most of the list's time. The markup is the one the template had (the live progress
of ``matters.consumers`` swaps rows by their ``id``); every value is escaped.
"""

from html import escape  # Django's escape() is this behind a wrapper that looks for lazy strings

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import QuerySet
from django.utils.safestring import SafeString, mark_safe

from matters.models import Exhibit

_ORIGIN_LABELS = dict(Exhibit._meta.get_field("origin").choices)
# Every column exhibit_row_html reads, its related rows' included. An exhibit has some fifty columns and a row
# selects four related rows: reading all of them put about 200 values a row through Django's converters.
EXHIBIT_ROW_FIELDS = (
    "matter_id", "label", "title", "original_name", "origin", "mime_type", "kind", "status", "reason",
    "generated_reason", "generated_override_reason", "page_count", "pages_ocr", "progress_page",
    "family_position", "family_path",
    "duplicate_of", "duplicate_of__matter_id", "duplicate_of__label",
    "parent", "parent__label",
    "message__inclusive", "message__included_in",
    "message__included_in__exhibit", "message__included_in__exhibit__matter_id",
    "message__included_in__exhibit__label",
)


def for_rows(exhibits: QuerySet[Exhibit]) -> QuerySet[Exhibit]:
    """``exhibits`` with what :func:`exhibit_row_html` reads selected, and nothing else: one query for any number
    of rows (tests/matters/exhibits/test_exhibit_rows.py checks every kind of row)."""
    return exhibits.select_related("duplicate_of", "parent", "message__included_in__exhibit").only(
        *EXHIBIT_ROW_FIELDS)


def _thread_mark(exhibit: Exhibit) -> str:
    """A message's mark in its thread: "inclusive", or the message that holds it whole; '' for anything else
    (:mod:`matters.email.inclusive`)."""
    if exhibit.kind != Exhibit.Kind.EMAIL or exhibit.status != Exhibit.Status.READY:
        return ""
    try:
        record = exhibit.message
    except ObjectDoesNotExist:
        return ""
    if record.inclusive:
        return ' <span class="status status-inclusive">inclusive</span>'
    if record.included_in_id is None:
        return ""
    holder = record.included_in.exhibit
    return (f' <span class="muted small">held whole by <a href="{escape(holder.get_absolute_url())}">'
            f'{escape(holder.display_label)}</a></span>')


def _status_cell(exhibit: Exhibit) -> str:
    status = escape(exhibit.status)
    html = f'<span class="status status-{status}">{status}</span>'
    if exhibit.marked_generated:
        html += ' <span class="status status-generated">generated</span>'
    html += _thread_mark(exhibit)
    if exhibit.status == Exhibit.Status.PROCESSING:
        progress = (f"page {exhibit.progress_page} of {exhibit.page_count}" if exhibit.progress_page
                    else "opening the file")
        html += f' <span class="progress-text">{progress}</span>'
    if reason := exhibit.stated_reason:
        duplicate = exhibit.duplicate_of
        link = (f' <a href="{escape(duplicate.get_absolute_url())}">Open {escape(duplicate.display_label)}</a>'
                if duplicate else "")
        html += f'\n          <div class="reason">{escape(reason)}{link}</div>'
    return html


def exhibit_row_html(exhibit: Exhibit, oob: str = "") -> SafeString:
    """The ``<tr id="exhibit-<id>">`` of ``exhibit``; ``oob`` is its ``hx-swap-oob`` value when it travels as an
    out-of-band swap ("true"), else empty. Reads ``exhibit.duplicate_of``, ``exhibit.parent`` and, for a message,
    ``exhibit.message.included_in.exhibit``: select them with the row (:func:`for_rows`)."""
    title, name = exhibit.title, exhibit.original_name
    name_html = f'<div class="muted small">{escape(name)}</div>' if title != name else ""
    pages = "—"
    if exhibit.status == Exhibit.Status.READY:
        pages = str(exhibit.page_count)
        if exhibit.pages_ocr:
            pages += f' <span class="muted small">({exhibit.pages_ocr} OCR)</span>'
    swap = f' hx-swap-oob="{escape(oob)}"' if oob else ""
    family = ""
    if exhibit.parent_id:
        # A child lists under its parent (matters.selectors.exhibits_of_matter), indented one step a generation.
        family = (f' class="family-child depth-{min(exhibit.family_depth, 6)}"',
                  f'<div class="muted small">attachment {exhibit.family_position} of '
                  f'{escape(exhibit.parent.display_label)}</div>')
    return mark_safe(
        f'<tr id="exhibit-{exhibit.pk}" data-status="{escape(exhibit.status)}"{swap}>\n'
        f"        <td>{escape(exhibit.display_label)}</td>\n"
        f'        <td{family[0] if family else ""}><a href="{escape(exhibit.get_absolute_url())}">{escape(title)}</a>'
        f'{name_html}{family[1] if family else ""}</td>\n'
        f"        <td>{escape(_ORIGIN_LABELS.get(exhibit.origin, exhibit.origin))}</td>\n"
        f"        <td>{escape(exhibit.type_name)}</td>\n"
        f"        <td>{pages}</td>\n"
        f"        <td>{_status_cell(exhibit)}\n        </td>\n"
        "      </tr>")
