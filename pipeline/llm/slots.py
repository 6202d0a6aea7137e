"""Never send a server more simultaneous requests than its parallel slots; later requests wait in arrival order.

llama-server divides its context among ``--parallel`` slots and queues anything beyond them out of our sight;
Ollama does the same with ``OLLAMA_NUM_PARALLEL``. Waiting here keeps the order ours and the wait visible.
This bounds the requests of one process, whatever sends them (embeddings, reranking, probes, stages). Stage
requests are also admitted across processes and hosts, in the queue's deadline order, by the slot claims of
:mod:`pipeline.stages.admission`, which hold a slot before this gate is reached; this module stays free of the
database, like the rest of the client.
"""

import threading
from collections import deque
from contextlib import contextmanager

from .errors import Cancelled

_registry: dict[str, "FairSlots"] = {}
_registry_lock = threading.Lock()


class FairSlots:
    """A counting semaphore that admits waiters first come, first served."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self.busy = 0
        self._queue: deque[object] = deque()
        self._condition = threading.Condition()

    @contextmanager
    def hold(self, cancel: threading.Event | None = None):
        """Hold one slot for the ``with`` block. Raises Cancelled if ``cancel`` is set while waiting."""
        ticket = object()
        with self._condition:
            self._queue.append(ticket)
            try:
                while self._queue[0] is not ticket or self.busy >= self.slots:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled("Cancelled while waiting for a free slot on the model server.")
                    self._condition.wait(timeout=0.1)
            finally:
                self._queue.remove(ticket)
                self._condition.notify_all()
            self.busy += 1
        try:
            yield
        finally:
            with self._condition:
                self.busy -= 1
                self._condition.notify_all()


def slots_for(base_url: str, slots: int) -> FairSlots:
    """Return the process-wide slot gate of the server at ``base_url`` (its size follows the latest config)."""
    with _registry_lock:
        gate = _registry.get(base_url)
        if gate is None:
            gate = _registry[base_url] = FairSlots(slots)
        gate.slots = max(1, slots)
        return gate
