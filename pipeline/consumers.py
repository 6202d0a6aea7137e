"""WebSocket of a job page: stage states and the streamed text as it is generated.

The worker is another process (maybe another host). Without a channel layer this consumer reads the persisted
state every ``POLL_S`` (the worker saves streamed text every ~100 ms) and sends what is new; with one
(``REDIS_URL``) the worker's ``stage.text`` notices carry each new piece at once and ``job.changed`` notices
trigger a read. Messages are htmx out-of-band swaps: the stages table and the actions block (cancel, retry,
continue) whenever they change, the stream panes when a stage begins, the new text as it comes. The actions'
forms carry the browser's own CSRF cookie as their token (Django accepts the unmasked secret), as no request is
at hand to mint a masked one. Only members of the job's matter may connect, and an open
socket closes within seconds of logout, session expiry or removal from the matter (:mod:`matters.socket_access`).
"""

import asyncio
import contextlib

from channels.db import database_sync_to_async
from django.conf import settings
from django.template.loader import render_to_string
from django.utils.html import escape

from matters.selectors import matters_for_user
from matters.socket_access import AccessCheckedConsumer

from .job_models import Job, StageRun
from .stages.control import job_actions
from .stages.live import job_group
from .views_jobs import stage_rows

POLL_S = 0.2
POLL_WITH_LAYER_S = 2.0


class JobConsumer(AccessCheckedConsumer):
    async def connect(self) -> None:
        self.job_id = int(self.scope["url_route"]["kwargs"]["job_id"])
        self.job = await database_sync_to_async(self._member_job)()
        if self.job is None:
            await self.close(code=4404)
            return
        self.sent: dict[int, int] = {}
        self.rows_state = None
        self.actions = self.statuses = None
        self.group = job_group(self.job_id)
        if self.channel_layer is not None:
            await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._refresh()
        interval = POLL_WITH_LAYER_S if self.channel_layer is not None else POLL_S
        self.poller = asyncio.create_task(self._poll(interval))
        await self.start_access_checks()

    async def disconnect(self, code: int) -> None:
        await self.stop_access_checks()
        if getattr(self, "poller", None) is not None:
            self.poller.cancel()
            # Wait for the poller to end here, so its cancellation never surfaces in the connection's own task.
            with contextlib.suppress(asyncio.CancelledError):
                await self.poller
        if getattr(self, "group", None) and self.channel_layer is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    def still_member(self) -> bool:
        return self._member_job() is not None

    def _member_job(self) -> Job | None:
        return Job.objects.filter(pk=self.job_id, matter__in=matters_for_user(self.scope["user"])).first()

    async def _poll(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self._refresh()

    async def job_changed(self, event: dict) -> None:
        await self._refresh()

    async def stage_text(self, event: dict) -> None:
        run_id, offset, delta = event["run"], event["offset"], event["delta"]
        sent = self.sent.get(run_id)
        if sent is None or offset > sent:
            await self._refresh()  # a gap: read the persisted text instead
            return
        fresh = delta[sent - offset:]
        if fresh:
            self.sent[run_id] = offset + len(delta)
            await self.send(text_data=_append(run_id, fresh))

    def _changes(self) -> list[str]:
        job = Job.objects.select_related("matter", "draft").get(pk=self.job_id)
        rows = stage_rows(job)
        parts = []
        # A waiting stage's place moves as other jobs' stages start ("2 ahead", then "1 ahead").
        state = [(r["run"].pk, r["run"].status, r["run"].streamed_pieces, r["live_tok_s"], str(r["place"] or ""))
                 for r in rows]
        if state != self.rows_state:
            self.rows_state = state
            parts.append(render_to_string("pipeline/job.html#stages", {"job": job, "rows": rows, "oob": True}))
        statuses = (job.status, [(r["run"].pk, r["run"].status) for r in rows])
        actions = job_actions(job, self.scope["user"]) if statuses != self.statuses else self.actions
        self.statuses = statuses
        if actions != self.actions:
            # A stage ended (or began): what the page offers changes with it ("Cancel" goes, "Run the stage
            # again" comes). Sent only then, so a reason being typed into a form of the block is not wiped.
            self.actions = actions
            parts.append(render_to_string("pipeline/job.html#actions", {
                "job": job, "actions": actions, "oob": True, "csrf_token": self.scope.get("cookies", {}).get(
                    settings.CSRF_COOKIE_NAME, "")}))
        run_ids = [row["run"].pk for row in rows]
        if run_ids != getattr(self, "run_ids", None):
            # A new stage (or attempt) has begun: send the stream panes again, with their text so far.
            self.run_ids = run_ids
            parts.append(render_to_string("pipeline/job.html#streams", {"job": job, "rows": rows, "oob": True}))
            self.sent = {row["run"].pk: len(row["run"].output) for row in rows}
            return parts
        for row in rows:
            run: StageRun = row["run"]
            sent = self.sent.get(run.pk)
            if sent is None or len(run.output) < sent:
                parts.append(f'<pre id="stream-{run.pk}" class="stream" hx-swap-oob="true">'
                             f"{escape(run.output)}</pre>")
                self.sent[run.pk] = len(run.output)
            elif len(run.output) > sent:
                parts.append(_append(run.pk, run.output[sent:]))
                self.sent[run.pk] = len(run.output)
        return parts

    async def _refresh(self) -> None:
        parts = await database_sync_to_async(self._changes)()
        if parts:
            await self.send(text_data="".join(parts))


def _append(run_id: int, text: str) -> str:
    return f'<pre id="stream-{run_id}" hx-swap-oob="beforeend">{escape(text)}</pre>'
