"""Checks of rendered pages: every form control has a label, and no card is drawn empty."""

import re
from html.parser import HTMLParser

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_CONTROLS = {"input", "select", "textarea"}
_UNLABELLED_TYPES = {"hidden", "submit", "button", "reset", "image"}


class _Walk(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.label_for: set[str] = set()
        self.controls: list[tuple[dict, bool]] = []
        self.cards: list[list] = []  # per open card: [attrs, text seen, elements seen]
        self.empty_cards: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "label" and attrs.get("for"):
            self.label_for.add(attrs["for"])
        if tag in _CONTROLS:
            inside_label = any(t == "label" for t, _ in self.stack)
            self.controls.append(({"tag": tag, **attrs}, inside_label))
        for card in self.cards:
            if tag in ("input", "select", "textarea", "button", "img", "svg", "table", "a"):
                card[2] += 1
        if "card" in (attrs.get("class") or "").split() and tag not in _VOID:
            self.cards.append([attrs, "", 0, len(self.stack)])
        if tag not in _VOID:
            self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        while self.stack:
            open_tag, _ = self.stack.pop()
            if self.cards and self.cards[-1][3] == len(self.stack):
                attrs, text, elements, _depth = self.cards.pop()
                if not text.strip() and not elements:
                    self.empty_cards.append(attrs.get("id") or attrs.get("class", ""))
            if open_tag == tag:
                break

    def handle_data(self, data):
        for card in self.cards:
            card[1] += data


def unlabelled_controls(html: str) -> list[str]:
    """Return a description of each form control with no label (none around it, none ``for`` it, no
    ``aria-label``)."""
    walk = _Walk()
    walk.feed(html)
    missing = []
    for attrs, inside_label in walk.controls:
        if attrs["tag"] == "input" and attrs.get("type", "text") in _UNLABELLED_TYPES:
            continue
        if inside_label or attrs.get("aria-label") or attrs.get("aria-labelledby") or \
                (attrs.get("id") and attrs["id"] in walk.label_for):
            continue
        missing.append(f"<{attrs['tag']} name={attrs.get('name')!r} id={attrs.get('id')!r}>")
    return missing


def empty_cards(html: str) -> list[str]:
    """Return the id or class of each element with class ``card`` that holds no text and no control."""
    walk = _Walk()
    walk.feed(re.sub(r"<!--.*?-->", "", html, flags=re.DOTALL))
    return walk.empty_cards
