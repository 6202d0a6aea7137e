"""Helpers for the backup tests: another installation's ``manage.py``, and the files a backup keeps."""

import os
import subprocess
import sys
from pathlib import Path

from lawdesk.backup.snapshot import TRANSIENT
from tests.support.paths import BASE_DIR

KEPT = ("originals", "quarantine", "derived", "productions", "incoming", "secrets", "secret_key")


def manage(*args: str, data_dir: Path, database_url: str) -> subprocess.CompletedProcess:
    """Run ``manage.py`` as another installation would: its own data directory and database."""
    env = dict(os.environ, LAWDESK_DATA_DIR=str(data_dir), DATABASE_URL=database_url,
               DJANGO_SETTINGS_MODULE="lawdesk.test_settings", LAWDESK_ALLOWED_HOSTS="localhost,testserver")
    env.pop("REDIS_URL", None)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True,
                          text=True, timeout=300)


def kept_files(root: Path) -> dict[str, bytes]:
    """Every file a backup keeps from the data directory ``root``, by relative path."""
    found = {}
    for top in KEPT:
        base = root / top
        paths = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in paths:
            if not (top == "secrets" and TRANSIENT.match(path.name)):
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found
