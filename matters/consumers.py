"""WebSocket that keeps a matter page's exhibit list current while files are processed.

The worker is another process (maybe another host), so this consumer never relies on in-process state. It reads
the persisted progress of the matter's exhibits and sends each changed row as an htmx out-of-band swap. With a
channel layer (``REDIS_URL``), the worker's ``exhibit.changed`` notices make it read at once; without one, it reads
every ``POLL_S`` seconds. A read first asks only for the newest ``updated_at`` of the matter's files (one step down
an index) and reads their rows only when it moved, when it is younger than ``SETTLE_S``, or every
``FULL_READ_S``: an open page of a matter where nothing is processed costs one small query a poll, however many
files the matter has. Only members of the matter may connect: anyone else's handshake is refused (HTTP 403),
and an open socket closes within seconds of logout, session expiry or removal from the matter
(:mod:`matters.socket_access`).
"""

import asyncio
import time
from datetime import timedelta

from channels.db import database_sync_to_async
from django.db.models import Max
from django.template.loader import render_to_string
from django.utils import timezone

from .exhibits.listing import MARKED_GENERATED, matter_exhibit_counts
from .exhibits.rows import for_rows
from .models import Matter
from .progress import matter_group
from .selectors import exhibits_of_matter, matters_for_user
from .socket_access import AccessCheckedConsumer

POLL_S = 0.5
POLL_WITH_LAYER_S = 5.0
# A change is stamped with the time its statement ran, not the time it was committed: a transaction that commits
# after a later one could show a newest updated_at already seen. Rows are read on every poll until the newest
# change is this old, longer than any worker transaction on an exhibit row takes.
SETTLE_S = 5.0
# Rows are read at least this often anyway, for a write that changed a row without moving its updated_at.
FULL_READ_S = 30.0


class MatterProgressConsumer(AccessCheckedConsumer):
    # The newest updated_at of the matter's files at the last read of their rows, and when (time.monotonic()).
    newest_seen = None
    rows_read_at = float("-inf")

    async def connect(self) -> None:
        self.matter_id = int(self.scope["url_route"]["kwargs"]["matter_id"])
        self.matter = await database_sync_to_async(self._member_matter)()
        if self.matter is None:
            await self.close(code=4404)
            return
        self.seen: dict[int, tuple] = {}
        self.group = matter_group(self.matter_id)
        if self.channel_layer is not None:
            await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._send_changes(initial=True)
        interval = POLL_WITH_LAYER_S if self.channel_layer is not None else POLL_S
        self.poller = asyncio.create_task(self._poll(interval))
        await self.start_access_checks()

    async def disconnect(self, code: int) -> None:
        await self.stop_access_checks()
        if getattr(self, "poller", None) is not None:
            self.poller.cancel()
        if getattr(self, "group", None) and self.channel_layer is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def exhibit_changed(self, event: dict) -> None:
        await self._send_changes()

    async def _poll(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self._send_changes()

    def still_member(self) -> bool:
        return matters_for_user(self.scope["user"]).filter(pk=self.matter_id).exists()

    def _member_matter(self):
        return matters_for_user(self.scope["user"]).filter(pk=self.matter_id).first()

    def _quiet(self) -> bool:
        """True when no file of the matter can have changed since the last read of the rows: one query."""
        newest = self.matter.exhibits.order_by().aggregate(newest=Max("updated_at"))["newest"]
        settled = newest is None or timezone.now() - newest > timedelta(seconds=SETTLE_S)
        if newest == self.newest_seen and settled and time.monotonic() - self.rows_read_at < FULL_READ_S:
            return True
        self.newest_seen, self.rows_read_at = newest, time.monotonic()
        return False

    def _changed_rows(self, initial: bool) -> list[str]:
        if self._quiet() and not initial:
            return []
        # Each poll reads only the few columns a row shows, as tuples: reading and building every exhibit of a
        # matter of 6,000 files took about 220 ms, twice a second for every open matter page.
        states = exhibit_row_states(self.matter)
        changed = {pk: self.seen.get(pk) for pk, state in states.items() if self.seen.get(pk) != state}
        self.seen.update((pk, states[pk]) for pk in changed)
        if initial or not changed:
            return []
        rows = []
        for exhibit in for_rows(exhibits_of_matter(self.matter).filter(pk__in=list(changed))):
            previous = changed[exhibit.pk]
            row = render_to_string(
                "matters/detail.html#exhibit-row",
                {"exhibit": exhibit, "matter": self.matter, "oob": "true" if previous else ""},
            )
            # A row this page has never shown (uploaded from another tab) is appended to the table.
            rows.append(row if previous else f'<tbody hx-swap-oob="beforeend:#exhibit-rows">{row}</tbody>')
        # The counts above the list change with the rows.
        rows.append(render_to_string("matters/detail.html#exhibit-counts",
                                     {"counts": matter_exhibit_counts(self.matter), "oob": "true"}))
        return rows

    async def _send_changes(self, initial: bool = False) -> None:
        rows = await database_sync_to_async(self._changed_rows)(initial)
        if rows:
            await self.send(text_data="".join(rows))


def exhibit_row_states(matter: Matter) -> dict[int, tuple]:
    """Every exhibit of ``matter`` by id, with what its row in the list shows: status, progress, page count,
    label, title, whether it is marked generated and, for a message, whether it is inclusive in its thread. A
    row is sent again when this changes."""
    rows = matter.exhibits.annotate(generated=MARKED_GENERATED).values_list(
        "id", "status", "progress_page", "page_count", "label", "title", "generated", "message__inclusive",
        "message__included_in")
    return {row[0]: row[1:] for row in rows}
