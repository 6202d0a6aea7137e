"""Where the public test corpus lies: one setting, ``LAWDESK_CORPUS``, read here for the benches and the tests.

The corpus (court filings, scans, odd files; see its ``SOURCES.md``) is kept beside the repository, not in it.
``LAWDESK_CORPUS`` names its folder; a relative value is taken relative to the repository, and the default is
``../shared/corpus``. Benches and tests only ever read it, through copies.
"""

import os
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = "../shared/corpus"


def corpus_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Return the corpus folder as an absolute path (``LAWDESK_CORPUS``, else ``../shared/corpus``, relative to the
    repository). Whether it exists is the caller's to check: a bench and a test say so differently."""
    return (REPO / (environ.get("LAWDESK_CORPUS") or DEFAULT_CORPUS)).resolve()
