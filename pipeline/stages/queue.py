"""The queue of stage runs waiting for their servers, read from the database and put in the order of
:mod:`pipeline.stages.order`: what a worker with a free slot runs next, what the job page says of a run that
waits ("waiting for the drafter on Board A: 2 ahead"), and each server's slots and queue for the topology page."""

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from ..job_models import ServerSlot, StageRun, StageStatus
from ..models import ModelServer, RoleAssignment
from .admission import server_slots, slots_busy
from .order import Waiting, in_queue_order, is_aged

# Seconds after its submission past which a job goes ahead of newer work (pipeline.stages.order, rule 2).
AGING_S: float = settings.LAWDESK_QUEUE_AGING_S
# Seconds between two looks at the queue by a worker that found no slot free for any waiting run.
POLL_S: float = settings.LAWDESK_QUEUE_POLL_S
WAITING = [StageStatus.QUEUED, StageStatus.WAITING_FOR_SERVER]


def server_board(server: ModelServer) -> str:
    """The board (or boards) of ``server``'s pinned GPUs, "CPU (embedded)" for the embedded server, else ""."""
    boards = sorted({board.name for gpu in server.gpus.all() for board in gpu.boards.all()})
    if boards:
        return ", ".join(boards)
    return "CPU (embedded)" if server.embedded else ""


def role_servers() -> dict[str, ModelServer]:
    """The enabled server holding each role, by role. A role held by no server, or by a disabled one, is absent:
    its stage fails when it runs and needs no slot."""
    return {a.role: a.server for a in RoleAssignment.objects.select_related("server").filter(server__enabled=True)}


def _entry(run: StageRun) -> Waiting:
    job = run.job
    return Waiting(submitted_at=job.created_at, job=job.pk, due_at=job.due_at, front_at=job.front_at,
                   step=run.order, ref=run.pk)


def waiting_in_order(*, ready_only: bool = True, now=None) -> list[StageRun]:
    """The stage runs waiting for a worker, first to last. ``ready_only`` leaves out runs waiting out a backoff
    for a server that was down (``retry_at`` still ahead), which are not to be tried yet."""
    now = now or timezone.now()
    # Only what the order needs: a waiting run's own record is small, its job's instructions need not be.
    runs = StageRun.objects.filter(status__in=WAITING, job__cancel_requested=False).select_related("job").only(
        "pk", "job_id", "stage", "role", "order", "attempt", "status", "retry_at", "job__id", "job__kind",
        "job__created_at", "job__due_at", "job__front_at")
    if ready_only:
        runs = runs.filter(Q(retry_at__isnull=True) | Q(retry_at__lte=now))
    by_id = {run.pk: run for run in runs}
    ordered = in_queue_order((_entry(run) for run in by_id.values()), now=now, aging_s=AGING_S)
    return [by_id[entry.ref] for entry in ordered]


@dataclass(frozen=True)
class QueuePlace:
    """Where a waiting run stands: its ``role``, the ``server`` holding it and the server's ``board``; ``ahead``:
    runs for that server ahead of it in the queue; ``busy`` of ``slots``: the server's slots held now."""

    role: str
    server: str
    board: str
    ahead: int
    busy: int
    slots: int

    def __str__(self) -> str:
        where = f" on {self.board}" if self.board else f" ({self.server})"
        if self.ahead:
            return f"waiting for the {self.role}{where}: {self.ahead} ahead"
        if self.busy >= self.slots:
            return (f"waiting for the {self.role}{where}: next, when one of its {self.slots} "
                    f"slot{'s' if self.slots != 1 else ''} is free")
        return f"waiting for the {self.role}{where}: next"


def queue_place(run: StageRun) -> QueuePlace | None:
    """Where ``run`` stands in its server's queue, or None when it is not waiting or needs no server (verify)."""
    if run.status not in WAITING or not run.role:
        return None
    servers = role_servers()
    server = servers.get(run.role)
    if server is None:
        return None
    same_server = {role for role, held_by in servers.items() if held_by.pk == server.pk}
    ahead = 0
    for waiting in waiting_in_order(ready_only=False):
        if waiting.pk == run.pk:
            break
        ahead += waiting.role in same_server
    return QueuePlace(role=run.role, server=server.name, board=server_board(server), ahead=ahead,
                      busy=slots_busy(server), slots=server_slots(server))


@dataclass(frozen=True)
class QueueEntry:
    """A stage run on a server's slot or in its queue, as the topology page shows it: the ``job`` (id), its
    ``kind`` ("" before the router classified it), the ``stage`` and ``role``, the job's ``due_at`` (None: no due
    time). On a slot: ``slot`` (from 0) and ``since`` (when the slot was claimed). Waiting: ``ahead`` (runs for
    the same server ahead of it, as :func:`queue_place` counts them), ``front`` (moved to the front), ``aged``
    (past the aging limit, so ahead of newer work) and ``retry_at`` (a backoff after the server was down)."""

    job: int
    kind: str
    stage: str
    role: str
    due_at: datetime | None
    slot: int | None = None
    since: datetime | None = None
    ahead: int = 0
    front: bool = False
    aged: bool = False
    retry_at: datetime | None = None


@dataclass
class ServerQueue:
    """One server's admission now: ``slots`` it admits at once (:func:`server_slots`), ``in_flight`` the live
    claims of LawDesk's stage attempts on them (by slot, any host's workers), ``waiting`` the runs for it in queue
    order."""

    slots: int
    in_flight: list[QueueEntry] = field(default_factory=list)
    waiting: list[QueueEntry] = field(default_factory=list)


def server_queues(*, now=None) -> dict[int, ServerQueue]:
    """Every enabled server's :class:`ServerQueue`, by server id. A waiting run goes to the server holding its
    role now (a run of a role no enabled server holds, or of the verifier, which needs none, is in no queue)."""
    now = now or timezone.now()
    servers = role_servers()
    queues = {server.pk: ServerQueue(slots=server_slots(server))
              for server in ModelServer.objects.filter(enabled=True)}
    claims = (ServerSlot.objects.filter(server_id__in=queues, run__isnull=False, lease_expires_at__gte=now)
              .select_related("run__job").order_by("slot"))
    for claim in claims:
        run = claim.run
        queues[claim.server_id].in_flight.append(QueueEntry(
            job=run.job_id, kind=run.job.kind, stage=run.stage, role=run.role, due_at=run.job.due_at,
            slot=claim.slot, since=claim.claimed_at))
    for run in waiting_in_order(ready_only=False, now=now):
        server = servers.get(run.role) if run.role else None
        if server is None or server.pk not in queues:
            continue
        waiting = queues[server.pk].waiting
        waiting.append(QueueEntry(
            job=run.job_id, kind=run.job.kind, stage=run.stage, role=run.role, due_at=run.job.due_at,
            ahead=len(waiting), front=run.job.front_at is not None,
            aged=run.job.front_at is None and is_aged(_entry(run), now=now, aging_s=AGING_S),
            retry_at=run.retry_at if run.retry_at and run.retry_at > now else None))
    return queues
