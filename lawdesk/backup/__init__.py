"""Backup and restore of a LawDesk installation: the database and the data directory's files, as snapshots in a
content-addressed destination (docs/backup.md).

- :func:`backup_create` writes one snapshot (``manage.py backup DEST``);
- :func:`backup_restore` restores one into an empty data directory and database, verifying every hash, the row
  counts and every audit chain (``manage.py restore SRC [--snapshot NAME]``);
- :class:`BackupError` is what either raises when it cannot go on, with a message naming the file;
- :mod:`lawdesk.backup.paths` checks every path a backup names before a restore reads or writes it.
"""

from .restore import RestoreResult, backup_restore
from .snapshot import BackupResult, backup_create
from .store import BackupError, snapshot_names

__all__ = ["BackupError", "BackupResult", "RestoreResult", "backup_create", "backup_restore", "snapshot_names"]
