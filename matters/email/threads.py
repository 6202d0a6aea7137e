"""Threads: a matter's messages grouped into conversations.

Messages are linked by their own Message-ID and the ids their References and In-Reply-To name (RFC 5322 section
3.6.4); a message whose headers name no message of the matter (a thread's first message, or a reply from a
program that writes neither header) joins the messages of the same normalised subject
(:func:`matters.email.parse.normalised_subject`), as review platforms fall back to. Each conversation's messages
share ``EmailMessage.thread_key``; thread order is the sent date in UTC, undated messages last.
"""

from django.db.models import F

from matters.models import EmailMessage, Exhibit, Matter


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


def matter_threads_update(matter: Matter) -> None:
    """Recompute the thread of every message of ``matter`` (duplicates left out) and write the keys that
    changed."""
    records = (EmailMessage.objects.filter(exhibit__matter=matter).exclude(exhibit__status=Exhibit.Status.DUPLICATE)
               .values_list("id", "message_id", "in_reply_to", "references", "subject_normalised", "thread_key"))
    rows = list(records)
    keys = thread_keys([row[:5] for row in rows])
    for pk, *_, current in rows:
        if keys[pk] != current:
            EmailMessage.objects.filter(pk=pk).update(thread_key=keys[pk])


def exhibit_thread(exhibit: Exhibit) -> list[EmailMessage]:
    """The messages of ``exhibit``'s conversation in thread order (sent date in UTC, undated last); [] for an
    exhibit that is not a message."""
    record = EmailMessage.objects.filter(exhibit=exhibit).first()
    if record is None or not record.thread_key:
        return []
    return list(EmailMessage.objects.filter(exhibit__matter=exhibit.matter, thread_key=record.thread_key)
                .exclude(exhibit__status=Exhibit.Status.DUPLICATE).select_related("exhibit")
                .order_by(F("sent_at").asc(nulls_last=True), "id"))
