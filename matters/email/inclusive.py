"""Inclusive messages: which messages of a thread an attorney must read to have read the whole thread.

Review platforms (Relativity's email threading, Everlaw, Nuix) mark a message *inclusive* when no other message of
its thread contains its whole content: a leaf of the reply tree, a message whose text its replies did not quote
whole, or one carrying an attachment its replies dropped. Reading only the inclusive messages of a thread reads
every word and every attachment of it once. The comparison is textual, on :func:`comparable_text`:

- a message is *held* by a later message of its thread (thread order: sent date in UTC, undated last, then id)
  that answers it (names it, directly or through its ancestors, in In-Reply-To or References; a message that
  names no message at all, such as a forward from a program that writes neither header, may answer any earlier
  one), whose text contains its whole text on word boundaries, and whose attachments include all of its own by
  name (case-folded, counted: two attachments of one name need two);
- a message with no text is held only through its attachments by the same rule (a blank forward carrying the
  same files says nothing more);
- a message whose body was not kept (read before bodies were kept) is never held and holds nothing: it stays
  inclusive, since nothing can be compared.

Django-free.
"""

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

# A line's quotation marks: "> ", ">> ", "> > " (RFC 3676 section 4.5 quotes; mail programs write them all).
_QUOTE_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
# Lines a mail program writes above a quoted or forwarded message rather than text anyone wrote: Outlook's
# "-----Original Message-----" and its header lines, Gmail's "---------- Forwarded message ---------", Apple Mail's
# "Begin forwarded message:", "On <date>, <sender> wrote:" (one line, or two when the program wrapped it), and rules.
_ATTRIBUTION = re.compile(
    r"^[ \t]*(?:-{2,}[ \t]*(?:original message|forwarded message)[ \t]*-{2,}|begin forwarded message:"
    r"|on\b[^\n]{0,300}(?:\n[^\n]{0,300})?\bwrote:|(?:from|sent|date|to|cc|bcc|subject)[ \t]*:[^\n]*"
    r"|[_\-=*~ \t]{5,})[ \t]*$", re.IGNORECASE | re.MULTILINE)
_SPACES = re.compile(r"\s+")


def comparable_text(body: str) -> str:
    """A body as messages are compared: Unicode NFC, line ends as LF, quotation marks at line starts taken off,
    the lines a mail program writes above a quoted or forwarded message dropped (see ``_ATTRIBUTION``), case
    folded, every run of white space one space. A reply that quotes a message, re-wrapped or not, then contains
    that message's text."""
    # CRLF (as a message on the wire, and as the parser may hand its body over) to LF, so a line's end is "$".
    text = unicodedata.normalize("NFC", body or "").replace("\r\n", "\n").replace("\r", "\n")
    text = _QUOTE_MARKS.sub("", text)
    text = _ATTRIBUTION.sub(" ", text)
    return _SPACES.sub(" ", text).strip().casefold()


def contains_text(outer: str, inner: str) -> bool:
    """Whether ``inner`` occurs in ``outer`` starting and ending on word boundaries (so "thanks" is not found in
    "thanksgiving"). Both are :func:`comparable_text`."""
    start = outer.find(inner)
    while start >= 0:
        end = start + len(inner)
        before_ok = start == 0 or not outer[start - 1].isalnum() or not inner[0].isalnum()
        after_ok = end == len(outer) or not outer[end].isalnum() or not inner[-1].isalnum()
        if before_ok and after_ok:
            return True
        start = outer.find(inner, start + 1)
    return False


@dataclass
class ThreadMessage:
    """One message as the comparison sees it: ``pk`` its id, ``text`` its :func:`comparable_text`,
    ``attachments`` its attachment names, ``message_id`` and ``named`` (the ids its In-Reply-To and References
    name), ``recorded`` whether its body was kept at all."""

    pk: int
    text: str
    attachments: list[str] = field(default_factory=list)
    message_id: str = ""
    named: list[str] = field(default_factory=list)
    recorded: bool = True


def _ancestors(message: ThreadMessage, by_id: dict[str, ThreadMessage]) -> set[str]:
    """The Message-IDs ``message`` answers: those it names and, through the thread's messages, theirs."""
    seen: set[str] = set()
    todo = list(message.named)
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if (found := by_id.get(current)) is not None:
            todo.extend(found.named)
    return seen


def _holds(later: ThreadMessage, earlier: ThreadMessage, answered: set[str]) -> bool:
    if not (later.recorded and earlier.recorded):
        return False
    if later.named and earlier.message_id and earlier.message_id not in answered:
        return False  # a reply to another branch: what it quotes is not this message
    if not earlier.text and not earlier.attachments:
        return False  # nothing to hold: an empty message is its own record that it was sent
    needed = Counter(name.casefold() for name in earlier.attachments)
    carried = Counter(name.casefold() for name in later.attachments)
    if needed - carried:
        return False
    return not earlier.text or contains_text(later.text, earlier.text)


def inclusive_marks(messages: list[ThreadMessage]) -> dict[int, int | None]:
    """Map each message of one thread, given in thread order, to None when it is inclusive, else to the pk of
    an inclusive message holding it (the first in thread order). Holding is transitive (a message holding a
    holder holds what it holds), so every message held is held by one that is inclusive. Cost: one substring
    search per ordered pair, O(n²) in the thread's messages."""
    by_id = {message.message_id: message for message in messages if message.message_id}
    answered = [_ancestors(message, by_id) for message in messages]
    holders: dict[int, list[int]] = {}
    for i, earlier in enumerate(messages):
        holders[earlier.pk] = [later.pk for j, later in enumerate(messages[i + 1:], start=i + 1)
                               if _holds(later, earlier, answered[j])]
    marks: dict[int, int | None] = {}
    for message in messages:
        held_by = holders[message.pk]
        inclusive_holders = [pk for pk in held_by if not holders[pk]]
        marks[message.pk] = (inclusive_holders or held_by[-1:])[0] if held_by else None
    return marks
