"""The queue of stage runs waiting for their servers, read from the database and put in the order of
:mod:`pipeline.stages.order`: what a worker with a free slot runs next, and what the job page says of a run that
waits ("waiting for the drafter on Board A: 2 ahead")."""

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from ..job_models import StageRun, StageStatus
from ..models import ModelServer, RoleAssignment
from .admission import server_slots, slots_busy
from .order import Waiting, in_queue_order

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
        "pk", "job_id", "stage", "role", "order", "attempt", "status", "job__id", "job__created_at", "job__due_at",
        "job__front_at")
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
