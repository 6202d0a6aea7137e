#!/usr/bin/env bash
# Set up, lint with ruff (pyproject.toml), then run the whole test suite: once on SQLite (everything, including the
# OCR-heavy, browser and live-model tests, but not the fault tests) and once on PostgreSQL (everything else, the
# fault tests included). Tests marked slow (a 100,000-page production) run in neither: `pytest -m slow`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
source scripts/services.sh
ensure_redis
ensure_postgres

export PYTHONUNBUFFERED=1
# The lint and both runs always happen, so one failure never hides another; the exit status fails if any did.
status=0
echo "== ruff"
.venv/bin/ruff check . || status=$?
echo "== PostgreSQL ($LAWDESK_TEST_PG_URL)"
# --durations: the slowest tests of each pass are printed, so the next cut of CI's time starts from figures.
# Only the tests that reach the database run twice (tests/conftest.py): the rest prove nothing more on a second one.
DATABASE_URL="$LAWDESK_TEST_PG_URL" LAWDESK_TEST_DATABASE_ONLY=1 .venv/bin/python -m pytest -q --durations=15 -m "not ocr and not browser and not live and not slow" "$@" || status=$?
echo "== SQLite"
# The fault suite runs once, in the PostgreSQL pass above: its database-restart test needs PostgreSQL, and its
# worker, model-server and disk-full tests hold the same on both databases.
.venv/bin/python -m pytest -q --durations=15 -m "not faults and not slow" "$@" || status=$?
exit $status
