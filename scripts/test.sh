#!/usr/bin/env bash
# Set up, then run the whole test suite: once on SQLite (everything, including the OCR-heavy, browser and live-model
# tests) and once on PostgreSQL (everything else, without repeating those).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
source scripts/services.sh
ensure_redis
ensure_postgres

export PYTHONUNBUFFERED=1
# Both runs always happen, so one database's failure never hides the other's; the exit status is the worse one.
status=0
echo "== PostgreSQL ($LAWDESK_TEST_PG_URL)"
DATABASE_URL="$LAWDESK_TEST_PG_URL" .venv/bin/python -m pytest -q -m "not ocr and not browser and not live" "$@" || status=$?
echo "== SQLite"
.venv/bin/python -m pytest -q "$@" || status=$?
exit $status
