"""Run :mod:`matters.exhibits.ingest.child` jobs in child processes with an address-space limit and a wall-clock limit.

Children come from this process's :class:`matters.exhibits.ingest.pool.IngestPool`: forked from a multiprocessing
fork server that has imported the child module (PyMuPDF 2 and its dependencies take about half a second to
import), and each kept for many files in turn, so a file starts without a fork. Whatever a file does to its child
(exhausting memory, hanging, crashing the parser), the worker sees an ``error`` event with a reason and goes on
with the next file, which a fresh child reads.
"""

from collections.abc import Iterator

from .pool import shared_pool
from .spec import Spec


def run_child(spec: Spec, *, memory_mb: int, timeout_s: int, job: str = "ingest") -> Iterator[dict]:
    """Yield the events of ``job`` ("ingest", "previews", "assemble" or "stamps") on ``spec``; the last one is a
    final event (``done``, ``previews``, ``assembled``, ``stamps`` or ``error``).

    Limits: ``memory_mb`` of address space for the child and each program it starts (RLIMIT_AS), ``timeout_s``
    seconds of wall clock for the whole job. On either, the child's process group is killed and the child
    replaced; see :mod:`matters.exhibits.ingest.pool`. The child runs in the readers' sandbox
    (:mod:`matters.exhibits.ingest.reader_sandbox`) unless ``spec.readers_unsandboxed``.
    """
    return shared_pool().run(spec, memory_mb=memory_mb, timeout_s=timeout_s, job=job,
                             sandboxed=not spec.readers_unsandboxed)
