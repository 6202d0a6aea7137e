"""Characters that change what a reader sees without showing themselves, and how LawDesk shows them.

Zero-width characters, bidirectional controls (Unicode Standard Annex #9: embeddings U+202A-U+202E, isolates
U+2066-U+2069), the soft hyphen, the byte-order mark and C0/C1 control characters can hide or reorder words in an
exhibit or a draft. Every page that shows exhibit or draft text shows each of them as a visible ``U+XXXX`` mark,
named in its title, through :func:`mark_html`.
"""

import html
import re
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


# The same characters as is_invisible() as one class: C0 and C1 controls (category Cc) but tab, newline and
# carriage return, and the INVISIBLE set. escape() never adds such a character, so it may run first.
_INVISIBLE_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
                           + "".join(f"\\u{code:04x}" for code in sorted(INVISIBLE)) + "]")


def reveal(text: str) -> str:
    """Escape ``text`` for HTML and show each invisible character as its :func:`mark_html` mark; the same
    result as marking character by character, in two passes over the string instead of a call per character."""
    # html.escape is what Django's escape() runs, without the wrapper that looks for lazy strings: a review
    # page calls this once per stretch of the draft, some 600 times at 300 findings.
    return _INVISIBLE_RE.sub(lambda match: mark_html(match.group()), html.escape(str(text or "")))


def reveal_in_html(html: str) -> str:
    """Replace every invisible character of already-safe ``html`` by its mark. Only for HTML whose attributes
    cannot hold such characters (LawDesk's sanitized draft HTML has no attributes at all)."""
    return _INVISIBLE_RE.sub(lambda match: mark_html(match.group()), html)


def without_invisible(text: str) -> str:
    """``text`` without the characters :func:`is_invisible` marks and without any other format character (Unicode
    category Cf); newlines and tabs stay. What an export writes: the review page showed each of them as a mark,
    and an exported file must not carry what the attorney saw only as a mark."""
    return "".join(char for char in text if not is_invisible(char) and unicodedata.category(char) != "Cf")
