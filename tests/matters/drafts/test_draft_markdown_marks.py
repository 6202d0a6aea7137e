"""Hidden characters in a draft's formatted (Markdown) view are shown as U+XXXX marks, as in the page viewer."""

import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from matters.drafts.markdown import render_html
from matters.drafts.services import draft_create
from matters.invisible import is_invisible, mark_html, reveal
from matters.templatetags.evidence import reveal_invisible

HIDDEN = {"\u202e": "U+202E", "\u2066": "U+2066", "\u200b": "U+200B", "\u200f": "U+200F", "\ufeff": "U+FEFF",
          "\u00ad": "U+00AD", "\x07": "U+0007"}
TEXT = ("# Settlement\n\n**Pay** the sum of $1,000 to \u202e0001 tnuocca\u202c and\u200bnot \u2066more\u2069. "
        "Signed \u200fby\ufeff the tenant, re\u00adceived\x07.\n")


def test_markdown_view_marks_every_hidden_character():
    html = render_html(TEXT)
    for char, mark in HIDDEN.items():
        assert char not in html
        assert f">{mark}</mark>" in html
    assert "<h1>Settlement</h1>" in html and "<strong>Pay</strong>" in html
    assert '<mark class="invisible" title="right-to-left override">U+202E</mark>' in html


def test_the_marks_are_the_page_viewers_marks():
    for char in HIDDEN:
        assert str(reveal_invisible(char)) in render_html(f"a{char}b")


@pytest.mark.django_db
def test_the_review_page_formatted_view_shows_the_marks(client, attorney, matter):
    version = draft_create(matter=matter, title="Settlement", text=TEXT, author_kind="person", author=attorney)
    client.force_login(attorney)
    page = client.get(reverse("matters:draft_version", args=[matter.pk, version.draft_id, version.number]))
    formatted = re.search(r'<div class="formatted">(.*?)</div>', page.content.decode(), re.DOTALL).group(1)
    assert "U+202E" in formatted and "\u202e" not in formatted and "\u200b" not in formatted


def test_exports_keep_the_text_unmarked():
    assert "U+202E" not in render_html(TEXT, reveal=False)


def test_reveal_marks_exactly_the_characters_is_invisible_names():
    # reveal() finds them with one regular expression; is_invisible() is the definition, one character at a time.
    chars = [chr(code) for code in [*range(0x3000), *range(0xFE00, 0x10000)] if not 0xD800 <= code <= 0xDFFF]
    expected = "".join(mark_html(char) if is_invisible(char) else escape(char) for char in chars)
    assert reveal("".join(chars)) == expected
    assert str(reveal_invisible("".join(chars))) == expected
