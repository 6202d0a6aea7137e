"""Settings for the test suite: a private data directory, a file-based SQLite test database (so a worker or
server started as another process sees the same data), and fast password hashing."""

import atexit
import os
import shutil
import tempfile

if "LAWDESK_DATA_DIR" not in os.environ:
    # Made only by the process that starts the tests (a worker or server they start inherits the variable), and
    # removed when it exits: each test run and each process it started used to leave a directory in /tmp.
    os.environ["LAWDESK_DATA_DIR"] = tempfile.mkdtemp(prefix="lawdesk-test-")
    atexit.register(shutil.rmtree, os.environ["LAWDESK_DATA_DIR"], ignore_errors=True)
os.environ.setdefault("LAWDESK_TEST_SQLITE", os.path.join(os.environ["LAWDESK_DATA_DIR"], "test.sqlite3"))
# Most tests run inside a transaction that the lease keeper's own database connection cannot see: its first
# renewal would find no row and call the lease lost, and the exhibit would stay "processing". A lease longer than
# any test keeps the keeper quiet; the fault tests, which test leases, give their workers short ones.
os.environ.setdefault("LAWDESK_DOCUMENT_LEASE_S", "600")

from .settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
