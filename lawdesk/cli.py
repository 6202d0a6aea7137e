"""Helpers shared by the management commands."""

import functools
import os
import sys
from collections.abc import Callable


def quiet_broken_pipe(handle: Callable) -> Callable:
    """Wrap a command's ``handle`` so that a reader closing the pipe early (``| head``) ends the command quietly.

    Python's own advice (the ``signal`` module's documentation, "Note on SIGPIPE"): on BrokenPipeError, point
    stdout at /dev/null so the interpreter's final flush cannot raise again, then exit. The exit status is 141
    (128 + SIGPIPE), what a shell reports for a program that stopped because its reader went away.
    """

    @functools.wraps(handle)
    def wrapper(*args, **kwargs):
        try:
            result = handle(*args, **kwargs)
            sys.stdout.flush()
            return result
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(141)

    return wrapper
