"""What it costs an incremental backup to hash again the objects its destination holds, side by side in one run.

Run from the repository root as ``.venv/bin/python bench/backup_store.py [--files N] [--mib M]``.

``N`` files of ``M`` MiB of random bytes (200 of 1 MiB by default, in a temporary folder) stand for a data
directory's originals. Timed, each over the same files:
- first: :meth:`lawdesk.backup.store.ObjectStore.put` of every file into an empty store (hash the file, copy it);
- again, verified: ``put`` of every file into the store that holds them all (hash the file, hash the object
  already there, copy nothing): what every incremental backup does now, so a damaged object is copied again;
- again, trusted: the same with the object's hash skipped (hash the file, see that the object exists): what an
  incremental backup did before, trusting whatever the destination held.
Printed: seconds and MiB/s of each, and verified / trusted. The files are written just before they are read,
so they come from the page cache, as a backup's recently written originals do; a cold disk makes both ``again``
figures slower and their ratio nearer 2 (two reads of the same bytes against one).
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# lawdesk.backup's package loads the restore, which loads the models: settings first, with a data directory of
# the bench's own (the settings make a signing key there).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")
os.environ["LAWDESK_DATA_DIR"] = tempfile.mkdtemp(prefix="bench-backup-settings-")
django.setup()

from lawdesk.backup.store import ObjectStore  # noqa: E402  (after django.setup(), above)


class TrustingStore(ObjectStore):
    """The store as it was: an object that exists is taken to be intact."""

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()


def put_all(store: ObjectStore, files: list[Path]) -> float:
    started = time.perf_counter()
    for path in files:
        store.put(path)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--mib", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-backup-") as folder:
        root = Path(folder)
        source = root / "originals"
        source.mkdir()
        files = []
        for index in range(options.files):
            path = source / f"{index:05d}"
            path.write_bytes(os.urandom(options.mib * 1024 * 1024))
            files.append(path)
        total_mib = options.files * options.mib
        first = put_all(ObjectStore(root / "objects"), files)
        verified = put_all(ObjectStore(root / "objects"), files)
        trusted = put_all(TrustingStore(root / "objects"), files)
    print(f"{options.files} files of {options.mib} MiB ({total_mib} MiB), load average {os.getloadavg()[0]:.2f}")
    print(f"{'pass':<20}{'seconds':>10}{'MiB/s':>10}")
    for name, seconds in (("first (copy)", first), ("again, verified", verified), ("again, trusted", trusted)):
        print(f"{name:<20}{seconds:>10.2f}{total_mib / seconds:>10.0f}")
    print(f"verified / trusted: {verified / trusted:.2f}")
    shutil.rmtree(os.environ["LAWDESK_DATA_DIR"], ignore_errors=True)


if __name__ == "__main__":
    main()
