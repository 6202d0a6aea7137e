"""An HTML body made safe to lay out: what the message's markup says about structure and emphasis (paragraphs,
tables, lists, headings, bold, italic, underline, quotations) is kept, and nothing that runs, fetches or hides.

Sanitised with ``nh3`` (the Python binding of the Rust ``ammonia`` sanitiser, which parses as browsers do with
``html5ever``) on an allow-list of tags and attributes. What goes:

- scripts, styles (a ``<style>`` sheet would also style LawDesk's header block, and may ``@import``), ``<head>``,
  ``<title>``, frames, objects, forms' machinery: the element and its content;
- every link to elsewhere: ``<link>``, ``src``, ``href``, ``background``, ``srcset``; an image becomes its
  alternative text, ``[image: logo]`` (``[image]`` when it has none), so nothing remote (``http:``, ``https:``)
  nor inline (``cid:``, ``data:``) is ever loaded;
- inline ``style`` except for emphasis and alignment (``font-weight``, ``font-style``, ``text-decoration``,
  ``text-align``, ``vertical-align``), and any value that holds ``url(``, ``expression(`` or ``@import``. Colours,
  sizes and ``display`` are not kept, so text written white on white or in a 1-pixel font shows like the rest: a
  reviewer sees every word the message holds.

:func:`html_to_text` gives the same body as text: what its normalised-body hash and its duplicates are judged by,
and what the page shows when MuPDF cannot lay the markup out. Django-free.
"""

import html
import re
from html.parser import HTMLParser

import nh3

_TAGS = {
    "a", "abbr", "address", "b", "big", "blockquote", "br", "caption", "center", "cite", "code", "col", "colgroup",
    "dd", "del", "dfn", "div", "dl", "dt", "em", "font", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
    "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strike", "strong", "sub",
    "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var",
}
# Removed with everything inside them: what is not text the message shows.
_DROPPED_WITH_CONTENT = {"script", "style", "head", "title", "template", "object", "iframe", "frame", "frameset",
                         "embed", "applet", "svg", "math", "xmp", "noembed", "select", "textarea"}
_CELL = {"colspan", "rowspan", "align", "valign", "style"}
_ATTRIBUTES = {
    "*": {"style", "align"},
    "img": {"alt"},
    "td": _CELL, "th": _CELL,
    "ol": {"start", "type", "style"},
    "li": {"value", "style"},
}
_STYLE_PROPERTIES = {"font-weight", "font-style", "text-decoration", "text-align", "vertical-align"}
_ACTIVE_CSS = re.compile(r"url\s*\(|expression\s*\(|@import|\\", re.IGNORECASE)
# nh3 serialises an allowed <img> with its allowed attributes (alt, style, align) each as name="value", a quotation
# mark inside a value escaped, so a value may hold ">" but never '"'.
_IMAGE = re.compile(r'<img((?:\s+[^\s="<>]+(?:="[^"]*")?)*)\s*/?>')
_ALT = re.compile(r'(?:^|\s)alt="([^"]*)"')


# How deep a body's elements may nest and still be laid out as HTML. Sanitising (html5ever's tree building) takes
# time that grows with the square of the depth (20,000 nested elements: 2.3 s; 50,000: 16 s) and MuPDF refuses
# markup nested a few thousand deep anyway, so a body past this is shown as text (which reads it in one pass).
MAX_NESTING = 1000
# How many table rows a body may hold and still be laid out as HTML: MuPDF's Story lays a table out in time that
# grows with the square of its rows (2,000 rows: 0.2 s; 4,000: 0.5 s; 8,000: 1.9 s; 300,000, a 10 MB table, ran past
# 300 s), so a body with more is shown as text. Counted over the whole body, as rows of nested tables add up.
MAX_TABLE_ROWS = 2000
_ROW = re.compile(r"<tr[\s/>]", re.IGNORECASE)
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>")
# Elements that never hold others (void, HTML section 13.1.2) and those a parser closes when the next one opens
# (section 13.1.2.4: optional end tags), so that "<p>one<p>two" is not counted as nesting.
_NOT_NESTING = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
                "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "rb", "rt", "rp", "thead", "tbody",
                "tfoot", "colgroup", "caption"}


def nesting_depth(markup: str) -> int:
    """The deepest nesting of elements in ``markup`` as its tags open and close (an upper bound of what a browser's
    parser builds: tags inside comments count too), in one pass."""
    depth = deepest = 0
    for closing, name, self_closing in _TAG.findall(markup):
        if name.lower() in _NOT_NESTING or self_closing:
            continue
        if closing:
            depth = max(0, depth - 1)
        else:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def table_rows(markup: str) -> int:
    """How many ``<tr>`` tags ``markup`` opens (an upper bound of the rows a browser's parser builds), in one pass."""
    return len(_ROW.findall(markup))


def _attribute(tag: str, name: str, value: str) -> str | None:
    """Keep an allowed attribute unless it is a style that could load something (a backslash escape is refused
    too, as it can spell ``url(`` in a way a pattern does not see)."""
    if name == "style" and _ACTIVE_CSS.search(value):
        return None
    return value


def _image(match: re.Match) -> str:
    found = _ALT.search(match.group(1))
    alt = found.group(1).strip() if found else ""
    return f'<span class="image">[image: {alt}]</span>' if alt else '<span class="image">[image]</span>'


def sanitised_html(markup: str) -> str:
    """``markup`` (an HTML document or fragment, as a message carries it) as a fragment of allowed markup, safe to
    lay out inside LawDesk's own page: balanced tags, no attribute that names a resource, images as their
    alternative text (see the module docstring). Raises nothing for malformed markup (the parser repairs it as a
    browser would)."""
    cleaned = nh3.clean(
        markup,
        tags=_TAGS,
        clean_content_tags=_DROPPED_WITH_CONTENT,
        attributes=_ATTRIBUTES,
        attribute_filter=_attribute,
        filter_style_properties=_STYLE_PROPERTIES,
        link_rel=None,
        strip_comments=True,
    )
    return _IMAGE.sub(_image, cleaned)


_SPACES = re.compile(r"\s+")


class _TextOfHtml(HTMLParser):
    """The visible text of an HTML body: scripts, styles and the head dropped; blocks on lines of their own;
    an image shown by its alternative text, never loaded."""

    _SKIP = {"script", "style", "head", "title", "template", "noscript", "object", "iframe", "svg"}
    _BLOCKS = {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "hr",
               "pre", "ul", "ol", "section", "article", "header", "footer"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs) -> None:
        if tag in self._SKIP:
            self.skipping += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append("\t")
        elif tag == "img" and not self.skipping:
            alt = dict(attrs).get("alt")
            if alt:
                self.parts.append(f"[image: {alt}]")

    def handle_endtag(self, tag) -> None:
        if tag in self._SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data) -> None:
        if not self.skipping:
            self.parts.append(_SPACES.sub(" ", data))


def html_to_text(markup: str) -> str:
    """The visible text of an HTML body (see :class:`_TextOfHtml`); nothing it names is fetched."""
    reader = _TextOfHtml()
    try:
        reader.feed(markup)
        reader.close()
    except Exception:  # html.parser is lenient; a guard
        return html.unescape(re.sub(r"<[^>]*>", " ", markup))
    lines = [line.strip() for line in "".join(reader.parts).splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
