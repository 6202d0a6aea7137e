"""Admission to a model server: LawDesk sends a server at most its parallel slots of stage requests at once,
counted across every worker on every host through the database.

llama-server divides its context among ``--parallel`` slots (it reports them as ``/props`` ``total_slots`` and
one ``/slots`` entry each) and queues anything beyond them out of our sight; Ollama does the same beyond
``OLLAMA_NUM_PARALLEL``. Each slot is a :class:`~pipeline.job_models.ServerSlot` row, claimed by one stage attempt
with a conditional UPDATE of a free or expired row: of two workers racing for one row, the database lets one
update match (SQLite serializes writers; PostgreSQL re-reads the row the first writer committed and finds it
taken). The claim carries a lease like the attempt's own (``LAWDESK_STAGE_LEASE_S``, renewed by the attempt's
heartbeat), so a worker that dies frees its slot when the lease runs out. Claims must be made outside a
transaction, so the row is committed (and visible to other workers) when the claim returns.
"""

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from ..job_models import ServerSlot
from ..models import ModelServer, ProbeResult
from ..topology.probe import SLOTS_FROM_SERVER
from .scheduling import LEASE_S


def server_slots(server: ModelServer) -> int:
    """How many requests ``server`` takes at once: its record's parallel slots (llama-server ``--parallel``,
    Ollama ``OLLAMA_NUM_PARALLEL``), at least 1, and never more than the slots the server itself listed at its
    latest probe that read them (llama.cpp ``/slots``): a record that says 4 of a server started with
    ``--parallel 1`` would otherwise let three requests wait inside the server, out of the queue's sight."""
    recorded = max(1, server.parallel_slots or 1)
    latest = (ProbeResult.objects.filter(server=server).exclude(slots={}).order_by("-at")
              .values_list("slots", flat=True).first())
    if latest and latest.get("source") == SLOTS_FROM_SERVER and latest.get("busy"):
        return max(1, min(recorded, len(latest["busy"])))
    return recorded


def _free(now) -> Q:
    return Q(run__isnull=True) | Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)


def slot_claim(*, server: ModelServer, run_id: int, owner: str) -> int | None:
    """Claim a free slot of ``server`` for stage attempt ``run_id`` under ``owner``'s lease; return the slot's
    number, or None when every slot is held by a live claim. Slots beyond the server's current count (after it
    was lowered) are never claimed; claims already made on them end with their attempts."""
    count = server_slots(server)
    if ServerSlot.objects.filter(server=server, slot__lt=count).count() < count:
        # The first claim on a server, or its slots were raised: the missing rows (two workers may race here).
        ServerSlot.objects.bulk_create([ServerSlot(server=server, slot=n) for n in range(count)],
                                       ignore_conflicts=True)
    now = timezone.now()
    candidates = ServerSlot.objects.filter(_free(now), server=server, slot__lt=count).order_by("slot")
    for slot_id, number in candidates.values_list("pk", "slot"):
        if ServerSlot.objects.filter(_free(now), pk=slot_id).update(
                run_id=run_id, lease_owner=owner, claimed_at=now,
                lease_expires_at=now + timedelta(seconds=LEASE_S)):
            return number
    return None


def slot_renew(*, run_id: int, owner: str) -> int:
    """Push the lease of ``owner``'s claim for ``run_id`` forward by a lease; returns the rows renewed (0 when the
    claim expired and another attempt took the slot)."""
    return ServerSlot.objects.filter(run_id=run_id, lease_owner=owner).update(
        lease_expires_at=timezone.now() + timedelta(seconds=LEASE_S))


def slot_release(*, run_id: int, owner: str) -> None:
    """Free the slot ``owner`` holds for ``run_id`` (nothing when it holds none)."""
    ServerSlot.objects.filter(run_id=run_id, lease_owner=owner).update(
        run=None, lease_owner="", lease_expires_at=None, claimed_at=None)


def slots_busy(server: ModelServer) -> int:
    """How many of ``server``'s slots LawDesk's stage attempts hold now (live claims), on any host."""
    return ServerSlot.objects.filter(server=server, run__isnull=False, lease_expires_at__gte=timezone.now()).count()
