"""URLs of objects by their ids, with the view's pattern matched once instead of at every call.

Django's ``reverse`` matches the view's patterns anew on each call, about 70 µs; the matter page's exhibit list
builds a hundred or more URLs a view, a seventh of its time. A URL whose every argument is an ``<int:...>`` part is
the same text with other numbers in it, so :func:`reverse_ids` reverses the view once with marker numbers and
afterwards writes the ids in their places. A view whose URL does not show each marker exactly once (an argument
that is not an ``int`` part, a pattern that refuses the markers, a marker that happens to appear twice) is
reversed by Django every time.
"""

import functools

from django.urls import NoReverseMatch, get_script_prefix, reverse

# Numbers no object reaches, each unlike the others' digits, so one cannot be found inside another.
_MARKERS = (7_301_940_001, 7_301_940_023, 7_301_940_047, 7_301_940_061, 7_301_940_089)


@functools.lru_cache(maxsize=512)
def _pieces(viewname: str, arity: int, prefix: str) -> tuple[str, ...] | None:
    """The URL of ``viewname`` cut at its ``arity`` arguments (``arity + 1`` pieces), or None when it cannot
    be. ``prefix``, the script prefix the URL was reversed under, is part of the key only."""
    try:
        url = reverse(viewname, args=_MARKERS[:arity])
    except NoReverseMatch:  # e.g. a pattern that allows fewer digits: Django reverses each call, and says why
        return None
    pieces = []
    for marker in map(str, _MARKERS[:arity]):
        if url.count(marker) != 1:
            return None
        before, _, url = url.partition(marker)
        pieces.append(before)
    return (*pieces, url)


def reverse_ids(viewname: str, *ids: int) -> str:
    """``reverse(viewname, args=ids)`` for a view whose arguments are ids (non-negative ``int``s); the same
    string, raising ``NoReverseMatch`` as ``reverse`` does for an id it does not accept."""
    if len(ids) > len(_MARKERS) or not all(type(value) is int and value >= 0 for value in ids):
        return reverse(viewname, args=ids)
    pieces = _pieces(viewname, len(ids), get_script_prefix())
    if pieces is None:
        return reverse(viewname, args=ids)
    parts = [pieces[0]]
    for value, piece in zip(ids, pieces[1:]):
        parts += [str(value), piece]
    return "".join(parts)
