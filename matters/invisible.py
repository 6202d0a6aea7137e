"""Characters that change what a reader sees without showing themselves, and how LawDesk shows them.

Zero-width characters, bidirectional controls (Unicode Standard Annex #9: embeddings U+202A-U+202E, isolates
U+2066-U+2069), the soft hyphen, the byte-order mark and C0/C1 control characters can hide or reorder words in an
exhibit or a draft. Every page that shows exhibit or draft text shows each of them as a visible ``U+XXXX`` mark,
named in its title, through :func:`mark_html`.
"""

import unicodedata

from django.utils.html import escape

INVISIBLE = frozenset({0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0xFEFF, 0x00AD, *range(0x202A, 0x202F),
                       *range(0x2066, 0x206A)})
_KEPT_CONTROLS = "\n\t\r"


def is_invisible(char: str) -> bool:
    """Whether ``char`` (one character) is shown as a mark rather than as itself."""
    return ord(char) in INVISIBLE or (unicodedata.category(char) == "Cc" and char not in _KEPT_CONTROLS)


def mark_html(char: str) -> str:
    """The HTML mark for an invisible ``char``: ``<mark class="invisible" title="name">U+XXXX</mark>``."""
    name = unicodedata.name(char, "control character").lower()
    return f'<mark class="invisible" title="{escape(name)}">U+{ord(char):04X}</mark>'


def reveal_in_html(html: str) -> str:
    """Replace every invisible character of already-safe ``html`` by its mark. Only for HTML whose attributes
    cannot hold such characters (LawDesk's sanitized draft HTML has no attributes at all)."""
    return "".join(mark_html(char) if is_invisible(char) else char for char in html)
