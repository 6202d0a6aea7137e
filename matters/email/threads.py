"""Threads: a matter's messages grouped into conversations.

Messages are linked by their own Message-ID and the ids their References and In-Reply-To name (RFC 5322 section
3.6.4); a message whose headers name no message of the matter (a thread's first message, or a reply from a
program that writes neither header) joins the messages of the same normalised subject
(:func:`matters.email.parse.normalised_subject`), as review platforms fall back to. Each conversation's messages
share ``EmailMessage.thread_key``; thread order is the sent date in UTC, undated messages last.

A message just read updates only the threads it touches (:func:`message_threads_update`): those of the messages
it names or that name it, that carry its Message-ID, that name what it names, or that share its normalised
subject. Threads only change
where such a link is, so grouping those threads' messages again gives what grouping the whole matter would.
Each thread whose messages changed has its inclusive messages marked again (:mod:`matters.email.inclusive`).
"""

from django.db.models import F, Q

from matters.models import EmailMessage, Exhibit, Matter

from .inclusive import ThreadMessage, comparable_text, inclusive_marks

_ROW = ("id", "message_id", "in_reply_to", "references", "subject_normalised", "thread_key")


def thread_keys(rows: list[tuple[int, str, str, list[str], str]]) -> dict[int, str]:
    """Map each message, given as ``(id, Message-ID, In-Reply-To, References, normalised subject)``, to its
    conversation's key: ``"t<smallest id in it>"``."""
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def union(a: str, b: str) -> None:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[max(root_a, root_b)] = min(root_a, root_b)

    known = {message_id for _, message_id, _, _, _ in rows if message_id}
    for pk, message_id, in_reply_to, references, subject in rows:
        node = f"m{pk}"
        find(node)
        if message_id:
            union(node, f"id{message_id}")
        named = [ref for ref in [*(references or []), in_reply_to] if ref]
        for ref in named:
            union(node, f"id{ref}")
        if subject and not any(ref in known for ref in named):
            union(node, f"s{subject}")
    members: dict[str, list[int]] = {}
    for pk, *_ in rows:
        members.setdefault(find(f"m{pk}"), []).append(pk)
    return {pk: f"t{min(group)}" for group in members.values() for pk in group}


def _messages(matter_id: int):
    return (EmailMessage.objects.filter(exhibit__matter_id=matter_id)
            .exclude(exhibit__status=Exhibit.Status.DUPLICATE))


def _write_keys(rows: list[tuple]) -> set[str]:
    """Group ``rows`` (``_ROW``, whole threads) again, write the keys that changed; return every key they now
    carry."""
    keys = thread_keys([row[:5] for row in rows])
    for pk, *_, current in rows:
        if keys[pk] != current:
            EmailMessage.objects.filter(pk=pk).update(thread_key=keys[pk])
    return set(keys.values())


def matter_threads_update(matter: Matter) -> None:
    """Recompute the thread of every message of ``matter`` (duplicates left out), write the keys that changed and
    mark every thread's inclusive messages again: the whole matter, for a repair; a message just read needs
    only :func:`message_threads_update`."""
    keys = _write_keys(list(_messages(matter.pk).values_list(*_ROW)))
    threads_inclusive_update(matter.pk, keys)


def message_threads_update(record: EmailMessage) -> set[str]:
    """Put the message ``record`` (just read, or read again) in its thread, updating only the threads it touches
    (see the module docstring), and mark those threads' inclusive messages again. Returns the keys of the threads
    now holding the messages touched. One query finds the touched threads, one reads their messages."""
    matter_id = record.exhibit.matter_id
    named = [ref for ref in [*(record.references or []), record.in_reply_to] if ref]
    linked = Q(pk=record.pk)
    if named:
        linked |= Q(message_id__in=named) | Q(in_reply_to__in=named)
        for ref in named:  # References is a JSON list; a text search finds it, thread_keys checks it exactly
            linked |= Q(references__icontains=ref)
    if record.message_id:
        # Another copy carrying the same Message-ID (two collections that differ in body) is the same node
        linked |= (Q(message_id=record.message_id) | Q(in_reply_to=record.message_id)
                   | Q(references__icontains=record.message_id))
    if record.subject_normalised:
        linked |= Q(subject_normalised=record.subject_normalised)
    messages = _messages(matter_id)
    touched = {key for key in messages.filter(linked).values_list("thread_key", flat=True) if key}
    rows = list(messages.filter(Q(pk=record.pk) | Q(thread_key__in=touched)).values_list(*_ROW))
    keys = _write_keys(rows)
    threads_inclusive_update(matter_id, keys)
    return keys


def threads_inclusive_update(matter_id: int, keys: set[str]) -> None:
    """Mark the inclusive messages of each thread of ``keys`` in matter ``matter_id`` again
    (:func:`matters.email.inclusive.inclusive_marks`), writing ``inclusive`` and ``included_in`` where they
    changed."""
    for key in sorted(keys):
        records = list(_messages(matter_id).filter(thread_key=key)
                       .order_by(F("sent_at").asc(nulls_last=True), "id")
                       .values_list("id", "body_text", "body_recorded", "attachment_names", "message_id",
                                    "in_reply_to", "references", "inclusive", "included_in"))
        thread = [ThreadMessage(pk, comparable_text(body), list(names or []), message_id,
                                [ref for ref in [*(references or []), in_reply_to] if ref], recorded)
                  for pk, body, recorded, names, message_id, in_reply_to, references, _, _ in records]
        marks = inclusive_marks(thread)
        for pk, *_, inclusive, included_in in records:
            holder = marks[pk]
            if (inclusive, included_in) != (holder is None, holder):
                EmailMessage.objects.filter(pk=pk).update(inclusive=holder is None, included_in=holder)


def exhibit_thread(exhibit: Exhibit) -> list[EmailMessage]:
    """The messages of ``exhibit``'s conversation in thread order (sent date in UTC, undated last); [] for an
    exhibit that is not a message."""
    record = EmailMessage.objects.filter(exhibit=exhibit).first()
    if record is None or not record.thread_key:
        return []
    return list(EmailMessage.objects.filter(exhibit__matter=exhibit.matter, thread_key=record.thread_key)
                .exclude(exhibit__status=Exhibit.Status.DUPLICATE)
                .select_related("exhibit", "included_in__exhibit")
                .order_by(F("sent_at").asc(nulls_last=True), "id"))
