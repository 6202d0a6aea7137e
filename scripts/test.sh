#!/usr/bin/env bash
# Set up, lint with ruff (pyproject.toml), then run the whole test suite twice at once, one pass per core: on
# PostgreSQL (the tests that reach the database, plus the fault and live-model tests, which run in no other pass)
# and on SQLite (everything else too: the OCR-heavy and browser tests, but not the fault or live-model tests).
# Tests marked slow (a 100,000-page production) run in neither: `pytest -m slow`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
source scripts/services.sh
ensure_redis
ensure_postgres

export PYTHONUNBUFFERED=1
# The lint and both passes always happen, so one failure never hides another; the exit status fails if any did.
status=0
echo "== ruff"
.venv/bin/ruff check . || status=$?

# The passes run side by side (CI has two cores; one after the other they took 52 minutes). Each has its own
# temporary folder and its own Redis database, so the live-progress tests of one never hear the other's groups.
logs=$(mktemp -d /tmp/lawdesk-test-logs.XXXXXX)
redis_base="${REDIS_TEST_URL%/*}"
# --durations: the slowest tests of each pass are printed, so the next cut of CI's time starts from figures.
# Only the tests that reach the database run on PostgreSQL (tests/conftest.py): the rest prove nothing more there.
(DATABASE_URL="$LAWDESK_TEST_PG_URL" LAWDESK_TEST_DATABASE_ONLY=1 REDIS_TEST_URL="$redis_base/14" \
  .venv/bin/python -m pytest -q --durations=15 --basetemp="$logs/tmp-postgresql" \
  -m "not ocr and not browser and not slow" "$@" >"$logs/postgresql.log" 2>&1 && rc=0 || rc=$?
  echo "$rc" >"$logs/postgresql.rc") &

# The fault suite runs once, in the PostgreSQL pass: its database-restart test needs PostgreSQL, and its worker,
# model-server and disk-full tests hold the same on both databases. The live-model tests run there too: they
# take minutes each, and their scripted twins run on both databases.
(REDIS_TEST_URL="$redis_base/15" .venv/bin/python -m pytest -q --durations=15 --basetemp="$logs/tmp-sqlite" \
  -m "not faults and not live and not slow" "$@" >"$logs/sqlite.log" 2>&1 && rc=0 || rc=$?
  echo "$rc" >"$logs/sqlite.rc") &

trap 'kill 0' INT TERM

# Each pass's output is printed whole when it ends, first finished first, so the two never interleave.
report() {
  echo "== $1"
  cat "$logs/$2.log"
  rc=$(cat "$logs/$2.rc" 2>/dev/null || echo 1)
  if [ "$rc" != 0 ]; then status=$rc; fi
}
pending=("PostgreSQL ($LAWDESK_TEST_PG_URL):postgresql" "SQLite:sqlite")
while [ ${#pending[@]} -gt 0 ]; do
  # 127: no pass is left running; one that left no exit status (killed) is reported as failed, never waited on.
  wait -n && gone=0 || gone=$?
  left=()
  for entry in "${pending[@]}"; do
    name=${entry%:*}; key=${entry##*:}
    if [ -f "$logs/$key.rc" ] || [ "$gone" = 127 ]; then report "$name" "$key"; else left+=("$entry"); fi
  done
  pending=("${left[@]}")
done
rm -rf "$logs"
exit $status
