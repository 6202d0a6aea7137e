#!/usr/bin/env bash
# Set up, then run the whole test suite: once on SQLite (everything, including OCR-heavy and browser tests) and
# once on PostgreSQL (everything that touches the database, without repeating the OCR-heavy and browser tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
source scripts/services.sh
ensure_redis
ensure_postgres

export PYTHONUNBUFFERED=1
echo "== SQLite"
.venv/bin/python -m pytest -q "$@"
echo "== PostgreSQL ($LAWDESK_TEST_PG_URL)"
DATABASE_URL="$LAWDESK_TEST_PG_URL" .venv/bin/python -m pytest -q -m "not ocr and not browser" "$@"
