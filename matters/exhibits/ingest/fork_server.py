"""Imported by the ingest pool's fork server as it starts (multiprocessing's preload, :func:`.pool._context`) and
nowhere else: it makes the fork server undumpable (``PR_SET_DUMPABLE`` 0).

The readers it forks run as its user in the sandbox; a file that took one over could otherwise read the server's
memory, environment and descriptors through ``/proc`` or ptrace, as each child's own ``make_undumpable`` keeps it
from doing to the other children. A child forked from it starts undumpable too (the flag survives ``fork``).
Django-free.
"""

from .reader_sandbox import make_undumpable

make_undumpable()
